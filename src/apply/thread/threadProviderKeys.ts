import type { SourceFile, ts } from 'ts-morph';
import { readInside } from '../../emit/safePath.js';
import { projectDependencies } from '../../findings/auditProject.js';
import { readSchemaFacts } from '../../findings/schemaFacts.js';
import type { SourceContext } from '../../findings/types.js';
import type { PaymentProvider } from '../../inspect/types.js';
import { parseSource as parseTs } from '../../inspect/parse/parseSource.js';
import { importStyleFor, type ProjectImports } from '../importStyle.js';
import { parseSource } from '../sourceFile.js';
import { KEYED_SDKS } from '../transforms/stableParams.js';
import type { Edit, ManualStep, WiringTarget } from '../types.js';
import { editFile, type HandlerEdit, type Op } from './edit.js';
import { locateHandler } from './locate.js';
import { callerSteps, planThreading, settleAmbientCalls, settleSharedCalls, type ThreadPlan } from './plan.js';
import { projectFile, projectFiles } from '../projectScan.js';

/** How the route pass says a provider call it could not see is elsewhere; superseded when this pass keys it. */
export const NOT_IN_HANDLER = [' call is not made inside the route handler'];

export interface ThreadInput {
  root: string;
  framework: string;
  targets: readonly WiringTarget[];
  /** Files earlier passes changed, with their text now: this pass builds on it. */
  current: ReadonlyMap<string, string>;
  scaffoldDir: string;
  imports: ProjectImports;
  scaffoldModules: ReadonlySet<string>;
}

export interface ThreadOutcome {
  /** Changed files and their new text. */
  texts: Map<string, string>;
  edits: Edit[];
  manual: ManualStep[];
  /** Actions whose out-of-handler provider calls now get the key: the route pass's "not inside the handler" step goes. */
  threaded: Set<string>;
  /**
   * For each action, the providers of the out-of-handler calls this pass keyed or gave a step of its own (why it
   * cannot): the route pass's generic step for those providers goes too, so each place is named once.
   */
  placed: Map<string, Set<PaymentProvider>>;
  /** Where this pass's own steps for a provider call are (`file:line`): a recorded finding at the same call is that place again. */
  stepsAt: Set<string>;
  /**
   * Files holding the calls keyed this run or an earlier one, with their text now: the findings recorded there are
   * re-run on it, so a call keyed through the new parameter is no longer listed.
   */
  holders: Map<string, string>;
}

/**
 * Issue #19: a protected handler whose provider call is made in a service it calls (`this.payments.charge(dto)`, an
 * imported `createCharge(input)`), followed the way the findings walk follows it (resolveCallee: injected fields,
 * imports, modules), up to MAX_HOPS functions down. Each function on the way gains a trailing optional
 * `idempotencyContext` parameter that its caller passes on, and the call is keyed from it the way the handler
 * transforms key one (Stripe's request options, Adyen's and PayPal's SDK keying, a raw-HTTP key header), only when the
 * context is given: keyed from the handler's claim when called from the wired route; from any other caller, which
 * passes nothing, exactly what it sent before (no protection across a re-run). NestJS needs none of that threading:
 * its interceptor holds the claim for the route's async call chain, so the function holding the call reads it there
 * with idempotencyOf() (planAmbient), undefined and unkeyed as before outside a protected route.
 * Left manual, with the reason: a function used as a value (its caller could pass anything in that place), an
 * overloaded or overridable one, one outside the project, a provider providers.ts has no helper for. A handler
 * reaching several functions keys each call with its own step among all its places for that provider (plan.ts);
 * left manual where one step cannot be right: a function reached twice, a handler with provider calls of its own or
 * keyed in part already, a call two actions would number differently (settleSharedCalls).
 * A call keyed from a context already (an earlier run for another action, or by hand) is one of the places a newly
 * protected handler reaches: it passes its own claim to the parameter there, when it numbers the call as written.
 * Each place the pass keys or refuses is named once: the route pass's generic step for that provider goes
 * (`placed`), and so does a recorded key finding at a call this pass has its own step for (`stepsAt`).
 */
