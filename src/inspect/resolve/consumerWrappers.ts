import { ts } from 'ts-morph';
import type { ConsumerWrapper } from '../detectors/detectorTypes.js';
import { messageDedupe, messageIdentity } from '../detectors/dedupeEvidence.js';
import { isFunctionLike, unwrap } from '../parse/astHelpers.js';
import { parseSource } from '../parse/parseSource.js';
import type { ConsumerFinding, Finding } from '../types.js';
import type { FileRecord, ProjectRecords } from './projectRecords.js';
import { resolveBinding, resolveImport } from './resolveModules.js';

export interface WrappedConsumers {
  /** Wrapper findings whose callers were found: each caller is a consumer of its own. */
  replaced: Set<Finding>;
  added: ConsumerFinding[];
}

/** What matching a wrapper's callers needs of a file; inspect builds it from its records, audit from its parses. */
export interface CallerFile {
  rel: string;
  text: string;
  tree(): ts.SourceFile;
  /** The local names under which the file imports `name` defined in `file` (`KafkaService`, or an alias). */
  importsOf(file: string, name: string): Set<string>;
  /** A string constant of the file (`const TOPIC = 'orders'`), or the name of an imported one. */
  constant(name: string): string | undefined;
}

/**
 * A project that wraps its broker client (`kafkaService.subscribe('order.created', 'payments', async (p) => …)`)
 * has one consumer per call of the wrapper, not one inside it: the topic and what the consumer does are at the
 * call. Each call becomes a consumer finding at its own line, read from the caller's text (the wrapper's own finding
 * stays when no caller is found). A caller is a file that imports the wrapper's function or class, or the wrapper's
 * own file; a method wrapper is matched by its name on any receiver in such a file.
 */
export function expandConsumerWrappers(wrappers: ReadonlyArray<{ rel: string; wrapper: ConsumerWrapper }>, files: readonly CallerFile[]): WrappedConsumers {
  const out: WrappedConsumers = { replaced: new Set(), added: [] };
  for (const { rel, wrapper } of wrappers) {
    const defined = wrapper.className ?? wrapper.name;
    const found: ConsumerFinding[] = [];
    for (const caller of files) {
      if (!caller.text.includes(`${wrapper.name}(`)) continue;
      // Through the class, or through an interface it implements declared in the same file (a port and its adapter).
      const locals = caller.rel === rel ? new Set([defined]) : new Set([defined, ...(wrapper.implementing ?? [])].flatMap((name) => [...caller.importsOf(rel, name)]));
      if (locals.size > 0) found.push(...callsOf(caller, wrapper, locals, caller.rel === rel));
    }
    if (found.length === 0) continue;
    out.replaced.add(wrapper.finding);
    out.added.push(...found);
  }
  return out;
}

/** inspect's side: wrappers and callers from the records, imports followed through re-exports. */
export function expandRecordedWrappers(records: ProjectRecords): WrappedConsumers {
  const wrappers = [...records.files.values()].flatMap((record) => record.facts.consumerWrappers.map((wrapper) => ({ rel: record.rel, wrapper })));
  if (wrappers.length === 0) return { replaced: new Set(), added: [] };
  const files = [...records.files.values()].map((record): CallerFile => callerOfRecord(records, record));
  return expandConsumerWrappers(wrappers, files);
}

function callerOfRecord(records: ProjectRecords, record: FileRecord): CallerFile {
  return {
    rel: record.rel,
    text: record.text,
    tree: () => parseSource(record.rel, record.text, { parents: false }).sf,
    importsOf: (file, name) => {
      // A module inspection did not record (a barrel of re-exports mentions nothing it looks for) cannot be
      // followed: an import of the same name from a project path is taken for the wrapper then.
      const unrecorded = (module: string) => (module.startsWith('.') || /^[@~#]\//.test(module)) && resolveImport(records, record.rel, module) === undefined;
      return new Set([...record.imports].filter(([local, b]) => resolveBinding(records, record.rel, local) === `${file}::${name}` || (b.imported === name && unrecorded(b.module))).map(([local]) => local));
    },
    constant: (name) => record.stringConsts.get(name) ?? (record.imports.has(name) ? name : undefined),
  };
}

function callsOf(caller: CallerFile, wrapper: ConsumerWrapper, locals: ReadonlySet<string>, own: boolean): ConsumerFinding[] {
  const sf = caller.tree();
  const out: ConsumerFinding[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && calls(node, wrapper, locals, own)) {
      const finding = consumerAt(caller, sf, node, wrapper);
      if (finding) out.push(finding);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** `x.subscribe(…)` for a method wrapper (the file imports its class), `subscribe(…)` / `ns.subscribe(…)` for a function. */
function calls(call: ts.CallExpression, wrapper: ConsumerWrapper, locals: ReadonlySet<string>, own: boolean): boolean {
  const callee = call.expression;
  // In the wrapper's own file only `this.subscribe(…)` is the wrapper: `this.consumer.subscribe({ topic })` is the client's.
  if (wrapper.className !== undefined) return ts.isPropertyAccessExpression(callee) && callee.name.text === wrapper.name && (!own || callee.expression.kind === ts.SyntaxKind.ThisKeyword);
  if (ts.isIdentifier(callee)) return locals.has(callee.text);
  return ts.isPropertyAccessExpression(callee) && callee.name.text === wrapper.name && ts.isIdentifier(callee.expression) && locals.has(callee.expression.text);
}

function consumerAt(caller: CallerFile, sf: ts.SourceFile, call: ts.CallExpression, wrapper: ConsumerWrapper): ConsumerFinding | undefined {
  const handler = call.arguments[wrapper.handlerIndex];
  if (!handler) return undefined;
  const base = wrapper.finding;
  const queue = wrapper.queueIndex === undefined ? undefined : queueName(call.arguments[wrapper.queueIndex], caller, sf);
  const body = unwrap(handler);
  const line = (node: ts.Node) => sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
  // An inline handler is read for evidence; a handler passed by name is the caller's own business, read as written.
  const text = isFunctionLike(body) ? body.getText(sf) : '';
  const { evidence, perAttemptClaim: refused } = text ? messageDedupe([{ file: caller.rel, text, line: line(body) }]) : {};
  const messageId = text ? messageIdentity(text) : undefined;
  const dedupeEvidence = evidence ?? base.dedupeEvidence;
  const perAttemptClaim = dedupeEvidence ? undefined : (refused ?? base.perAttemptClaim);
  return {
    kind: 'consumer',
    id: [base.broker, queue ?? (base.job ? undefined : '?'), base.job].filter(Boolean).join(' '),
    file: caller.rel,
    line: line(call),
    broker: base.broker,
    ...(queue ? { queue } : {}),
    dedupes: dedupeEvidence !== undefined,
    ...(base.job ? { job: base.job } : {}),
    ...(messageId ? { messageId } : {}),
    ...(dedupeEvidence ? { dedupeEvidence } : {}),
    ...(perAttemptClaim ? { perAttemptClaim } : {}),
    via: { name: wrapper.className ? `${wrapper.className}.${wrapper.name}` : wrapper.name, file: base.file, line: base.line },
  };
}

/** A literal, a constant of the caller's file, or the name of a constant defined elsewhere (`Topics.ORDER_CREATED`). */
function queueName(expr: ts.Expression | undefined, caller: CallerFile, sf: ts.SourceFile): string | undefined {
  if (!expr) return undefined;
  const node = unwrap(expr);
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isIdentifier(node)) return caller.constant(node.text);
  return ts.isPropertyAccessExpression(node) ? node.getText(sf) : undefined;
}
