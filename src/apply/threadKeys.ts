import path from 'node:path';
import { Node, ts, type CallExpression, type SourceFile } from 'ts-morph';
import { readInside } from '../emit/safePath.js';
import { registeredHandler, resolveCallee } from '../findings/actionFacts.js';
import { httpProviderCalls, providerCalls } from '../findings/providerCalls.js';
import { readSchemaFacts } from '../findings/schemaFacts.js';
import type { SourceContext } from '../findings/types.js';
import { calls, isLoop } from '../findings/walk.js';
import { walkProject } from '../inspect/files/walkProject.js';
import { parseSource as parseTs } from '../inspect/parse/parseSource.js';
import { insideProject, type Handler } from './followHandler.js';
import { importStyleFor, type ProjectImports } from './importStyle.js';
import { isWired, routeCalls } from './locateRoute.js';
import { bindsName, ensureNamedImport, spreadFirst } from './sourceFile.js';
import type { TransformContext } from './transforms/context.js';
import { hasMark, locateNestMethod, requestParameter } from './transforms/nestjsRoute.js';
import { KEYED_SDKS } from './transforms/stableParams.js';
import { CONTEXT_NAME, ensureHandlerContext, requestAccessor } from './transforms/stripeKey.js';
import { parseSource } from './sourceFile.js';
import type { Edit, ManualStep, WiringTarget } from './types.js';

/** As far as the findings walk follows helpers (actionFacts MAX_DEPTH): handler → service → its helper → … */
const MAX_HOPS = 3;

/** How the route pass says a provider call it could not see is elsewhere; superseded when this pass keys it. */
export const NOT_IN_HANDLER = ['the Stripe call is not made inside the route handler', 'calls from a NestJS handler need the claim'];

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
   * Files holding the calls keyed this run or an earlier one, with their text now: the findings recorded there are
   * re-run on it, so a call keyed through the new parameter is no longer listed.
   */
  holders: Map<string, string>;
}

/** One step down from the handler: the call that runs `fn` (in `source`). */
interface Hop {
  call: ts.CallExpression;
  callSource: SourceContext;
  fn: ts.FunctionLikeDeclaration;
  source: SourceContext;
}

/** A chain from the handler to the function holding unkeyed Stripe calls. */
interface Chain {
  hops: Hop[];
  calls: Array<{ call: ts.CallExpression; paramsIndex: number; operation: string }>;
}

type Op =
  | { kind: 'param'; fn: ts.FunctionLikeDeclaration }
  | { kind: 'arg'; call: ts.CallExpression; index: number; value: string }
  | { kind: 'key'; call: ts.CallExpression; paramsIndex: number; step: number | undefined };

const isScript = (file: string) => /\.(m|c)?jsx?$/.test(file);
const startOf = (node: ts.Node) => node.getStart(node.getSourceFile());
const lineOf = (node: ts.Node) => node.getSourceFile().getLineAndCharacterOfPosition(startOf(node)).line + 1;

