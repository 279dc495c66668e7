import { ts } from 'ts-morph';
import { isFunctionLike } from '../../inspect/parse/astHelpers.js';
import { perAttemptCallKey } from '../conflictKey.js';
import { STRIPE_EVENT_TYPE } from '../stripeWebhooks.js';
import type { ProjectContext, ProjectReport, Rule, SourceContext } from '../types.js';
import { functionLabel, innermostFunction } from '../walk.js';

const WRITE_METHOD = /^(upsert|update|updateMany|updateOne|findOneAndUpdate|findByIdAndUpdate|replaceOne|delete|deleteMany|deleteOne|destroy|onConflictDoUpdate|onDuplicateKeyUpdate)$/;
/** Text a file must contain to hold one of the WRITE_METHOD calls: files without it are not walked. */
const MENTIONS_WRITE = /upsert|update|replaceOne|delete|destroy/i;
/** The app's data layer (Prisma, Supabase, Knex, Drizzle, Mongoose models, TypeORM repositories), not a provider client or a Map. */
const DATA_RECEIVER = /prisma|\bdb\b|supabase|from\(|knex|collection|repo|repository|model|\btx\b|\btrx\b|drizzle|\.(insert|into)\(|^[A-Z]\w*$/;
/** A comparison on the event's or row's time or version, in any ORM's syntax. */
const ORDER_GUARD = /(created|version|updated_?at|updatedAt|event_?(time|created|at)|sequence|last_?event\w*|timestamp)\w*\s*['"]?\s*(<|>|<=|>=)|(<|>|<=|>=)\s*[\w.]*(created|version|updated|timestamp)|\b(lt|lte|gt|gte)\s*[:(][^\n]*(created|version|updated|timestamp)|(created|version|updated\w*|timestamp)\w*['"]?\s*[:,]\s*\{\s*(lt|lte|gt|gte)/i;

/** Stripe does not deliver events in order: an older event applied last overwrites newer state unless the write compares. */
export const blindEventUpsert: Rule = {
  id: 'blind-event-upsert',
  severity: 'warning',
  title: 'Event applied with a blind upsert or delete',
  description:
    'A write driven by a provider event overwrites or deletes the row without comparing the event\'s time or version ' +
    'with what is stored. Events arrive out of order and are redelivered, so an older `customer.subscription.updated` ' +
    'processed after a newer one rolls the subscription back.',
  fix: 'Store the event\'s `created` (or the object\'s version) with the row and make the write conditional: update only WHERE stored_event_created < this event\'s created; or re-fetch the object from the provider and write its current state.',
  docsAnchor: 'finding-blind-event-upsert',
  // Gathered while each file's tree is parsed, so the trees need not stay alive until the project check.
  scanFile(source) {
    summaryOf(source);
  },
  checkProject(ctx) {
    const eventFiles = ctx.sources.filter((s) => /constructEvent/.test(s.text) || STRIPE_EVENT_TYPE.test(s.text));
    // Without an event file nothing is reachable from one and no write can be reported.
    if (eventFiles.length === 0) return [];
    const called = reachableNames(ctx.sources, eventFiles);
    const out: ProjectReport[] = [];
    for (const source of ctx.sources) {
      if (!MENTIONS_WRITE.test(source.text)) continue;
      const isEventFile = eventFiles.includes(source);
      for (const write of summaryOf(source).writes) {
        if (/stripe/i.test(write.receiver) || !DATA_RECEIVER.test(write.receiver.split('\n').pop() ?? write.receiver)) continue;
        const name = write.name;
        if (!isEventFile && !(name && called.has(name))) continue;
        if (isEventFile && !write.fn) continue;
        if (write.fn && ORDER_GUARD.test(source.text.slice(write.fn.start, write.fn.end))) continue;
        out.push({
          file: source.rel,
          line: write.line + 1,
          ...(name ? { enclosingFunction: name } : {}),
          evidence: source.text.split('\n')[write.line]?.trim() ?? '',
          message: `\`${write.method}\` in ${name ?? 'this handler'} applies a provider event without comparing its created time or version: an older redelivered event overwrites newer data.`,
        });
      }
    }
    return out;
  },
};

function calledName(c: ts.CallExpression): string {
  return ts.isIdentifier(c.expression) ? c.expression.text : ts.isPropertyAccessExpression(c.expression) ? c.expression.name.text : '';
}

/** Names of functions an event handler reaches, up to three calls deep, across files (matched by name). */
function reachableNames(sources: ProjectContext['sources'], eventFiles: ProjectContext['sources']): Set<string> {
  const called = new Set(eventFiles.flatMap((s) => summaryOf(s).callNames));
  for (let depth = 0; depth < 3; depth++) {
    const before = called.size;
    for (const source of sources) for (const fn of summaryOf(source).functions) if (called.has(fn.label)) for (const c of fn.callees) called.add(c);
    if (called.size === before) break;
  }
  called.delete('');
  return called;
}

/** What the rule needs from one file, in source order, as plain data (no tree kept alive). */
interface FileSummary {
  /** Every call's name (see calledName). */
  callNames: string[];
  /** Named functions with a body (depth first); `callees` includes calls in nested functions. */
  functions: Array<{ label: string; callees: string[] }>;
  /** Calls of a WRITE_METHOD: the receiver's text, the named function around it and where the method name is. */
  writes: Array<{ receiver: string; method: string; name?: string; fn?: { start: number; end: number }; line: number }>;
}

const summaries = new WeakMap<SourceContext, FileSummary>();

/** One walk per file instead of a walk per named function (nested functions were walked once per enclosing one). */
function summaryOf(source: SourceContext): FileSummary {
  const cached = summaries.get(source);
  if (cached) return cached;
  const sf = source.sf;
  const summary: FileSummary = { callNames: [], functions: [], writes: [] };
  const open: string[][] = [];
  const visit = (node: ts.Node): void => {
    let frame: string[] | undefined;
    if (isFunctionLike(node) && node.body !== undefined) {
      const label = functionLabel(node);
      if (label !== undefined) {
        frame = [];
        summary.functions.push({ label, callees: frame });
        open.push(frame);
      }
    }
    if (ts.isCallExpression(node)) {
      const name = calledName(node);
      summary.callNames.push(name);
      for (const callees of open) callees.push(name);
      // An upsert keyed on a fresh value (`{ id: randomUUID() }` on conflict id) overwrites nothing: each event adds a
      // row (a duplicate, which the dedupe rules report), so there is no order to get wrong.
      if (ts.isPropertyAccessExpression(node.expression) && WRITE_METHOD.test(node.expression.name.text) && !perAttemptCallKey(node)) {
        const fn = topNamedFunction(node);
        const label = functionLabel(fn);
        summary.writes.push({
          receiver: node.expression.expression.getText(sf),
          method: node.expression.name.text,
          ...(label !== undefined ? { name: label } : {}),
          ...(fn ? { fn: { start: fn.getStart(sf), end: fn.end } } : {}),
          line: sf.getLineAndCharacterOfPosition(node.expression.name.getStart(sf)).line,
        });
      }
    }
    ts.forEachChild(node, visit);
    if (frame) open.pop();
  };
  visit(sf);
  summaries.set(source, summary);
  return summary;
}

/** The named function a write sits in, skipping callbacks (`.map(async (x) => …)`). */
function topNamedFunction(node: ts.Node): ts.FunctionLikeDeclaration | undefined {
  let fn = innermostFunction(node);
  while (fn && !functionLabel(fn)) {
    const outer = innermostFunction(fn);
    if (!outer) break;
    fn = outer;
  }
  return fn && isFunctionLike(fn) ? fn : undefined;
}