export async function threadProviderKeys(input: ThreadInput): Promise<ThreadOutcome> {
  const out: ThreadOutcome = { texts: new Map(), edits: [], manual: [], threaded: new Set(), placed: new Map(), stepsAt: new Set(), holders: new Map() };
  const candidates = input.targets.filter((t) => t.trigger === 'http');
  if (candidates.length === 0 || !input.scaffoldModules.has('providers')) return out;
  const { files } = await projectFiles(input.root);
  const sources: SourceContext[] = [];
  const schema = readSchemaFacts(new Map());
  const scaffold = `${input.scaffoldDir.replace(/\/+$/, '')}/`;
  // Route files are parsed once, by ts-morph: the handler located there is the node the chains start from.
  const routeFiles = new Set(candidates.map((t) => t.file));
  const routeTrees = new Map<string, SourceFile>();
  for (const file of files) {
    if (!/\.(m|c)?[jt]sx?$/.test(file.rel) || /\.d\.(m|c)?ts$/.test(file.rel) || file.rel.startsWith(scaffold)) continue;
    const text = input.current.get(file.rel) ?? (await projectFile(input.root, file.rel));
    if (text === undefined) continue;
    const tree = routeFiles.has(file.rel) ? parseSource(file.rel, text, importStyleFor(file.rel, text, input.scaffoldDir, input.imports)) : undefined;
    if (tree) routeTrees.set(file.rel, tree);
    sources.push({ rel: file.rel, text, sf: tree?.compilerNode ?? parseTs(file.rel, text).sf, schema, dependencies: KEYED_SDKS });
  }
  const ctx = { sources, aliases: input.imports.aliases };
  const providers = files.find((file) => file.rel.startsWith(scaffold) && /^providers\.(m|c)?[jt]s$/.test(file.rel.slice(scaffold.length)));
  const providersText = providers ? ((await readInside(input.root, providers.rel).catch(() => undefined)) ?? '') : '';
  const exported = new Set([...providersText.matchAll(/^export (?:async )?function (\w+)/gm)].map((m) => m[1]!));
  const project = { root: input.root, exported, mongoose: (await projectDependencies(input.root)).has('mongoose') };
  const byRel = new Map(sources.map((s) => [s.rel, s]));
  // Edits per file, planned on the texts above and made together at the end.
  const ops = new Map<string, Op[]>();
  const handlers = new Map<string, HandlerEdit[]>();

  const planned: Array<{ target: WiringTarget; plan: ThreadPlan }> = [];
  for (const target of candidates) {
    const routeSource = byRel.get(target.file);
    const tree = routeTrees.get(target.file);
    if (!routeSource || !tree) continue;
    const located = locateHandler(ctx, routeSource, tree, target, input.framework, input);
    if (located) planned.push({ target, plan: planThreading(ctx, located, target, project) });
  }
  const settled = settleAmbientCalls(settleSharedCalls(planned));
  const passing = new Set(settled.flatMap(({ plan }) => plan.passes));
  for (const { target, plan } of settled) {
    for (const { file, op } of plan.ops) ops.set(file, withOp(ops.get(file) ?? [], op));
    if (plan.handler) handlers.set(plan.handler.file, [...(handlers.get(plan.handler.file) ?? []), plan.handler.edit]);
    out.edits.push(...plan.edits);
    out.manual.push(...plan.manual, ...callerSteps(target, plan, passing));
    for (const step of plan.manual) out.stepsAt.add(`${step.file ?? ''}:${step.line ?? 0}`);
    if (plan.threaded) out.threaded.add(target.action);
    if (plan.providers.length > 0) out.placed.set(target.action, new Set([...(out.placed.get(target.action) ?? []), ...plan.providers]));
    for (const holder of plan.holders) out.holders.set(holder.rel, holder.text);
  }

  for (const file of new Set([...ops.keys(), ...handlers.keys()])) {
    const source = byRel.get(file)!;
    const text = editFile(file, source.text, ops.get(file) ?? [], handlers.get(file) ?? [], input);
    if (text !== source.text) out.texts.set(file, text);
    if (ops.get(file)?.some((op) => op.kind === 'key')) out.holders.set(file, text);
  }
  return out;
}

/** The node an op edits: a function or call two actions plan alike (a service they share) is edited once. */
const nodeOf = (op: Op): ts.Node => (op.kind === 'param' || op.kind === 'read' ? op.fn : op.kind === 'arg' ? op.call : op.item.call);

/** `ops` with `op` unless one for its node is there already; a step wins over none, which makes the same key. */
function withOp(ops: readonly Op[], op: Op): Op[] {
  const index = ops.findIndex((o) => o.kind === op.kind && nodeOf(o) === nodeOf(op));
  if (index < 0) return [...ops, op];
  const stepped = op.kind === 'key' && op.step !== undefined && ops[index]!.kind === 'key';
  return stepped ? ops.map((o, i) => (i === index ? op : o)) : [...ops];
}