/** The Stripe calls in `fn` (not in a function nested in it) that send no key and whose options apply can extend. */
function unkeyedStripeCalls(fn: ts.FunctionLikeDeclaration, source: SourceContext) {
  return providerCalls(source).flatMap((c) => {
    if (c.provider !== 'stripe' || c.call.pos < fn.pos || c.call.end > fn.end || c.key !== undefined || c.opaqueOptions || !c.params) return [];
    if (/\bstripeRequestOptions\(/.test(c.call.getText(source.sf))) return [];
    const paramsIndex = c.call.arguments.indexOf(c.params as ts.Expression);
    const options = c.call.arguments[paramsIndex + 1];
    const placeable = paramsIndex >= 0 && (options === undefined ? c.call.arguments.length === paramsIndex + 1 : ts.isObjectLiteralExpression(options));
    return placeable ? [{ call: c.call, paramsIndex, operation: c.operation }] : [];
  });
}

/** Every provider call (any SDK, or raw HTTP the handler's own keying covers) made in the handler itself. */
function ownProviderCalls(fn: ts.FunctionLikeDeclaration, source: SourceContext): number {
  const inside = (c: { call: ts.Node }) => c.call.pos >= fn.pos && c.call.end <= fn.end;
  return providerCalls(source).filter(inside).length + httpProviderCalls(source).filter(inside).length;
}

/**
 * Whether `node` may run more than once per run of `fn`: inside a loop, or in a callback (`items.map(...)`,
 * `forEach`), between the two. Every run would send Stripe the same key with other parameters, which it refuses.
 */
function repeats(node: ts.Node, fn: ts.Node): boolean {
  for (let current = node.parent; current && current !== fn; current = current.parent) {
    if (isLoop(current) || ts.isArrowFunction(current) || ts.isFunctionExpression(current)) return true;
  }
  return false;
}

/** Handler → … → functions with unkeyed Stripe calls, through the calls the findings walk resolves. */
function chainsFrom(ctx: { sources: readonly SourceContext[] }, fn: ts.FunctionLikeDeclaration, source: SourceContext, trail: Hop[], seen: Set<ts.Node>): Chain[] {
  const out: Chain[] = [];
  for (const call of calls(fn)) {
    const target = resolveCallee(ctx, source, call);
    if (!target || seen.has(target.fn)) continue;
    const hop: Hop = { call, callSource: source, fn: target.fn, source: target.source };
    const open = unkeyedStripeCalls(target.fn, target.source);
    if (open.length > 0) out.push({ hops: [...trail, hop], calls: open });
    if (trail.length + 1 < MAX_HOPS) out.push(...chainsFrom(ctx, target.fn, target.source, [...trail, hop], new Set([...seen, target.fn])));
  }
  return out;
}

/** Whether an earlier apply threaded the claim from here: a call passes it to a function that keys a Stripe call with it. */
function threadedBefore(ctx: { sources: readonly SourceContext[] }, fn: ts.FunctionLikeDeclaration, source: SourceContext, depth = 0): SourceContext | undefined {
  if (depth >= MAX_HOPS) return undefined;
  for (const call of calls(fn)) {
    if (!call.arguments.some((a) => ts.isIdentifier(a) && a.text === CONTEXT_NAME)) continue;
    const target = resolveCallee(ctx, source, call);
    if (!target || !target.fn.parameters.some((p) => ts.isIdentifier(p.name) && p.name.text === CONTEXT_NAME)) continue;
    const keyed = providerCalls(target.source).some((c) => c.call.pos >= target.fn.pos && c.call.end <= target.fn.end && c.call.getText(target.source.sf).includes(`stripeRequestOptions(${CONTEXT_NAME}`));
    const found = keyed ? target.source : threadedBefore(ctx, target.fn, target.source, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** The name a function is known by (method, function, `const f = …`), for uses elsewhere and messages. */
function nameOfFunction(fn: ts.FunctionLikeDeclaration): string | undefined {
  if ((ts.isMethodDeclaration(fn) || ts.isFunctionDeclaration(fn)) && fn.name && ts.isIdentifier(fn.name)) return fn.name.text;
  const parent = fn.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyDeclaration(parent) || ts.isPropertyAssignment(parent)) && ts.isIdentifier(parent.name)) return parent.name.text;
  return undefined;
}

/** Why `hop.fn` may not gain the parameter, or undefined when it may. */
function refusal(root: string, ctx: { sources: readonly SourceContext[] }, hop: Hop): string | undefined {
  const { fn, source } = hop;
  const name = nameOfFunction(fn) ?? 'the function';
  if (insideProject(root, path.join(root, source.rel)) === undefined) return `${name} is in ${source.rel}, outside the project's own files`;
  if (fn.parameters.some((p) => p.dotDotDotToken)) return `${name} takes a rest parameter, so no parameter can follow it`;
  const holder = fn.parent;
  if (ts.isMethodDeclaration(fn) && (ts.isClassDeclaration(holder) || ts.isClassExpression(holder))) {
    if (holder.members.filter((m) => ts.isMethodDeclaration(m) && m.name.getText(source.sf) === name).length > 1) return `${name} is overloaded`;
    if (ts.getModifiers(holder)?.some((m) => m.kind === ts.SyntaxKind.AbstractKeyword)) return `${name} belongs to an abstract class: subclasses may override it`;
    const className = holder.name?.text;
    const overriding = className && ctx.sources.some((s) => /\bextends\s+/.test(s.text) && collectClasses(s.sf).some((c) => c.heritageClauses?.some((h) => h.types.some((t) => t.expression.getText(s.sf) === className)) && c.members.some((m) => m.name?.getText(s.sf) === name)));
    if (overriding) return `${name} is overridden in a subclass of ${className}, which is reached through the base type`;
  }
  if (ts.isFunctionDeclaration(fn) && source.sf.statements.filter((s) => ts.isFunctionDeclaration(s) && s.name?.text === name).length > 1) return `${name} is overloaded`;
  if (fn.parameters.some((p) => ts.isIdentifier(p.name) && p.name.text === CONTEXT_NAME)) return undefined;
  if (fn.body && collectIdentifiers(fn.body).some((id) => id.text === CONTEXT_NAME)) return `${name} already uses the name ${CONTEXT_NAME}`;
  return undefined;
}

function collectClasses(sf: ts.SourceFile): ts.ClassLikeDeclaration[] {
  const out: ts.ClassLikeDeclaration[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isClassDeclaration(node) || ts.isClassExpression(node)) out.push(node);
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

function collectIdentifiers(node: ts.Node): ts.Identifier[] {
  const out: ts.Identifier[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isIdentifier(n)) out.push(n);
    ts.forEachChild(n, visit);
  };
  visit(node);
  return out;
}

/** A name as a reference, not as the name a declaration, an import or a literal's key gives something. */
function isReference(id: ts.Identifier): boolean {
  const parent = id.parent;
  if (ts.isImportSpecifier(parent) || ts.isExportSpecifier(parent) || ts.isImportClause(parent) || ts.isNamespaceImport(parent) || ts.isShorthandPropertyAssignment(parent)) return false;
  const named = parent as { name?: ts.Node };
  return named.name !== id;
}

/** `ACTIONS.createOrder`, `idempotency.createOrder`: the scaffold's per-action names, which often match a service method's. */
function generatedName(expression: ts.Node, sf: ts.SourceFile): boolean {
  if (!ts.isPropertyAccessExpression(expression) || !ts.isIdentifier(expression.expression)) return false;
  const receiver = expression.expression.text;
  if (receiver !== 'ACTIONS' && receiver !== 'idempotency') return false;
  return sf.statements.some((s) => ts.isImportDeclaration(s) && s.importClause?.namedBindings && ts.isNamedImports(s.importClause.namedBindings) && s.importClause.namedBindings.elements.some((e) => e.name.text === receiver));
}

/**
 * Other places that use `fn`: calls the findings walk resolves to it, calls it cannot (through an interface or an
 * untyped variable), and mentions as a value (`list.map(service.charge)`, `{ handler: charge }`), whose arguments
 * apply cannot see. A method is mentioned as `x.name`; a function also by its bare name.
 */
function otherUses(ctx: { sources: readonly SourceContext[] }, hop: Hop, ignore?: ts.Node): { callers: string[]; values: string[]; extraArgs: boolean } {
  const name = nameOfFunction(hop.fn);
  const callers: string[] = [];
  const values: string[] = [];
  let extraArgs = false;
  if (!name) return { callers, values: ['an anonymous function'], extraArgs };
  const member = ts.isMethodDeclaration(hop.fn) || ts.isPropertyDeclaration(hop.fn.parent) || ts.isPropertyAssignment(hop.fn.parent);
  for (const source of ctx.sources) {
    if (!source.text.includes(name)) continue;
    const resolved = new Set<ts.Node>();
    for (const call of calls(source.sf)) {
      if (call === hop.call) continue;
      const target = resolveCallee(ctx, source, call);
      // A call resolved to another function (a same-named method of another class) is not a use either.
      if (target) resolved.add(call.expression);
      if (target?.fn !== hop.fn) continue;
      if (call.arguments.length > hop.fn.parameters.length) extraArgs = true;
      callers.push(`${source.rel}:${lineOf(call)}`);
    }
    for (const id of collectIdentifiers(source.sf)) {
      if (id.text !== name) continue;
      const parent = id.parent;
      const expression = ts.isPropertyAccessExpression(parent) && parent.name === id ? parent : !member && isReference(id) ? id : undefined;
      if (!expression || expression === hop.call.expression || resolved.has(expression) || generatedName(expression, source.sf)) continue;
      if (ignore && ignore.getSourceFile() === source.sf && id.pos >= ignore.pos && id.end <= ignore.end) continue;
      const where = `${source.rel}:${lineOf(id)}`;
      if (ts.isCallExpression(expression.parent) && expression.parent.expression === expression) callers.push(where);
      else values.push(where);
    }
  }
  return { callers: [...new Set(callers)], values: [...new Set(values)], extraArgs };
}

/** The ts-morph node for a compiler node of the same text (same start and end). */
function morph<T extends Node>(sf: SourceFile, node: ts.Node, test: (n: Node) => n is T): T | undefined {
  const start = startOf(node);
  return sf.getDescendants().find((n): n is T => test(n) && n.getStart() === start && n.getEnd() === node.end);
}

const isFunctionNode = (n: Node): n is Handler => Node.isMethodDeclaration(n) || Node.isFunctionDeclaration(n) || Node.isArrowFunction(n) || Node.isFunctionExpression(n);

/** The protected handler of a wired route in the route file's current text, and how it reads its claim. */
function wiredHandler(sf: SourceFile, target: WiringTarget, framework: string): { handler: Handler; accessor?: string; addRequest?: boolean } | { route: CallExpression } | undefined {
  if (framework === 'nestjs') {
    const method = locateNestMethod(sf, target, true)?.method;
    if (!method || !hasMark(method, target.codeName)) return undefined;
    const request = requestParameter(method);
    return request ? { handler: method, accessor: `idempotencyOf(${request})` } : { handler: method, accessor: 'idempotencyOf(request)', addRequest: true };
  }
  const wired = routeCalls(sf, target).filter((call) => isWired(call, target.codeName));
  if (wired.length !== 1) return undefined;
  const args = wired[0]!.getArguments();
  let last = args[args.length - 1];
  if (last && Node.isObjectLiteralExpression(last)) {
    const property = last.getProperty('handler');
    last = property && Node.isPropertyAssignment(property) ? property.getInitializer() : undefined;
  }
  if (!last) return undefined;
  // Passed by name (`router.post('/orders', idempotency.createOrder, orders.create)`): followed in the project.
  if (!(Node.isArrowFunction(last) || Node.isFunctionExpression(last))) return { route: wired[0]! };
  const accessor = requestAccessor(last);
  return accessor ? { handler: last, accessor } : { handler: last };
}

/**
 * The handler a wired route passes by name, where the findings walk finds it (registeredHandler), as a ts-morph node
 * of its file's current text. Undefined when it is not found, or when anything else uses it: its new guard would
 * throw for another route, which keyNamedHandlers already lists.
 */
function namedHandler(ctx: { sources: readonly SourceContext[] }, routeSource: SourceContext, route: CallExpression, input: ThreadInput): { handler: Handler; accessor?: string; source: SourceContext } | undefined {
  const call = findCall(routeSource.sf, route.getStart(), route.getEnd());
  const registered = call && registeredHandler(ctx, routeSource, call);
  if (!registered) return undefined;
  const uses = otherUses(ctx, { call, callSource: routeSource, fn: registered.fn, source: registered.source }, call);
  if (uses.callers.length > 0 || uses.values.length > 0) return undefined;
  const style = importStyleFor(registered.source.rel, registered.source.text, input.scaffoldDir, input.imports);
  const start = startOf(registered.fn);
  const handler = parseSource(registered.source.rel, registered.source.text, style).getDescendants().find((n): n is Handler => isFunctionNode(n) && n.getStart() === start && n.getEnd() === registered.fn.end);
  if (!handler) return undefined;
  const accessor = requestAccessor(handler);
  return accessor ? { handler, accessor, source: registered.source } : { handler, source: registered.source };
}

function findCall(sf: ts.SourceFile, start: number, end: number): ts.CallExpression | undefined {
  return calls(sf).find((c) => c.getStart(sf) === start && c.end === end);
}

/**
 * Issue #19: a protected handler whose Stripe call is made in a service it calls (`this.payments.charge(dto)`, an
 * imported `createCharge(input)`), followed the way the findings walk follows it (resolveCallee: injected fields,
 * imports, modules), up to MAX_HOPS functions down. Each function on the way gains a trailing optional
 * `idempotencyContext` parameter that its caller passes on, and the Stripe call gets
 * `idempotencyContext ? stripeRequestOptions(idempotencyContext) : undefined`: keyed from the handler's claim when
 * called from the wired route; from any other caller, which passes nothing, exactly what it sent before (stripe-node's
 * own per-attempt key, no protection across a re-run).
 * Left manual, with the reason: a function used as a value (its caller could pass anything in that place), an
 * overloaded or overridable one, one outside the project, or a handler whose key would reach more than one
 * function (two keyed places would share step 0 of one claim).
 */
export async function threadProviderKeys(input: ThreadInput): Promise<ThreadOutcome> {
  const out: ThreadOutcome = { texts: new Map(), edits: [], manual: [], threaded: new Set(), holders: new Map() };
  const candidates = input.targets.filter((t) => t.trigger === 'http');
  if (candidates.length === 0 || !input.scaffoldModules.has('providers')) return out;
  const { files } = await walkProject(input.root);
  const sources: SourceContext[] = [];
  const schema = readSchemaFacts(new Map());
  const scaffold = `${input.scaffoldDir.replace(/\/+$/, '')}/`;
  for (const file of files) {
    if (!/\.(m|c)?[jt]sx?$/.test(file.rel) || /\.d\.(m|c)?ts$/.test(file.rel) || file.rel.startsWith(scaffold)) continue;
    const text = input.current.get(file.rel) ?? (await readInside(input.root, file.rel).catch(() => undefined));
    if (text === undefined) continue;
    sources.push({ rel: file.rel, text, sf: parseTs(file.rel, text).sf, schema, dependencies: KEYED_SDKS });
  }
  const ctx = { sources };
  const byRel = new Map(sources.map((s) => [s.rel, s]));
  // Edits per file, planned on the texts above and made together at the end.
  const ops = new Map<string, Op[]>();
  const handlers = new Map<string, Array<{ start: number; end: number; accessor: string; addRequest: boolean; action: string }>>();
  const add = (file: string, op: Op) => ops.set(file, [...(ops.get(file) ?? []), op]);

  for (const target of candidates) {
    const routeSource = byRel.get(target.file);
    if (!routeSource) continue;
    const style = importStyleFor(target.file, routeSource.text, input.scaffoldDir, input.imports);
    const wired = wiredHandler(parseSource(target.file, routeSource.text, style), target, input.framework);
    const located = wired && 'route' in wired ? namedHandler(ctx, routeSource, wired.route, input) : wired && { ...wired, source: routeSource };
    if (!located) continue;
    const handlerSource = located.source;
    const handlerStart = located.handler.getStart();
    const fn = findFunction(handlerSource.sf, handlerStart, located.handler.getEnd());
    if (!fn) continue;
    const chains = chainsFrom(ctx, fn, handlerSource, [], new Set([fn]));
    if (chains.length === 0) {
      const holder = threadedBefore(ctx, fn, handlerSource);
      if (holder) {
        out.threaded.add(target.action);
        out.holders.set(holder.rel, holder.text);
      }
      continue;
    }
    const manual = (reason: string, at: { file: string; line: number }) => out.manual.push({ action: target.action, file: at.file, line: at.line, reason });
    const first = chains[0]!;
    const holder = first.hops[first.hops.length - 1]!;
    const at = { file: holder.source.rel, line: lineOf(first.calls[0]!.call) };
    if (!located.accessor) {
      manual(`the Stripe call in ${holder.source.rel} needs the handler's claim, but the handler has no named request parameter to read it from: pass idempotencyOf(request) down and add stripeRequestOptions(context) from providers.ts by hand`, at);
      continue;
    }
    const holders = new Set(chains.map((c) => c.hops[c.hops.length - 1]!.fn));
    if (chains.length > 1 || holders.size > 1 || ownProviderCalls(fn, handlerSource) > 0) {
      const where = chains.map((c) => `${c.hops[c.hops.length - 1]!.source.rel}:${lineOf(c.calls[0]!.call)}`).join(', ');
      manual(`the handler reaches provider calls in more than one place (${where}${ownProviderCalls(fn, handlerSource) > 0 ? ', and its own' : ''}); keyed from one claim they would share a key, which Stripe refuses for different parameters: pass idempotencyOf(request) down and give each call its own step, stripeRequestOptions(context, n), by hand`, at);
      continue;
    }
    // The handler's own function for the first hop, the previous hop's function for the others.
    const callers = [fn, ...first.hops.map((hop) => hop.fn)];
    const looped = first.hops.findIndex((hop, index) => repeats(hop.call, callers[index]!));
    const loopedCall = first.calls.find((item) => repeats(item.call, holder.fn));
    if (looped >= 0 || loopedCall) {
      const where = looped >= 0 ? `${first.hops[looped]!.callSource.rel}:${lineOf(first.hops[looped]!.call)}` : `${holder.source.rel}:${lineOf(loopedCall!.call)}`;
      manual(`not keyed because the call at ${where} runs in a loop or a callback: every run would send Stripe the same key with other parameters, which it refuses. Key each run with its own step, stripeRequestOptions(context, n), by hand`, at);
      continue;
    }
    const why = first.hops.map((hop) => refusal(input.root, ctx, hop)).find((r) => r !== undefined);
    if (why) {
      manual(`not keyed because ${why}: pass idempotencyOf(request) down to the Stripe call and add stripeRequestOptions(context) from providers.ts as its request options by hand`, at);
      continue;
    }
    const uses = first.hops.map((hop) => ({ hop, ...otherUses(ctx, hop) }));
    const asValue = uses.find((u) => u.values.length > 0 || u.extraArgs);
    if (asValue) {
      const name = nameOfFunction(asValue.hop.fn) ?? 'the function';
      manual(`not keyed because ${name} is ${asValue.extraArgs ? 'called with more arguments than it declares' : `also used as a value at ${asValue.values.join(', ')}`}, so a new trailing parameter could receive something else there: pass idempotencyOf(request) down and add stripeRequestOptions(context) by hand`, at);
      continue;
    }
    // Planned: every hop's call passes the context on, every function on the way takes it, the holder keys its calls.
    first.hops.forEach((hop) => {
      const existing = hop.fn.parameters.findIndex((p) => ts.isIdentifier(p.name) && p.name.text === CONTEXT_NAME);
      const position = existing >= 0 ? existing : hop.fn.parameters.length;
      if (existing < 0) add(hop.source.rel, { kind: 'param', fn: hop.fn });
      if (!(hop.call.arguments[position] && hop.call.arguments[position]!.getText(hop.callSource.sf) === CONTEXT_NAME)) add(hop.callSource.rel, { kind: 'arg', call: hop.call, index: position, value: CONTEXT_NAME });
    });
    first.calls.forEach((item, index) => add(holder.source.rel, { kind: 'key', call: item.call, paramsIndex: item.paramsIndex, step: first.calls.length > 1 ? index : undefined }));
    handlers.set(handlerSource.rel, [...(handlers.get(handlerSource.rel) ?? []), { start: handlerStart, end: located.handler.getEnd(), accessor: located.accessor, addRequest: 'addRequest' in located && located.addRequest === true, action: target.action }]);
    out.threaded.add(target.action);
    const route = `${target.method ?? 'POST'} ${target.path ?? ''}`;
    const names = first.hops.map((hop) => `${nameOfFunction(hop.fn) ?? 'a function'} (${hop.source.rel})`).join(' → ');
    out.edits.push({ action: target.action, file: holder.source.rel, summary: `threads the claim of ${route} down to ${names}: a trailing optional ${CONTEXT_NAME} parameter, passed by each caller` });
    for (const item of first.calls) out.edits.push({ action: target.action, file: holder.source.rel, summary: `passes the derived Stripe idempotency key to stripe.${item.operation} (line ${lineOf(item.call)}) when given a context; called without one it sends what it sent before` });
    for (const use of uses.filter((u) => u.callers.length > 0)) {
      manual(`${nameOfFunction(use.hop.fn) ?? 'the function'} is also called at ${use.callers.join(', ')} without a context: those calls still send Stripe no idempotency key (the new parameter is optional). Pass idempotencyOf(request) there when that caller is protected too`, { file: use.hop.source.rel, line: lineOf(use.hop.fn) });
    }
  }

  for (const file of new Set([...ops.keys(), ...handlers.keys()])) {
    const source = byRel.get(file)!;
    const style = importStyleFor(file, source.text, input.scaffoldDir, input.imports);
    const sf = parseSource(file, source.text, style);
    const context: TransformContext = { style, anyLine: true, scaffoldModules: input.scaffoldModules };
    const planned = (ops.get(file) ?? []).map((op) => ({ op, node: op.kind === 'param' ? morph(sf, op.fn, isFunctionNode) : morph(sf, op.call, Node.isCallExpression) }));
    const handlerNodes = (handlers.get(file) ?? []).map((h) => ({ ...h, node: sf.getDescendants().find((n): n is Handler => isFunctionNode(n) && n.getStart() === h.start && n.getEnd() === h.end) }));
    // Later positions first, so no edit moves a node another still needs.
    for (const { op, node } of planned.sort((a, b) => (b.node?.getStart() ?? 0) - (a.node?.getStart() ?? 0))) {
      if (!node) continue;
      if (op.kind === 'param') addContextParameter(sf, node as Handler, file, context);
      else if (op.kind === 'arg') passContext(node as CallExpression, op.index, op.value);
      else keyStripeCall(sf, node as CallExpression, op.paramsIndex, op.step, context);
    }
    for (const h of handlerNodes) {
      if (!h.node) continue;
      if (h.addRequest && Node.isMethodDeclaration(h.node) && !h.node.getParameters().some((p) => p.getName() === 'request')) {
        if (!ensureNamedImport(sf, '@nestjs/common', 'Req')) continue;
        h.node.addParameter({ name: 'request', decorators: [{ name: 'Req', arguments: [] }], ...(isScript(file) ? {} : { type: 'object' }) });
      }
    }
    // Raw text last: it forgets the file's wrapped nodes, so each handler is found again by its place among the
    // file's functions (the statements inserted add none), the last first.
    const functions = () => sf.getDescendants().filter(isFunctionNode);
    const places = handlerNodes.flatMap((h) => (h.node ? [{ ...h, index: functions().indexOf(h.node) }] : [])).filter((h) => h.index >= 0);
    if (places.length > 0 && ensureNamedImport(sf, context.style.specifier('index'), 'idempotencyOf')) {
      for (const h of places.sort((a, b) => b.index - a.index)) ensureHandlerContext(sf, functions()[h.index]!, h.accessor, context);
    }
    if (sf.getFullText() !== source.text) out.texts.set(file, sf.getFullText());
    if (ops.get(file)?.some((op) => op.kind === 'key')) out.holders.set(file, sf.getFullText());
  }
  return out;
}

/** The function-like node of the compiler's tree at these positions. */
function findFunction(sf: ts.SourceFile, start: number, end: number): ts.FunctionLikeDeclaration | undefined {
  let found: ts.FunctionLikeDeclaration | undefined;
  const visit = (node: ts.Node): void => {
    if (found || node.end < start || node.pos > end) return;
    if ((ts.isMethodDeclaration(node) || ts.isFunctionDeclaration(node) || ts.isArrowFunction(node) || ts.isFunctionExpression(node)) && node.getStart(sf) === start && node.end === end) found = node;
    else ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

/** `idempotencyContext?: ProviderKeySource` last (no type in JavaScript), the type imported from providers.ts. */
function addContextParameter(sf: SourceFile, fn: Handler, file: string, context: TransformContext): void {
  if (fn.getParameters().some((p) => p.getName() === CONTEXT_NAME)) return;
  if (isScript(file)) {
    fn.addParameter({ name: CONTEXT_NAME });
    return;
  }
  const specifier = context.style.specifier('providers');
  const imported = sf.getImportDeclarations().some((d) => d.getModuleSpecifierValue() === specifier && d.getNamedImports().some((n) => n.getName() === 'ProviderKeySource'));
  if (!imported && !bindsName(sf, 'ProviderKeySource')) {
    const last = sf.getImportDeclarations().at(-1);
    sf.insertImportDeclaration(last ? last.getChildIndex() + 1 : 0, { isTypeOnly: true, moduleSpecifier: specifier, namedImports: ['ProviderKeySource'] });
  }
  fn.addParameter({ name: CONTEXT_NAME, hasQuestionToken: true, type: 'ProviderKeySource' });
}

/** The context as the call's argument at `index` (absent optional arguments before it passed as undefined). */
function passContext(call: CallExpression, index: number, value: string): void {
  const args = call.getArguments();
  if (args[index]?.getText() === value) return;
  call.addArguments([...Array.from({ length: Math.max(0, index - args.length) }, () => 'undefined'), value]);
}

/** The Stripe call's request options from the context when there is one, none otherwise (as before). */
function keyStripeCall(sf: SourceFile, call: CallExpression, paramsIndex: number, step: number | undefined, context: TransformContext): void {
  if (!ensureNamedImport(sf, context.style.specifier('providers'), 'stripeRequestOptions')) return;
  const keyed = `stripeRequestOptions(${CONTEXT_NAME}${step !== undefined ? `, ${step}` : ''})`;
  const options = call.getArguments()[paramsIndex + 1];
  if (options && Node.isObjectLiteralExpression(options)) spreadFirst(options, `(${CONTEXT_NAME} ? ${keyed} : {})`);
  else if (!options) call.addArgument(`${CONTEXT_NAME} ? ${keyed} : undefined`);
}
