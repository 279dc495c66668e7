import { volatilePart } from './volatile.js';
import { repositoryOf, repositoryWrite } from './repositoryWrites.js';
import { ts } from 'ts-morph';
import type { ActionConfig } from '../config/schema.js';
import { decoratorCall, decoratorsOf, isFunctionLike, objectProperty, stringValue, unwrap } from '../inspect/parse/astHelpers.js';
import type { ActionCodeFacts, MessageFact, ProviderBudget, ProviderCallFact, PublishFact, WriteFact } from '../model/codeFacts.js';
import { SCAFFOLD_WRAPPERS } from '../inspect/detectors/consumers.js';
import { brokersImported, publishSites, type PublishSite } from '../inspect/detectors/publishes.js';
import { resolveSpecifier, type ModuleFiles } from '../inspect/resolve/resolveModules.js';
import { actionSource } from './configSources.js';
import { perAttemptSqlKey } from './conflictKey.js';
import { dataAccesses } from './dataAccess.js';
import { mongooseModel } from './documentStore.js';
import { messageCalls } from './messageCalls.js';
import { httpProviderCalls, providerCalls, repeatsSafely } from './providerCalls.js';
import { normaliseName } from './schemaFacts.js';
import type { ProjectContext, SourceContext } from './types.js';
import { calls, functionLabel } from './walk.js';

/** How deep the walk follows helpers (`route → createOrRetrieveCustomer → stripe.customers.create`). */
const MAX_DEPTH = 3;

/** For every configured action whose source the code has: what its handler calls, writes, and how long it may wait. */
export function actionFacts(ctx: ProjectContext): ActionCodeFacts[] {
  if (!ctx.config) return [];
  return ctx.config.actions.flatMap((action) => {
    const facts = factsFor(ctx, action);
    return facts ? [facts] : [];
  });
}

export function factsFor(ctx: ProjectContext, action: ActionConfig): ActionCodeFacts | undefined {
  const at = actionSource(ctx, action);
  if (!at.source) return undefined;
  const found = handlerAt(at.source, at.line);
  // A registration line (`app.post('/x', controller.create)`) names its handler: follow it to the function, also
  // when the registration sits in a function of its own (`export async function leadsRoutes(app) { app.post(…) }`).
  const statement = found.fn ? found.around : found.node;
  const registered = statement ? registeredHandler(ctx, at.source, statement, at.line, found.fn !== undefined) : undefined;
  // Code we cannot follow says nothing: the design then speaks from the configuration, never "no provider call".
  if (!found.fn && !registered) return undefined;
  const root = registered ? { node: registered.fn as ts.Node, ...nameOf(registered.fn) } : found;
  const rootSource = registered?.source ?? at.source;
  const handlerLine = registered ? lineOf(registered.source, registered.fn) : at.line;
  const seen = new Set<ts.Node>();
  const callFacts: ProviderCallFact[] = [];
  const writes: WriteFact[] = [];
  const messages: MessageFact[] = [];
  const published: PublishFact[] = [];
  const spans: Array<{ file: string; from: number; to: number }> = [];
  // Whose client sets the budget: the SDK's where the action calls it, else the HTTP client of the raw calls.
  const sdkProviders = new Set<string>();
  const httpCalls: Array<{ provider: string; source: SourceContext }> = [];
  let refusal: ActionCodeFacts['refusal'];
  // Effects are recorded in the order they run: a helper's calls at the point the handler calls it.
  const visit = (node: ts.Node, source: SourceContext, depth: number, via: string | undefined, self?: ClassAt): void => {
    if (seen.has(node)) return;
    seen.add(node);
    spans.push({ file: source.rel, from: lineOf(source, node), to: source.sf.getLineAndCharacterOfPosition(node.end).line + 1 });
    const steps: Array<{ pos: number; run: () => void }> = [];
    // SDK calls and raw-HTTP ones (`paypal.post('/v2/checkout/orders')`), by the same matchers inspect uses.
    const found = [
      ...providerCalls(source).map((c) => ({ c, keyed: c.key !== undefined || c.opaqueOptions, perAttempt: c.key !== undefined && volatilePart(c.key) !== undefined, safe: repeatsSafely(c), http: false })),
      ...httpProviderCalls(source).map((c) => ({ c, keyed: c.keyed, perAttempt: c.keyPerAttempt, safe: repeatsSafely({ method: '', verb: c.verb }), http: true })),
    ];
    for (const { c, keyed, perAttempt, safe, http } of found) {
      if (c.call.pos < node.pos || c.call.end > node.end || inNested(c.call, node, seen)) continue;
      if (http) httpCalls.push({ provider: c.provider, source });
      else sdkProviders.add(c.provider);
      steps.push({ pos: c.call.pos, run: () => callFacts.push({ provider: c.provider, operation: c.operation, risk: c.risk, file: source.rel, line: lineOf(source, c.call), keyed, ...(perAttempt ? { keyPerAttempt: true } : {}), ...(via ? { via } : {}), ...(safe ? { repeatsSafely: true } : {}) }) });
    }
    const sent = messageCalls(source, (from, spec) => resolveModule(ctx, from, spec));
    // `client.messages.create(…)` (Twilio, Mailgun) sends a message: it is no row in a `messages` table.
    const sends = new Set<ts.Node>(sent.map((m) => m.call));
    for (const w of writesIn(node, source)) if (!sends.has(w.call)) steps.push({ pos: w.pos, run: () => writes.push(w.fact) });
    for (const m of sent) {
      if (m.call.pos < node.pos || m.call.end > node.end || inNested(m.call, node, seen)) continue;
      steps.push({ pos: m.call.pos, run: () => messages.push({ channel: m.channel, library: m.library, operation: m.operation, file: source.rel, line: lineOf(source, m.call), keyed: m.key !== undefined || m.opaqueOptions === true, ...(m.key !== undefined && volatilePart(m.key) !== undefined ? { keyPerAttempt: true } : {}), ...(via ? { via } : {}) }) });
    }
    for (const p of publishesOf(source)) {
      if (p.node.pos < node.pos || p.node.end > node.end || inNested(p.node, node, seen)) continue;
      steps.push({ pos: p.node.pos, run: () => published.push({ broker: p.broker, ...(p.topic !== undefined ? { topic: p.topic } : {}), file: source.rel, line: lineOf(source, p.node), ...(via ? { via } : {}) }) });
    }
    for (const thrown of refusalsIn(node)) {
      if (inNested(thrown.node, node, seen)) continue;
      // Only a check before every effect refuses the repeat; one after them reports a failure of the first run.
      const run = (): void => {
        const beforeAnyEffect = callFacts.length + writes.length + messages.length + published.length === 0;
        if (refusal === undefined && beforeAnyEffect) refusal = { file: source.rel, line: lineOf(source, thrown.node), message: thrown.message };
      };
      steps.push({ pos: thrown.node.pos, run });
    }
    if (depth < MAX_DEPTH) {
      for (const call of calls(node)) {
        const target = resolveCallee(ctx, source, call, self);
        // A call through an interface or base class the code picks at run time (a worker's `handler.handle(job.data)`,
        // the handler looked up by the job's name): every implementation the project has, each a possible run.
        const targets = target ? [target] : dispatchTargets(ctx, source, call);
        for (const t of targets) steps.push({ pos: call.pos, run: () => visit(t.fn, t.source, depth + 1, functionLabel(t.fn) ?? via, t.self) });
      }
    }
    for (const step of steps.sort((a, b) => a.pos - b.pos)) step.run();
  };
  visit(root.node, rootSource, 0, undefined);
  // A webhook verified by the route's own middleware (`router.post(path, verifyStripeSignature, handler)`): findings
  // about the verification (the event id never recorded) belong to this action too.
  if (registered && action.trigger === 'webhook') {
    for (const mw of registeredMiddleware(ctx, at.source, statement ?? found.node, at.line)) spans.push({ file: mw.source.rel, from: lineOf(mw.source, mw.fn), to: mw.source.sf.getLineAndCharacterOfPosition(mw.fn.end).line + 1 });
  }
  const ordered = dedupe(callFacts);
  const providers = [...new Set(ordered.map((c) => c.provider))];
  const cap = platformCap(ctx, rootSource.text);
  const resolver = nestResolver(root.node, rootSource.text);
  return {
    action: action.name,
    handler: { file: rootSource.rel, line: handlerLine, ...(root.name ? { name: root.name } : {}) },
    calls: ordered,
    writes: dedupe(withoutGuessed(writes)).map((w) => withUnique(ctx, w)),
    // Only when there are some, so the facts of actions that send nothing keep their shape.
    ...(messages.length > 0 ? { messages: dedupe(messages) } : {}),
    ...(published.length > 0 ? { publishes: dedupe(published) } : {}),
    budgets: providers.flatMap((provider) => (sdkProviders.has(provider) ? budgetFor(ctx, provider) : httpBudget(provider, httpCalls.filter((c) => c.provider === provider).map((c) => c.source))) ?? []),
    spans: dedupe(spans.map((span) => ({ ...span, line: span.from }))).map(({ file, from, to }) => ({ file, from, to })),
    ...(cap ? { platformCap: cap } : {}),
    ...(CLAIM_TRANSACTION.test(root.node.getText(rootSource.sf)) ? { claimTransaction: true as const } : {}),
    ...(resolver ? { graphql: 'nestjs' as const } : {}),
    ...(refusal ? { refusal } : {}),
  };
}

/**
 * An error that names the state a first run left ("already", "exists"; never "does not exist"), or a 409 Conflict
 * exception. Not "duplicate": input validation says it too ("Duplicate items in cart").
 */
const REPEAT_MESSAGE = /\balready\b|(?<!\bnot |n't )\bexists\b/i;

/**
 * `throw new Error('Team is already unsubscribed.')`, `throw new ConflictException('Order exists')`,
 * `throw createError(409, 'already paid')`: the throws in `node` that refuse a repeat, with their message.
 */
function refusalsIn(node: ts.Node): Array<{ node: ts.ThrowStatement; message: string }> {
  const out: Array<{ node: ts.ThrowStatement; message: string }> = [];
  const visit = (child: ts.Node): void => {
    if (ts.isThrowStatement(child)) {
      const thrown = unwrap(child.expression);
      const made = ts.isNewExpression(thrown) || ts.isCallExpression(thrown) ? thrown : undefined;
      const literal = made?.arguments?.find((a) => ts.isStringLiteral(a) || ts.isNoSubstitutionTemplateLiteral(a)) as ts.StringLiteral | ts.NoSubstitutionTemplateLiteral | undefined;
      const conflict = made !== undefined && /Conflict/.test(made.expression.getText());
      if (literal && REPEAT_MESSAGE.test(literal.text)) out.push({ node: child, message: literal.text });
      else if (conflict) out.push({ node: child, message: literal?.text ?? made.expression.getText() });
    }
    ts.forEachChild(child, visit);
  };
  visit(node);
  return out;
}

/**
 * The function that handles the route or registration at `file:line`: written there, or named there and followed
 * (`router.post('/webhook', controller.receive)`), as the code facts locate an action's handler.
 */
export function handlerOf(ctx: Pick<ProjectContext, 'sources'>, file: string, line: number): { fn: ts.FunctionLikeDeclaration; source: SourceContext } | undefined {
  const source = ctx.sources.find((s) => s.rel === file);
  if (!source) return undefined;
  const found = handlerAt(source, line);
  if (!found.fn) return registeredHandler(ctx, source, found.node, line);
  return (found.around && registeredHandler(ctx, source, found.around, line, true)) || { fn: found.fn, source };
}

/**
 * The handler reads the claim's transaction: `idempotencyOf(req)!.db`, `const { db } = idempotencyOf(c)!`, or
 * `transactionOf(idempotencyOf(req))`, the accessor apply writes when it moves a handler's writes onto it.
 */
const CLAIM_TRANSACTION = /idempotencyOf\s*\([^()]*\)\s*[!?]?\s*\.\s*db\b|\{[^{}]*\bdb\b[^{}]*\}\s*=\s*idempotencyOf\s*\(|\btransactionOf\s*\(\s*idempotencyOf\s*\(/;

const NEST_GRAPHQL_MUTATION = /\bimport\s*\{[^}]*\bMutation\b[^}]*\}\s*from\s*['"]@nestjs\/graphql['"]/;

/** A method decorated `@Mutation(…)` in a file that takes Mutation from @nestjs/graphql: a NestJS resolver. */
function nestResolver(node: ts.Node, text: string): boolean {
  if (!ts.isMethodDeclaration(node) || !NEST_GRAPHQL_MUTATION.test(text)) return false;
  return decoratorsOf(node).some((d) => decoratorCall(d)?.name === 'Mutation');
}

/** A call inside a function we visit on its own (a local helper): counted there, at its call site, not twice. */
function inNested(node: ts.Node, root: ts.Node, visited: ReadonlySet<ts.Node>): boolean {
  for (let current = node.parent; current && current !== root; current = current.parent) if (visited.has(current)) return true;
  return false;
}

function dedupe<T extends { file: string; line: number }>(items: T[]): T[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const key = JSON.stringify(item);
    return seen.has(key) ? false : (seen.add(key), true);
  });
}

function lineOf(source: SourceContext, node: ts.Node): number {
  return source.sf.getLineAndCharacterOfPosition(node.getStart(source.sf)).line + 1;
}

/** The handler the action's `source` line points at: the function starting there, else the one around it, else that statement. */
function handlerAt(source: SourceContext, line: number): { node: ts.Node; fn?: ts.FunctionLikeDeclaration; name?: string; around?: ts.Node } {
  let starting: ts.FunctionLikeDeclaration | undefined;
  let around: ts.FunctionLikeDeclaration | undefined;
  let statement: ts.Node | undefined;
  // A route registered on this line with its handler written inline (`fastify.post('/x', opts, async (req) => …)`,
  // `fastify.route({ handler })`): that function, not the plugin or module function around the registration.
  let inline: ts.FunctionLikeDeclaration | undefined;
  // A queue processor class registered by its decorator (`@Processor('payments') class … extends WorkerHost`).
  let processor: ts.ClassDeclaration | undefined;
  const visit = (node: ts.Node): void => {
    const start = lineOf(source, node);
    const end = source.sf.getLineAndCharacterOfPosition(node.end).line + 1;
    if (line < start || line > end) return;
    if (!statement && ts.isStatement(node) && node.parent === source.sf) statement = node;
    if (!processor && ts.isClassDeclaration(node) && (start === line || (node.name !== undefined && lineOf(source, node.name) === line))) processor = node;
    if (isFunctionLike(node) && node.body) {
      if (start === line && !starting) starting = node;
      around = node;
    }
    if (!inline && !starting && ts.isCallExpression(node) && start === line) inline = inlineHandler(node);
    ts.forEachChild(node, visit);
  };
  visit(source.sf);
  const fn = starting ?? inline ?? around ?? (processor && processorMethod(processor));
  // Only the function around the line (a Fastify plugin, a router factory): the line may register a named handler.
  if (fn) return { node: fn, fn, ...nameOf(fn), ...(fn === around && !starting && !inline && statement ? { around: statement } : {}) };
  return { node: statement ?? source.sf };
}

/** The last argument written as a function (or an options object's `handler:` function) of a registration call. */
function inlineHandler(call: ts.CallExpression): ts.FunctionLikeDeclaration | undefined {
  for (const arg of [...call.arguments].reverse()) {
    if ((ts.isArrowFunction(arg) || ts.isFunctionExpression(arg)) && arg.body) return arg;
    // `asyncHandler(async (req, res) => …)`: the function a wrapper is given.
    if (ts.isCallExpression(arg)) {
      const wrapped = inlineHandler(arg);
      if (wrapped) return wrapped;
    }
    if (ts.isObjectLiteralExpression(arg)) {
      for (const p of arg.properties) {
        if (ts.isMethodDeclaration(p) && p.body && ts.isIdentifier(p.name) && p.name.text === 'handler') return p;
        if (ts.isPropertyAssignment(p) && ts.isIdentifier(p.name) && p.name.text === 'handler' && (ts.isArrowFunction(p.initializer) || ts.isFunctionExpression(p.initializer))) return p.initializer;
      }
    }
  }
  return undefined;
}

/**
 * The last function-valued argument of a registration statement: `router.post(path, auth, controller.create)`. In a
 * chain (`createRouter().openapi(routes.list, handlers.list).openapi(routes.create, handlers.create)`) the one whose
 * method name is on `line`, where inspection put the route.
 */
export function registeredHandler(ctx: Pick<ProjectContext, 'sources'>, source: SourceContext, statement: ts.Node, line?: number, onLineOnly = false): { fn: ts.FunctionLikeDeclaration; source: SourceContext } | undefined {
  for (const arg of [...(registrationAt(source, statement, line, onLineOnly)?.arguments ?? [])].reverse()) {
    const fn = namedFunction(ctx, source, arg);
    if (fn) return fn;
  }
  return undefined;
}

/** The registration call of `statement` on `line` (`router.post(…)`), else (unless `onLineOnly`) its first call. */
function registrationAt(source: SourceContext, statement: ts.Node, line?: number, onLineOnly = false): ts.CallExpression | undefined {
  const all = calls(statement);
  const onLine = line === undefined ? undefined : all.find((call) => ts.isPropertyAccessExpression(call.expression) && lineOf(source, call.expression.name) === line);
  return onLineOnly ? onLine : (onLine ?? all[0]);
}

/** The project functions a registration names before its handler (`verifyStripeSignature` in `post(path, verify, handle)`). */
function registeredMiddleware(ctx: Pick<ProjectContext, 'sources'>, source: SourceContext, statement: ts.Node, line: number): Array<{ fn: ts.FunctionLikeDeclaration; source: SourceContext }> {
  const args = registrationAt(source, statement, line)?.arguments ?? [];
  return args.slice(0, -1).flatMap((arg) => namedFunction(ctx, source, arg) ?? []);
}

/** The function an argument names: declared in this file, imported (by name or default), or a member of a module or holder. */
function namedFunction(ctx: Pick<ProjectContext, 'sources'>, source: SourceContext, arg: ts.Expression): { fn: ts.FunctionLikeDeclaration; source: SourceContext } | undefined {
  if (ts.isIdentifier(arg)) {
    const local = topLevelFunction(source.sf, arg.text);
    if (local) return { fn: local, source };
    const spec = importSpecifier(source.sf, arg.text) ?? requireSpecifier(source.sf, arg.text, true);
    const target = spec && resolveModule(ctx, source.rel, spec.module);
    const fn = target && (topLevelFunction(target.sf, spec.imported) ?? exportedFunction(target.sf, spec.imported));
    if (fn && target) return { fn, source: target };
    const byDefault = defaultImportedFunction(ctx, source, arg.text);
    if (byDefault) return byDefault;
  } else if (ts.isPropertyAccessExpression(arg) && ts.isIdentifier(arg.expression)) {
    const spec = requireSpecifier(source.sf, arg.expression.text, false)?.module ?? namespaceImport(source.sf, arg.expression.text);
    const target = spec && resolveModule(ctx, source.rel, spec);
    const fn = target && (topLevelFunction(target.sf, arg.name.text) ?? exportedFunction(target.sf, arg.name.text));
    if (fn && target) return { fn, source: target };
    const member = memberOfHolder(ctx, source, arg.expression.text, arg.name.text);
    if (member) return member;
  }
  return undefined;
}

/**
 * `user.createUser` where `user` is a class with that (static) method or an object literal holding it, declared in
 * the file or imported, by name or as a module's default, through index files' re-exports
 * (`export { default as user } from './user'`, then `export default class UserController { static async createUser … }`).
 */
function memberOfHolder(ctx: Pick<ProjectContext, 'sources'>, source: SourceContext, local: string, member: string): { fn: ts.FunctionLikeDeclaration; source: SourceContext } | undefined {
  const defaultFrom = defaultImport(source.sf, local);
  const found = defaultFrom ? followDefault(ctx, source, defaultFrom) : declarationNamed(ctx, source, local, 0, holderStatement);
  if (!found) return undefined;
  let node: ts.Statement = found.node;
  let at = found.source;
  // `export default UserController`: the class or object that name is declared as, in that file or imported there.
  if (ts.isExportAssignment(node) && ts.isIdentifier(node.expression)) {
    const named = declarationNamed(ctx, at, node.expression.text, 1, holderStatement);
    if (!named) return undefined;
    node = named.node;
    at = named.source;
  }
  const fn = holderMember(node, member, at.sf);
  return fn ? { fn, source: at } : undefined;
}

function followDefault(ctx: Pick<ProjectContext, 'sources'>, source: SourceContext, specifier: string): { node: ts.Statement; source: SourceContext } | undefined {
  const target = resolveModule(ctx, source.rel, specifier);
  return target ? declarationNamed(ctx, target, 'default', 1, holderStatement) : undefined;
}

/** A statement that can hold handler methods under `name` ('default': the module's default export). */
function holderStatement(statement: ts.Statement, name: string): ts.Statement | undefined {
  const isDefault = (node: ts.Node) => ts.canHaveModifiers(node) && (ts.getModifiers(node)?.some((m) => m.kind === ts.SyntaxKind.DefaultKeyword) ?? false);
  if (ts.isClassDeclaration(statement)) return (name === 'default' ? isDefault(statement) : statement.name?.text === name) ? statement : undefined;
  if (ts.isExportAssignment(statement) && !statement.isExportEquals) return name === 'default' ? statement : undefined;
  if (ts.isVariableStatement(statement)) {
    const decl = statement.declarationList.declarations.find((d) => ts.isIdentifier(d.name) && d.name.text === name);
    return decl?.initializer && (ts.isObjectLiteralExpression(unwrap(decl.initializer)) || ts.isClassExpression(unwrap(decl.initializer))) ? statement : undefined;
  }
  return undefined;
}

/** A function written in place (arrow, function expression) or the name of one declared at the top of `sf`. */
function functionValue(sf: ts.SourceFile, expr: ts.Expression | undefined): ts.FunctionLikeDeclaration | undefined {
  const node = expr && unwrap(expr);
  if (node && (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) && node.body) return node;
  return node && ts.isIdentifier(node) ? topLevelFunction(sf, node.text) : undefined;
}

function holderMember(node: ts.Statement, member: string, sf: ts.SourceFile): ts.FunctionLikeDeclaration | undefined {
  const fromHolder = (expr: ts.Expression): ts.FunctionLikeDeclaration | undefined => {
    const inner = unwrap(expr);
    if (ts.isObjectLiteralExpression(inner)) return fromObject(inner, member, sf);
    if (ts.isClassExpression(inner)) return methodOf(inner, member);
    return undefined;
  };
  if (ts.isClassDeclaration(node)) return methodOf(node, member);
  if (ts.isExportAssignment(node)) return fromHolder(node.expression);
  if (ts.isVariableStatement(node)) {
    for (const decl of node.declarationList.declarations) if (decl.initializer) return fromHolder(decl.initializer);
  }
  return undefined;
}

/** The module `local` is the default import of: `import user from './user'`. */
function defaultImport(sf: ts.SourceFile, local: string): string | undefined {
  for (const statement of sf.statements) {
    if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier) && statement.importClause?.name?.text === local) return statement.moduleSpecifier.text;
  }
  return undefined;
}

/** `const x = require('./m')` (or `const { x } = require('./m')` when `member`), CommonJS style. */
function requireSpecifier(sf: ts.SourceFile, local: string, member: boolean): { module: string; imported: string } | undefined {
  for (const statement of sf.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    for (const decl of statement.declarationList.declarations) {
      const init = decl.initializer;
      if (!init || !ts.isCallExpression(init) || !ts.isIdentifier(init.expression) || init.expression.text !== 'require') continue;
      const arg = init.arguments[0];
      if (!arg || !ts.isStringLiteral(arg)) continue;
      const named = member && ts.isObjectBindingPattern(decl.name) && decl.name.elements.some((e) => ts.isIdentifier(e.name) && e.name.text === local);
      if ((!member && ts.isIdentifier(decl.name) && decl.name.text === local) || named) return { module: arg.text, imported: local };
    }
  }
  return undefined;
}

function namespaceImport(sf: ts.SourceFile, local: string): string | undefined {
  for (const statement of sf.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    const clause = statement.importClause;
    const bindings = clause?.namedBindings;
    if (clause?.name?.text === local || (bindings && ts.isNamespaceImport(bindings) && bindings.name.text === local)) return statement.moduleSpecifier.text;
  }
  return undefined;
}

/** The function `local` names when it is a module's default import: `import processNewOrder from './processNewOrder'`. */
function defaultImportedFunction(ctx: Pick<ProjectContext, 'sources'>, source: SourceContext, local: string): Callee | undefined {
  const from = defaultImport(source.sf, local);
  const module = from !== undefined ? resolveModule(ctx, source.rel, from) : undefined;
  const fn = module && defaultExportedFunction(module.sf);
  return fn && module ? { fn, source: module } : undefined;
}

/** `export default function …`, `export default name` of a function, `export default async (ctx) => …`, `module.exports = fn`. */
function defaultExportedFunction(sf: ts.SourceFile): ts.FunctionLikeDeclaration | undefined {
  for (const statement of sf.statements) {
    const isDefault = ts.canHaveModifiers(statement) && (ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.DefaultKeyword) ?? false);
    if (ts.isFunctionDeclaration(statement) && isDefault && statement.body) return statement;
    const value = ts.isExportAssignment(statement) && !statement.isExportEquals ? statement.expression : ts.isExpressionStatement(statement) && ts.isBinaryExpression(statement.expression) && statement.expression.operatorToken.kind === ts.SyntaxKind.EqualsToken && statement.expression.left.getText(sf) === 'module.exports' ? statement.expression.right : undefined;
    const fn = functionValue(sf, value);
    if (fn) return fn;
  }
  return undefined;
}

/** `exports.name = fn`, `module.exports.name = fn`, `module.exports = { name }` / `{ name: fn }`, `export default { name }`. */
function exportedFunction(sf: ts.SourceFile, name: string): ts.FunctionLikeDeclaration | undefined {
  for (const statement of sf.statements) {
    const expr = ts.isExpressionStatement(statement) ? statement.expression : ts.isExportAssignment(statement) ? statement.expression : undefined;
    if (!expr) continue;
    if (ts.isBinaryExpression(expr) && expr.operatorToken.kind === ts.SyntaxKind.EqualsToken) {
      const left = expr.left.getText(sf);
      if (left === `exports.${name}` || left === `module.exports.${name}`) return functionValue(sf, expr.right);
      if (left === 'module.exports' && ts.isObjectLiteralExpression(expr.right)) return fromObject(expr.right, name, sf);
    } else if (ts.isObjectLiteralExpression(expr)) {
      return fromObject(expr, name, sf);
    }
  }
  return undefined;
}

function fromObject(obj: ts.ObjectLiteralExpression, name: string, sf: ts.SourceFile): ts.FunctionLikeDeclaration | undefined {
  for (const prop of obj.properties) {
    if (ts.isShorthandPropertyAssignment(prop) && prop.name.text === name) return functionValue(sf, prop.name);
    if (ts.isPropertyAssignment(prop) && ts.isIdentifier(prop.name) && prop.name.text === name) return functionValue(sf, prop.initializer);
    if (ts.isMethodDeclaration(prop) && ts.isIdentifier(prop.name) && prop.name.text === name && prop.body) return prop;
  }
  return undefined;
}

function nameOf(fn: ts.FunctionLikeDeclaration): { name?: string } {
  // `const createSession = asyncHandler(async (req, res) => …)` is createSession.
  let holder: ts.Node = fn;
  while (ts.isCallExpression(holder.parent)) holder = holder.parent;
  if (holder !== fn && ts.isVariableDeclaration(holder.parent) && ts.isIdentifier(holder.parent.name)) return { name: holder.parent.name.text };
  const label = functionLabel(fn);
  return label ? { name: label } : {};
}

/** `asyncHandler(async (req, res) => …)`, `withTeam(async (data, team) => …)`: the wrapped function is the handler. */
function unwrapWrapper(init: ts.Expression): ts.Expression | undefined {
  let node: ts.Expression = init;
  for (let depth = 0; depth < 3 && ts.isCallExpression(node); depth++) {
    const last = node.arguments[node.arguments.length - 1];
    if (!last) return undefined;
    node = last;
  }
  return node;
}

/**
 * The project function a call runs (a local or imported function, a module's export, `this.method()`, an injected
 * `this.service.method()`), or undefined. apply's key threading (src/apply/thread/) follows the same hops.
 */
export function resolveCallee(ctx: Pick<ProjectContext, 'sources'>, source: SourceContext, call: ts.CallExpression, self?: ClassAt): Callee | undefined {
  const injected = injectedMethod(ctx, source, call, self);
  if (injected) return injected;
  if (ts.isPropertyAccessExpression(call.expression) && ts.isIdentifier(call.expression.expression)) {
    // `service.createSession(...)` on a module the file requires or imports whole.
    const local = call.expression.expression.text;
    const spec = requireSpecifier(source.sf, local, false)?.module ?? namespaceImport(source.sf, local);
    const target = spec ? resolveModule(ctx, source.rel, spec) : namedModule(ctx, source, local);
    const name = call.expression.name.text;
    const fn = target && (exportedFunction(target.sf, name) ?? topLevelFunction(target.sf, name));
    if (fn && target) return { fn, source: target };
  }
  if (ts.isPropertyAccessExpression(call.expression)) return factoryMethod(ctx, source, call.expression) ?? modelStatic(ctx, source, call.expression);
  if (!ts.isIdentifier(call.expression)) return undefined;
  const name = call.expression.text;
  const local = topLevelFunction(source.sf, name);
  if (local) return { fn: local, source };
  const spec = importSpecifier(source.sf, name);
  if (!spec) return defaultImportedFunction(ctx, source, name);
  const target = resolveModule(ctx, source.rel, spec.module);
  if (!target) return undefined;
  const fn = topLevelFunction(target.sf, spec.imported);
  return fn ? { fn, source: target } : reExportedFunction(ctx, target, spec.imported);
}

/** A function an index module re-exports (`export * from './stripe/checkout-sessions'`, `export { x } from`). */
function reExportedFunction(ctx: Pick<ProjectContext, 'sources'>, index: SourceContext, name: string): Callee | undefined {
  let fn: ts.FunctionLikeDeclaration | undefined;
  const found = declarationNamed(ctx, index, name, 1, (statement, wanted) => {
    const own = functionAmong([statement], wanted);
    if (own) fn = own;
    return own ? statement : undefined;
  });
  return found && fn ? { fn, source: found.source } : undefined;
}

/**
 * `repo.create(…)` on an object a factory function returned: `const repo = createRepository(db)` in this file, or a
 * Fastify decorator made by one (`fastify.decorate('tasksRepository', createRepository(fastify))`, reached as
 * `fastify.tasksRepository.create(…)` or destructured, `const { tasksRepository } = fastify`). The member is the
 * function the factory's `return { create, async update() {…} }` puts under that name.
 */
function factoryMethod(ctx: Pick<ProjectContext, 'sources'>, source: SourceContext, callee: ts.PropertyAccessExpression): Callee | undefined {
  const receiver = unwrap(callee.expression);
  const holder = ts.isIdentifier(receiver) ? receiver.text : ts.isPropertyAccessExpression(receiver) ? receiver.name.text : undefined;
  if (holder === undefined) return undefined;
  const made = (ts.isIdentifier(receiver) ? localFactory(source, holder) : undefined) ?? decoratedFactory(ctx, holder);
  if (!made) return undefined;
  const own = topLevelFunction(made.source.sf, made.factory);
  const factory = own ? { fn: own, source: made.source } : importedFunction(ctx, made.source, made.factory);
  if (!factory) return undefined;
  const member = returnedMember(factory.fn, callee.name.text);
  if (member) return { fn: member, source: factory.source };
  // `makeCreateLeadUseCase()` returning `new CreateLeadUseCase(repository)`: the class's method, run as that instance.
  const made2 = returnedClass(factory.fn);
  const cls = made2 !== undefined ? classNamed(ctx, factory.source, made2, 0) : undefined;
  const method = cls && methodOf(cls.cls, callee.name.text);
  return method && cls ? { fn: method, source: cls.source, self: cls } : undefined;
}

/** The class a factory returns an instance of: `return new X(…)`, or a local `const x = new X(…)` it returns. */
function returnedClass(factory: ts.FunctionLikeDeclaration): string | undefined {
  const instances = new Map<string, string>();
  const returned: ts.Expression[] = [];
  if (factory.body && !ts.isBlock(factory.body)) returned.push(factory.body);
  const visit = (node: ts.Node): void => {
    if (node !== factory && isFunctionLike(node)) return;
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) {
      const init = unwrap(node.initializer);
      if (ts.isNewExpression(init) && ts.isIdentifier(init.expression)) instances.set(node.name.text, init.expression.text);
    }
    if (ts.isReturnStatement(node) && node.expression) returned.push(node.expression);
    ts.forEachChild(node, visit);
  };
  visit(factory);
  const classes = new Set(
    returned.map((value) => {
      const expr = unwrap(value);
      return ts.isNewExpression(expr) && ts.isIdentifier(expr.expression) ? expr.expression.text : ts.isIdentifier(expr) ? instances.get(expr.text) : undefined;
    }),
  );
  return classes.size === 1 ? [...classes][0] : undefined;
}

/**
 * `Team.cancelSubscription(…)` on a Mongoose model whose schema took the method as a static: `schema.loadClass(TeamClass)`
 * (the class's methods), `schema.statics.name = fn`, `schema.static('name', fn)`. The model is
 * `mongoose.model('Team', schema)` (or `model<…>(…)`), declared in this file or imported from the one that is.
 */
function modelStatic(ctx: Pick<ProjectContext, 'sources'>, source: SourceContext, callee: ts.PropertyAccessExpression): Callee | undefined {
  const receiver = unwrap(callee.expression);
  if (!ts.isIdentifier(receiver) || !/^[A-Z]/.test(receiver.text) || !source.dependencies.has('mongoose')) return undefined;
  const from = defaultImport(source.sf, receiver.text);
  const target = from ? resolveModule(ctx, source.rel, from) : undefined;
  let at = target ?? source;
  let name = receiver.text;
  if (target) {
    const exported = target.sf.statements.find((s): s is ts.ExportAssignment => ts.isExportAssignment(s) && !s.isExportEquals);
    if (!exported || !ts.isIdentifier(exported.expression)) return undefined;
    name = exported.expression.text;
  }
  const model = declarationNamed(ctx, at, name, target ? 1 : 0, (statement, wanted) => (modelSchema(statement, wanted) !== undefined ? statement : undefined));
  const schema = model && modelSchema(model.node, name);
  if (!model || schema === undefined) return undefined;
  at = model.source;
  const member = callee.name.text;
  for (const statement of at.sf.statements) {
    if (!ts.isExpressionStatement(statement)) continue;
    const expr = statement.expression;
    if (ts.isCallExpression(expr) && ts.isPropertyAccessExpression(expr.expression) && expr.expression.expression.getText(at.sf) === schema) {
      const [first, second] = expr.arguments;
      if (expr.expression.name.text === 'loadClass' && first && ts.isIdentifier(first)) {
        const cls = classNamed(ctx, at, first.text, 1);
        const fn = cls && methodOf(cls.cls, member);
        if (fn && cls) return { fn, source: cls.source };
      }
      if (expr.expression.name.text === 'static' && first && ts.isStringLiteralLike(first) && first.text === member) {
        const fn = functionValue(at.sf, second);
        if (fn) return { fn, source: at };
      }
    }
    // `schema.statics.name = fn`
    if (ts.isBinaryExpression(expr) && expr.operatorToken.kind === ts.SyntaxKind.EqualsToken && expr.left.getText(at.sf) === `${schema}.statics.${member}`) {
      const fn = functionValue(at.sf, expr.right);
      if (fn) return { fn, source: at };
    }
  }
  return undefined;
}

/** `const Team = mongoose.model<…>('Team', schema)` declaring `name`: the schema's name. */
function modelSchema(statement: ts.Statement, name: string): string | undefined {
  if (!ts.isVariableStatement(statement)) return undefined;
  const decl = statement.declarationList.declarations.find((d) => ts.isIdentifier(d.name) && d.name.text === name);
  const init = decl?.initializer && unwrap(decl.initializer);
  const schema = init && ts.isCallExpression(init) ? mongooseModel(init)?.schema : undefined;
  return schema && ts.isIdentifier(schema) ? schema.text : undefined;
}

const LOCAL_FACTORIES = new WeakMap<ts.SourceFile, Map<string, string>>();

/**
 * `const repo = createRepository(db)` anywhere in the file: the factory's name. The file's variables made by a call
 * are read in one walk and kept (every unresolved member call of the file asks).
 */
function localFactory(source: SourceContext, holder: string): { source: SourceContext; factory: string } | undefined {
  let made = LOCAL_FACTORIES.get(source.sf);
  if (!made) {
    const found = new Map<string, string>();
    const visit = (node: ts.Node): void => {
      if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer && !found.has(node.name.text)) {
        const init = unwrap(node.initializer);
        if (ts.isCallExpression(init) && ts.isIdentifier(init.expression)) found.set(node.name.text, init.expression.text);
      }
      ts.forEachChild(node, visit);
    };
    visit(source.sf);
    LOCAL_FACTORIES.set(source.sf, (made = found));
  }
  const factory = made.get(holder);
  return factory === undefined ? undefined : { source, factory };
}

const DECORATED = new WeakMap<object, Map<string, { source: SourceContext; factory: string }>>();

/** Every `x.decorate('name', factory(…))` of the project (Fastify decorators), read once per project. */
function decoratedFactory(ctx: Pick<ProjectContext, 'sources'>, holder: string): { source: SourceContext; factory: string } | undefined {
  let found = DECORATED.get(ctx.sources);
  if (!found) {
    found = new Map();
    for (const source of ctx.sources) {
      if (!source.text.includes('.decorate(')) continue;
      const visit = (node: ts.Node): void => {
        if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'decorate') {
          const [name, value] = node.arguments;
          const init = value && unwrap(value);
          if (name && ts.isStringLiteralLike(name) && init && ts.isCallExpression(init) && ts.isIdentifier(init.expression) && !found!.has(name.text)) {
            found!.set(name.text, { source, factory: init.expression.text });
          }
        }
        ts.forEachChild(node, visit);
      };
      visit(source.sf);
    }
    DECORATED.set(ctx.sources, found);
  }
  return found.get(holder);
}

/** A function the file imports by name, followed to the module that defines it. */
function importedFunction(ctx: Pick<ProjectContext, 'sources'>, source: SourceContext, name: string): { fn: ts.FunctionLikeDeclaration; source: SourceContext } | undefined {
  const spec = importSpecifier(source.sf, name);
  const target = spec ? resolveModule(ctx, source.rel, spec.module) : undefined;
  const fn = target && spec ? topLevelFunction(target.sf, spec.imported) : undefined;
  return fn && target ? { fn, source: target } : target && spec ? reExportedFunction(ctx, target, spec.imported) : undefined;
}

/** The function under `name` in a factory's returned object literal (its own return statements, not nested ones). */
function returnedMember(factory: ts.FunctionLikeDeclaration, name: string): ts.FunctionLikeDeclaration | undefined {
  let member: ts.FunctionLikeDeclaration | undefined;
  const local = (id: string): ts.FunctionLikeDeclaration | undefined => {
    const body = factory.body;
    if (!body || !ts.isBlock(body)) return undefined;
    for (const statement of body.statements) {
      if (ts.isFunctionDeclaration(statement) && statement.name?.text === id && statement.body) return statement;
      if (ts.isVariableStatement(statement)) {
        for (const decl of statement.declarationList.declarations) {
          const init = decl.initializer && unwrap(decl.initializer);
          if (ts.isIdentifier(decl.name) && decl.name.text === id && init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init))) return init;
        }
      }
    }
    return undefined;
  };
  const fromObject = (value: ts.Expression): void => {
    const object = unwrap(value);
    if (!ts.isObjectLiteralExpression(object)) return;
    for (const property of object.properties) {
      if (!property.name || (!ts.isIdentifier(property.name) && !ts.isStringLiteral(property.name)) || property.name.text !== name) continue;
      if (ts.isMethodDeclaration(property) && property.body) member = property;
      else if (ts.isShorthandPropertyAssignment(property)) member = local(name);
      else if (ts.isPropertyAssignment(property)) {
        const init = unwrap(property.initializer);
        if (ts.isArrowFunction(init) || ts.isFunctionExpression(init)) member = init;
        else if (ts.isIdentifier(init)) member = local(init.text);
      }
    }
  };
  if (factory.body && !ts.isBlock(factory.body)) fromObject(factory.body);
  const visit = (node: ts.Node): void => {
    if (member || (node !== factory && isFunctionLike(node))) return;
    if (ts.isReturnStatement(node) && node.expression) fromObject(node.expression);
    ts.forEachChild(node, visit);
  };
  visit(factory);
  return member;
}

/**
 * The module a name taken from an index file stands for as a whole: `const { userService } = require('../services')`
 * or `import { userService } from '../services'`, where the index says `module.exports.userService =
 * require('./user.service')`, `exports.userService = …`, `module.exports = { userService: require(…) }` (or a
 * shorthand of a required name), `export * as userService from './user.service'` or `export { default as userService }`.
 */
function namedModule(ctx: Pick<ProjectContext, 'sources'>, source: SourceContext, local: string): SourceContext | undefined {
  const named = requireSpecifier(source.sf, local, true) ?? importSpecifier(source.sf, local);
  const index = named ? resolveModule(ctx, source.rel, named.module) : undefined;
  if (!named || !index) return undefined;
  const spec = indexEntry(index.sf, named.imported);
  return spec === undefined ? undefined : resolveModule(ctx, index.rel, spec);
}

/** The specifier an index file exports under `name` (see namedModule). */
function indexEntry(sf: ts.SourceFile, name: string): string | undefined {
  const required = (expr: ts.Expression | undefined): string | undefined => {
    const node = expr && unwrap(expr);
    if (!node) return undefined;
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'require' && node.arguments[0] && ts.isStringLiteral(node.arguments[0])) return node.arguments[0].text;
    return ts.isIdentifier(node) ? (requireSpecifier(sf, node.text, false)?.module ?? namespaceImport(sf, node.text)) : undefined;
  };
  for (const statement of sf.statements) {
    if (ts.isExportDeclaration(statement) && statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier)) {
      const clause = statement.exportClause;
      if (clause && ts.isNamespaceExport(clause) && clause.name.text === name) return statement.moduleSpecifier.text;
      if (clause && ts.isNamedExports(clause) && clause.elements.some((e) => e.name.text === name && e.propertyName?.text === 'default')) return statement.moduleSpecifier.text;
      continue;
    }
    const expr = ts.isExpressionStatement(statement) ? statement.expression : undefined;
    if (!expr || !ts.isBinaryExpression(expr) || expr.operatorToken.kind !== ts.SyntaxKind.EqualsToken) continue;
    const left = expr.left.getText(sf);
    if (left === `exports.${name}` || left === `module.exports.${name}`) return required(expr.right);
    if (left === 'module.exports' && ts.isObjectLiteralExpression(expr.right)) {
      for (const prop of expr.right.properties) {
        if (ts.isShorthandPropertyAssignment(prop) && prop.name.text === name) return required(prop.name);
        if (ts.isPropertyAssignment(prop) && (ts.isIdentifier(prop.name) || ts.isStringLiteral(prop.name)) && prop.name.text === name) return required(prop.initializer);
      }
    }
  }
  return undefined;
}

/** A class and the file it is declared in. */
export interface ClassAt {
  cls: ts.ClassLikeDeclaration;
  source: SourceContext;
}

/**
 * A function a call runs; for a method, `self` is the class `this` is in it: the receiver's class, which may be a
 * subclass of the one declaring the method (a base class's `modifyPayment` calling `this.capturePayment()` runs the
 * subclass's).
 */
export interface Callee {
  fn: ts.FunctionLikeDeclaration;
  source: SourceContext;
  self?: ClassAt;
}

/**
 * `this.method()` in the same class, and `this.service.method()` on a field whose declared type is a class of the
 * project: a constructor parameter property (`private readonly stripeService: StripeService`, NestJS's injection)
 * or a typed property. The class is found in the file, or through its import and the re-exports of index files.
 */
function injectedMethod(ctx: Pick<ProjectContext, 'sources'>, source: SourceContext, call: ts.CallExpression, self?: ClassAt): Callee | undefined {
  if (!ts.isPropertyAccessExpression(call.expression)) return undefined;
  const method = call.expression.name.text;
  const receiver = call.expression.expression;
  const typed = typedReceiverClass(ctx, source, receiver);
  if (typed) return withSelf(inheritedMethod(ctx, typed, method, 0), typed);
  let cls: ts.Node | undefined = call.parent;
  while (cls && !ts.isClassDeclaration(cls) && !ts.isClassExpression(cls)) cls = cls.parent;
  if (!cls) return undefined;
  const owner = cls as ts.ClassLikeDeclaration;
  if (receiver.kind === ts.SyntaxKind.ThisKeyword) {
    // `this` is the class the walk came in through when that one inherits from this method's class.
    const at = self && inherits(ctx, self, owner) ? self : { cls: owner, source };
    return withSelf(inheritedMethod(ctx, at, method, 0), at);
  }
  if (!ts.isPropertyAccessExpression(receiver) || receiver.expression.kind !== ts.SyntaxKind.ThisKeyword) return undefined;
  const typeName = fieldType(owner, receiver.name.text);
  if (!typeName) return undefined;
  const named = classNamed(ctx, source, typeName, 0);
  const token = injectionToken(owner, receiver.name.text, source);
  // An abstract class as the port (`usersRepository: UserRepository`, bound to an adapter by a module): its adapter.
  const target = named && isAbstract(named.cls) ? (implementationOf(ctx, source, typeName, token ?? typeName, true) ?? named) : (named ?? implementationOf(ctx, source, typeName, token));
  return target && withSelf(inheritedMethod(ctx, target, method, 0), target);
}

/**
 * The class behind a field typed with an interface (`@Inject(PAYMENT_REPOSITORY) private readonly repo:
 * IPaymentRepository`, the ports-and-adapters shape): the one project class that `implements` it, or, when there are
 * several (a Postgres one and an in-memory one for tests), the one a NestJS module binds to the injection token
 * (`{ provide: PAYMENT_REPOSITORY, useClass: PaymentRepository }`). Undefined when that does not settle it.
 */
function implementationOf(ctx: Pick<ProjectContext, 'sources'>, source: SourceContext, typeName: string, token: string | undefined, abstractBase = false): ClassAt | undefined {
  if (!abstractBase && !typeDeclaration(ctx, source, typeName, 0)) return undefined;
  const names = (h: ts.HeritageClause) => h.types.some((t) => ts.isIdentifier(t.expression) && t.expression.text === typeName);
  const classes = ctx.sources.flatMap((s) =>
    s.sf.statements.flatMap((st) => (ts.isClassDeclaration(st) && st.name && st.heritageClauses?.some((h) => (h.token === ts.SyntaxKind.ImplementsKeyword || abstractBase) && names(h)) ? [{ cls: st as ts.ClassLikeDeclaration, source: s }] : [])),
  );
  if (classes.length <= 1) return classes[0];
  const bound = token === undefined ? undefined : boundClass(ctx, token);
  if (bound !== undefined) return classes.find((c) => c.cls.name?.text === bound);
  return adapterForDatabase(ctx, classes);
}

const isAbstract = (cls: ts.ClassLikeDeclaration) => (ts.canHaveModifiers(cls) ? ts.getModifiers(cls) : undefined)?.some((m) => m.kind === ts.SyntaxKind.AbstractKeyword) ?? false;

/** Folders and file names that say which kind of database a persistence adapter is for. */
const ADAPTER_FAMILY = { sql: /relational|typeorm|prisma|drizzle|knex|sequelize|kysely|mikro-?orm|postgres|mysql|mariadb|sqlite|libsql|turso|\bsql\b/i, document: /document|mongo(ose)?\b|mongodb|dynamo/i };

/**
 * Of several adapters of one port that modules bind alternately (brocoders/nestjs-boilerplate binds UserRepository to
 * a relational and a document adapter, chosen by configuration at boot), the one for the configured database, told
 * by its path (`persistence/relational/…`, `persistence/document/…`). Undefined when that does not settle it.
 */
function adapterForDatabase(ctx: Pick<ProjectContext, 'sources'>, classes: readonly ClassAt[]): ClassAt | undefined {
  const database = (ctx as Partial<ProjectContext>).config?.stack.database;
  const family = database === 'mongodb' || database === 'dynamodb' ? ADAPTER_FAMILY.document : database === 'postgres' || database === 'mysql' || database === 'mariadb' || database === 'sqlite' || database === 'libsql' ? ADAPTER_FAMILY.sql : undefined;
  if (!family) return undefined;
  const matching = classes.filter((c) => family.test(c.source.rel));
  return matching.length === 1 ? matching[0] : undefined;
}

/** `@Inject(TOKEN)` on the constructor parameter that declares `field`. */
function injectionToken(cls: ts.ClassLikeDeclaration, field: string, source: SourceContext): string | undefined {
  const param = cls.members.find(ts.isConstructorDeclaration)?.parameters.find((p) => ts.isIdentifier(p.name) && p.name.text === field);
  for (const decorator of (param && ts.getDecorators(param)) ?? []) {
    const call = decorator.expression;
    if (ts.isCallExpression(call) && ts.isIdentifier(call.expression) && call.expression.text === 'Inject' && call.arguments[0]) return call.arguments[0].getText(source.sf);
  }
  return undefined;
}

/** The class a module provider binds to `token`: `{ provide: TOKEN, useClass: X }`, the same binding in every module that has one. */
function boundClass(ctx: Pick<ProjectContext, 'sources'>, token: string): string | undefined {
  const found = new Set<string>();
  for (const s of ctx.sources) {
    if (!s.text.includes('useClass')) continue;
    const visit = (node: ts.Node): void => {
      if (ts.isObjectLiteralExpression(node)) {
        const provide = node.properties.find((p): p is ts.PropertyAssignment => ts.isPropertyAssignment(p) && ts.isIdentifier(p.name) && p.name.text === 'provide');
        const use = node.properties.find((p): p is ts.PropertyAssignment => ts.isPropertyAssignment(p) && ts.isIdentifier(p.name) && p.name.text === 'useClass');
        if (provide && use && provide.initializer.getText(s.sf) === token && ts.isIdentifier(use.initializer)) found.add(use.initializer.text);
      }
      ts.forEachChild(node, visit);
    };
    visit(s.sf);
  }
  return found.size === 1 ? [...found][0] : undefined;
}

const withSelf = (callee: Callee | undefined, self: ClassAt): Callee | undefined => callee && { ...callee, self };

/** Whether `sub` is `base` or extends it (through the project's classes). */
function inherits(ctx: Pick<ProjectContext, 'sources'>, sub: ClassAt, base: ts.ClassLikeDeclaration, depth = 0): boolean {
  if (sub.cls === base) return true;
  if (depth >= 3) return false;
  const parent = baseClass(ctx, sub);
  return parent !== undefined && inherits(ctx, parent, base, depth + 1);
}

function baseClass(ctx: Pick<ProjectContext, 'sources'>, at: ClassAt): ClassAt | undefined {
  const base = at.cls.heritageClauses?.find((h) => h.token === ts.SyntaxKind.ExtendsKeyword)?.types[0]?.expression;
  return base && ts.isIdentifier(base) ? classNamed(ctx, at.source, base.text, 0) : undefined;
}

/** The method as the class has it: its own, else its base class's (`extends AbstractPaymentService`), of the project. */
function inheritedMethod(ctx: Pick<ProjectContext, 'sources'>, at: ClassAt, name: string, depth: number): Callee | undefined {
  const own = methodOf(at.cls, name);
  if (own) return { fn: own, source: at.source };
  if (depth >= 3) return undefined;
  const parent = baseClass(ctx, at);
  return parent && inheritedMethod(ctx, parent, name, depth + 1);
}

/**
 * The project class behind a receiver typed where it is bound: a parameter or variable declared with a class type
 * (`(service: StripeService) => service.charge()`), or one field of a parameter whose declared type lists it, through
 * type aliases, interfaces and intersections, here or imported (a Fastify plugin's
 * `opts: FastifyPluginOptions & { paymentService: StripePaymentService }`, then `opts.paymentService.charge()`).
 */
function typedReceiverClass(ctx: Pick<ProjectContext, 'sources'>, source: SourceContext, receiver: ts.Expression): { cls: ts.ClassLikeDeclaration; source: SourceContext } | undefined {
  if (ts.isIdentifier(receiver)) {
    const type = declaredType(receiver);
    const name = type && ts.isTypeReferenceNode(type) && ts.isIdentifier(type.typeName) ? type.typeName.text : undefined;
    return name ? classNamed(ctx, source, name, 0) : undefined;
  }
  if (!ts.isPropertyAccessExpression(receiver) || !ts.isIdentifier(receiver.expression)) return undefined;
  const type = declaredType(receiver.expression);
  const member = type && memberType(ctx, source, type, receiver.name.text, 0);
  const name = member && ts.isTypeReferenceNode(member.type) && ts.isIdentifier(member.type.typeName) ? member.type.typeName.text : undefined;
  return name && member ? classNamed(ctx, member.source, name, 0) : undefined;
}

const PUBLISHES = new WeakMap<ts.SourceFile, PublishSite[]>();

/** The broker publishes in a file (inspect's publishes detector, on the code facts' own parse), read once per file. */
function publishesOf(source: SourceContext): PublishSite[] {
  const cached = PUBLISHES.get(source.sf);
  if (cached) return cached;
  const modules = [...source.text.matchAll(/(?:\bfrom\s+|\brequire\(\s*|\bimport\(\s*)['"]([^'"]+)['"]/g)].map((m) => m[1]!);
  const found: ts.CallExpression[] = [];
  const news: ts.NewExpression[] = [];
  const consts = new Map<string, ts.Expression>();
  const walk = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) found.push(node);
    else if (ts.isNewExpression(node)) news.push(node);
    else if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) consts.set(node.name.text, node.initializer);
    ts.forEachChild(node, walk);
  };
  walk(source.sf);
  const sites = publishSites(source.sf, source.text, brokersImported(modules), found, news, (name) => consts.get(name));
  PUBLISHES.set(source.sf, sites);
  return sites;
}

/** More implementations than this and the call is too generic to say what it runs. */
const MAX_DISPATCH = 12;

/**
 * The methods a call on an interface-typed or base-class-typed value may run: `handler.handle(job.data)` where
 * `handler` is declared with that type or comes from a lookup method declared to return it
 * (`const handler = Oxen.jobRegistry.getJob(job.name)`, `getJob(name): IOxenJob`), as a worker that dispatches by job
 * name writes it. Each project class that implements or extends the type (through subclasses, three levels) and has
 * the method with a body is one target; none when the type is not found or more than MAX_DISPATCH classes match.
 */
function dispatchTargets(ctx: Pick<ProjectContext, 'sources'>, source: SourceContext, call: ts.CallExpression): Callee[] {
  if (!ts.isPropertyAccessExpression(call.expression)) return [];
  const method = call.expression.name.text;
  const typeName = dispatchType(ctx, unwrap(call.expression.expression));
  if (!typeName) return [];
  const targets = heirsOf(ctx, typeName).flatMap((at) => {
    const fn = methodOf(at.cls, method);
    return fn ? [{ fn, source: at.source, self: at }] : [];
  });
  return targets.length <= MAX_DISPATCH ? targets : [];
}

const HEIRS = new WeakMap<object, Map<string, ClassAt[]>>();

/** The project's classes that are `typeName` or implement or extend it, directly or through their subclasses. */
function heirsOf(ctx: Pick<ProjectContext, 'sources'>, typeName: string): ClassAt[] {
  let byType = HEIRS.get(ctx.sources);
  if (!byType) HEIRS.set(ctx.sources, (byType = new Map()));
  const cached = byType.get(typeName);
  if (cached) return cached;
  const names = new Set([typeName]);
  const classes: ClassAt[] = [];
  for (let level = 0; level < 4; level++) {
    let grew = false;
    for (const s of ctx.sources) {
      for (const st of s.sf.statements) {
        if (!ts.isClassDeclaration(st) || !st.name || classes.some((c) => c.cls === st)) continue;
        const heirs = st.name.text === typeName || st.heritageClauses?.some((h) => h.types.some((t) => ts.isIdentifier(t.expression) && names.has(t.expression.text)));
        if (!heirs) continue;
        classes.push({ cls: st, source: s });
        names.add(st.name.text);
        grew = true;
      }
    }
    if (!grew) break;
  }
  // An interface no class names (`implements` is optional in TypeScript): the classes that have all its methods.
  const result = classes.length > 0 ? classes : structuralHeirs(ctx, typeName);
  byType.set(typeName, result);
  return result;
}

/**
 * The classes shaped like the interface `typeName`: each declares every method the interface requires (two at the
 * least, so a one-method interface does not match any class that happens to share the name), with their subclasses.
 */
function structuralHeirs(ctx: Pick<ProjectContext, 'sources'>, typeName: string): ClassAt[] {
  const declared = ctx.sources.flatMap((s) => s.sf.statements.filter((st): st is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(st) && st.name.text === typeName));
  if (declared.length !== 1) return [];
  const required = declared[0]!.members.flatMap((m) => ((ts.isMethodSignature(m) || (ts.isPropertySignature(m) && m.type !== undefined && ts.isFunctionTypeNode(m.type))) && !m.questionToken && m.name && ts.isIdentifier(m.name) ? [m.name.text] : []));
  if (required.length < 2) return [];
  const out: ClassAt[] = [];
  for (const s of ctx.sources) {
    for (const st of s.sf.statements) {
      if (!ts.isClassDeclaration(st) || !st.name) continue;
      const own = new Set(st.members.flatMap((m) => (m.name && ts.isIdentifier(m.name) ? [m.name.text] : [])));
      if (!required.every((name) => own.has(name))) continue;
      for (const heir of heirsOf(ctx, st.name.text)) if (!out.some((c) => c.cls === heir.cls)) out.push(heir);
    }
  }
  return out;
}

/** The type name a receiver is declared with, or that the lookup it comes from returns: `IOxenJob` for `getJob(name): IOxenJob`. */
function dispatchType(ctx: Pick<ProjectContext, 'sources'>, receiver: ts.Expression): string | undefined {
  let lookup: ts.Expression | undefined = receiver;
  if (ts.isIdentifier(receiver)) {
    const binding = bindingOf(receiver);
    const named = typeReferenceName(binding?.type);
    if (named) return named;
    lookup = binding && ts.isVariableDeclaration(binding) ? binding.initializer : undefined;
  }
  lookup = lookup && unwrap(lookup);
  if (lookup && ts.isAwaitExpression(lookup)) lookup = unwrap(lookup.expression);
  if (!lookup || !ts.isCallExpression(lookup)) return undefined;
  const callee = lookup.expression;
  const name = ts.isPropertyAccessExpression(callee) ? callee.name.text : ts.isIdentifier(callee) ? callee.text : undefined;
  if (!name) return undefined;
  // A dependency-injection container asked for a class (typedi's `Container.get(CreateProductCommand)`, tsyringe's
  // `container.resolve(X)`, NestJS's `app.get(X)` / `moduleRef.get(X)`): an instance of that class.
  const asked = lookup.arguments[0];
  if (/^(get|resolve|getInstance)$/.test(name) && asked && ts.isIdentifier(asked) && /^[A-Z]/.test(asked.text) && heirsOf(ctx, asked.text).length > 0) return asked.text;
  let byName = RETURNED.get(ctx.sources);
  if (!byName) RETURNED.set(ctx.sources, (byName = new Map()));
  if (!byName.has(name)) byName.set(name, returnedType(ctx, name));
  return byName.get(name);
}

const RETURNED = new WeakMap<object, Map<string, string | undefined>>();

/** The one type name the project's methods and functions called `name` are declared to return. */
function returnedType(ctx: Pick<ProjectContext, 'sources'>, name: string): string | undefined {
  const returned = new Set<string>();
  for (const s of ctx.sources) {
    if (!s.text.includes(name)) continue;
    const visit = (node: ts.Node): void => {
      if ((ts.isMethodDeclaration(node) || ts.isFunctionDeclaration(node)) && node.name && ts.isIdentifier(node.name) && node.name.text === name) {
        const type = typeReferenceName(node.type);
        if (type) returned.add(type);
      }
      if (ts.isClassDeclaration(node) || ts.isSourceFile(node) || ts.isModuleBlock(node) || ts.isModuleDeclaration(node)) ts.forEachChild(node, visit);
    };
    visit(s.sf);
  }
  return returned.size === 1 ? [...returned][0] : undefined;
}

/** `IOxenJob` of `IOxenJob`, `IOxenJob | undefined`, `Promise<IOxenJob>`; undefined for anything else. */
function typeReferenceName(type: ts.TypeNode | undefined): string | undefined {
  if (!type) return undefined;
  if (ts.isUnionTypeNode(type)) {
    const named = type.types.filter((t) => t.kind !== ts.SyntaxKind.UndefinedKeyword && !(ts.isLiteralTypeNode(t) && t.literal.kind === ts.SyntaxKind.NullKeyword));
    return named.length === 1 ? typeReferenceName(named[0]) : undefined;
  }
  if (!ts.isTypeReferenceNode(type) || !ts.isIdentifier(type.typeName)) return undefined;
  if (type.typeName.text === 'Promise') return typeReferenceName(type.typeArguments?.[0]);
  return type.typeName.text;
}

/** The nearest parameter or `const`/`let` named as `id` in the functions and blocks around it. */
function bindingOf(id: ts.Identifier): ts.ParameterDeclaration | ts.VariableDeclaration | undefined {
  for (let node: ts.Node | undefined = id.parent; node; node = node.parent) {
    if (ts.isFunctionLike(node)) {
      const param = node.parameters.find((p) => ts.isIdentifier(p.name) && p.name.text === id.text);
      if (param) return param;
    }
    if (ts.isBlock(node) || ts.isSourceFile(node)) {
      for (const statement of node.statements) {
        if (!ts.isVariableStatement(statement)) continue;
        const declaration = statement.declarationList.declarations.find((d) => ts.isIdentifier(d.name) && d.name.text === id.text);
        if (declaration) return declaration;
      }
    }
  }
  return undefined;
}

/** The type written on the parameter or variable `id` names. */
const declaredType = (id: ts.Identifier): ts.TypeNode | undefined => bindingOf(id)?.type;

/** The declared type of property `name` in `type`: a type literal, an intersection, or a named alias/interface. */
function memberType(ctx: Pick<ProjectContext, 'sources'>, source: SourceContext, type: ts.TypeNode, name: string, depth: number): { type: ts.TypeNode; source: SourceContext } | undefined {
  if (depth > 3) return undefined;
  if (ts.isParenthesizedTypeNode(type)) return memberType(ctx, source, type.type, name, depth);
  if (ts.isIntersectionTypeNode(type)) {
    for (const part of type.types) {
      const found = memberType(ctx, source, part, name, depth);
      if (found) return found;
    }
    return undefined;
  }
  if (ts.isTypeLiteralNode(type)) return propertyOf(type.members, name, source);
  if (!ts.isTypeReferenceNode(type) || !ts.isIdentifier(type.typeName)) return undefined;
  const declared = typeDeclaration(ctx, source, type.typeName.text, 0);
  if (!declared) return undefined;
  if (ts.isInterfaceDeclaration(declared.node)) return propertyOf(declared.node.members, name, declared.source);
  return memberType(ctx, declared.source, declared.node.type, name, depth + 1);
}

function propertyOf(members: ts.NodeArray<ts.TypeElement>, name: string, source: SourceContext): { type: ts.TypeNode; source: SourceContext } | undefined {
  const member = members.find((m): m is ts.PropertySignature => ts.isPropertySignature(m) && !!m.type && (ts.isIdentifier(m.name) || ts.isStringLiteral(m.name)) && m.name.text === name);
  return member?.type ? { type: member.type, source } : undefined;
}

/** A type alias or interface declared in `source` under `name`, or imported there. */
function typeDeclaration(ctx: Pick<ProjectContext, 'sources'>, source: SourceContext, name: string, depth: number): { node: ts.TypeAliasDeclaration | ts.InterfaceDeclaration; source: SourceContext } | undefined {
  return declarationNamed(ctx, source, name, depth, (statement, wanted) => ((ts.isTypeAliasDeclaration(statement) || ts.isInterfaceDeclaration(statement)) && statement.name.text === wanted ? statement : undefined));
}

function methodOf(cls: ts.ClassLikeDeclaration, name: string): ts.FunctionLikeDeclaration | undefined {
  for (const member of cls.members) {
    if (ts.isMethodDeclaration(member) && member.body && ts.isIdentifier(member.name) && member.name.text === name) return member;
    if (ts.isPropertyDeclaration(member) && ts.isIdentifier(member.name) && member.name.text === name && member.initializer) {
      const init = member.initializer;
      if ((ts.isArrowFunction(init) || ts.isFunctionExpression(init)) && init.body) return init;
      // apply's `processOnce = bullmqProcessor({ core, action, handle: async (job) => … })`: the work is `handle`.
      const options = ts.isCallExpression(init) ? SCAFFOLD_WRAPPERS.get(init.expression.getText()) : undefined;
      const handle = options !== undefined && ts.isCallExpression(init) ? objectProperty(init.arguments[options], 'handle') : undefined;
      if (handle && (ts.isArrowFunction(handle) || ts.isFunctionExpression(handle)) && handle.body) return handle;
    }
  }
  return undefined;
}

/** The method a queue processor class runs for each job: `process` of a WorkerHost, else a `handle`. */
function processorMethod(cls: ts.ClassDeclaration): ts.FunctionLikeDeclaration | undefined {
  return methodOf(cls, 'process') ?? methodOf(cls, 'handle');
}

/** The class name a field is declared with: `constructor(private readonly x: X)` or `x: X` / `x!: X`. */
function fieldType(cls: ts.ClassLikeDeclaration, field: string): string | undefined {
  const typeName = (type: ts.TypeNode | undefined) => (type && ts.isTypeReferenceNode(type) && ts.isIdentifier(type.typeName) ? type.typeName.text : undefined);
  for (const member of cls.members) {
    if (ts.isPropertyDeclaration(member) && ts.isIdentifier(member.name) && member.name.text === field) return typeName(member.type);
    if (ts.isConstructorDeclaration(member)) {
      for (const param of member.parameters) {
        const isField = ts.getModifiers(param)?.some((m) => m.kind === ts.SyntaxKind.PrivateKeyword || m.kind === ts.SyntaxKind.ProtectedKeyword || m.kind === ts.SyntaxKind.PublicKeyword || m.kind === ts.SyntaxKind.ReadonlyKeyword);
        if (isField && ts.isIdentifier(param.name) && param.name.text === field) return typeName(param.type);
      }
    }
  }
  return undefined;
}

/** A class declared in `source` under `name`, or imported there (following `export … from` up to three files). */
function classNamed(ctx: Pick<ProjectContext, 'sources'>, source: SourceContext, name: string, depth: number): { cls: ts.ClassLikeDeclaration; source: SourceContext } | undefined {
  const found = declarationNamed(ctx, source, name, depth, (statement, wanted) => (ts.isClassDeclaration(statement) && statement.name?.text === wanted ? statement : undefined));
  return found && { cls: found.node, source: found.source };
}

/**
 * The top-level statement of `source` that `pick` accepts for `name`, else the one the file imports under that name,
 * following imports and the re-exports of index files (`export { X } from`, `export * from`) up to three files.
 */
function declarationNamed<T extends ts.Statement>(ctx: Pick<ProjectContext, 'sources'>, source: SourceContext, name: string, depth: number, pick: (statement: ts.Statement, name: string) => T | undefined): { node: T; source: SourceContext } | undefined {
  for (const statement of source.sf.statements) {
    const node = pick(statement, name);
    if (node) return { node, source };
  }
  if (depth > 3) return undefined;
  const follow = (specifier: string, imported: string) => {
    const target = resolveModule(ctx, source.rel, specifier);
    return target ? declarationNamed(ctx, target, imported, depth + 1, pick) : undefined;
  };
  const spec = importSpecifier(source.sf, name);
  if (spec) return follow(spec.module, spec.imported);
  for (const statement of source.sf.statements) {
    if (!ts.isExportDeclaration(statement) || !statement.moduleSpecifier || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    const clause = statement.exportClause;
    if (clause && ts.isNamedExports(clause)) {
      const element = clause.elements.find((e) => e.name.text === name);
      if (element) return follow(statement.moduleSpecifier.text, (element.propertyName ?? element.name).text);
    } else if (!clause) {
      const found = follow(statement.moduleSpecifier.text, name);
      if (found) return found;
    }
  }
  return undefined;
}

function topLevelFunction(sf: ts.SourceFile, name: string): ts.FunctionLikeDeclaration | undefined {
  return functionAmong(sf.statements, name);
}

/** The function declared under `name` by one of `statements`: `function name()` or `const name = () => …`. */
function functionAmong(statements: readonly ts.Statement[], name: string): ts.FunctionLikeDeclaration | undefined {
  for (const statement of statements) {
    if (ts.isFunctionDeclaration(statement) && statement.name?.text === name && statement.body) return statement;
    if (ts.isVariableStatement(statement)) {
      for (const decl of statement.declarationList.declarations) {
        if (!ts.isIdentifier(decl.name) || decl.name.text !== name || !decl.initializer) continue;
        const init = unwrapWrapper(decl.initializer);
        if (init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init)) && init.body) return init;
      }
    }
  }
  return undefined;
}

/**
 * The parsed module a file's named import `local` comes from: undefined when the file imports no such name, null when
 * it does but the module is none of the parsed files (a package, an unresolved path).
 */
export function namedImportOrigin(ctx: Pick<ProjectContext, 'sources' | 'aliases'>, source: SourceContext, local: string): SourceContext | null | undefined {
  // A default import (`import handleRoute from './group-invite'`) binds the name as much as a named one.
  const byDefault = source.sf.statements.find((s): s is ts.ImportDeclaration => ts.isImportDeclaration(s) && s.importClause?.name?.text === local);
  const module = importSpecifier(source.sf, local)?.module ?? (byDefault && ts.isStringLiteral(byDefault.moduleSpecifier) ? byDefault.moduleSpecifier.text : undefined);
  return module === undefined ? undefined : (resolveModule(ctx, source.rel, module) ?? null);
}

function importSpecifier(sf: ts.SourceFile, local: string): { module: string; imported: string } | undefined {
  for (const statement of sf.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    const bindings = statement.importClause?.namedBindings;
    if (!bindings || !ts.isNamedImports(bindings)) continue;
    for (const element of bindings.elements) {
      if (element.name.text === local) return { module: statement.moduleSpecifier.text, imported: (element.propertyName ?? element.name).text };
    }
  }
  return undefined;
}

const projectFiles = new WeakMap<Pick<ProjectContext, 'sources'>, { files: ModuleFiles; byRel: Map<string, SourceContext> }>();

/** An import to the parsed file it names, by the inspector's resolver (relative, `@/` aliases, baseUrl paths). */
function resolveModule(ctx: Pick<ProjectContext, 'sources' | 'aliases'>, from: string, spec: string): SourceContext | undefined {
  let project = projectFiles.get(ctx);
  if (!project) {
    const byRel = new Map(ctx.sources.map((s) => [s.rel, s]));
    // The engine knows no package boundaries: a file's package is what precedes its `src/` folder (apps/api/src/x.ts).
    const pkgDir = (rel: string) => {
      const at = rel.lastIndexOf('/src/');
      return at > 0 ? rel.slice(0, at) : '';
    };
    project = { byRel, files: { has: (rel) => byRel.has(rel), pkgDir, packagesByName: new Map(), ...(ctx.aliases ? { aliases: ctx.aliases } : {}) } };
    projectFiles.set(ctx, project);
  }
  const rel = resolveSpecifier(project.files, from, spec);
  return rel === undefined ? undefined : project.byRel.get(rel);
}

const NAME = '["`]?([A-Za-z_][\\w.]*)["`]?';
/**
 * SQL writes by their shape, not their first word, so prose in a log message ("rejecting update to avoid …") is not
 * a write: INSERT INTO t ( | VALUES | SELECT | SET | DEFAULT, UPDATE t [alias] SET, DELETE FROM t [alias] WHERE | USING |
 * RETURNING, or a text that is only DELETE FROM t.
 */
const SQL_WRITES: Array<{ pattern: RegExp; kind: 'insert' | 'update' | 'delete' }> = [
  { pattern: new RegExp(`\\bINSERT\\s+(?:IGNORE\\s+)?INTO\\s+${NAME}\\s*(?:\\(|VALUES\\b|SELECT\\b|SET\\b|DEFAULT\\b)`, 'i'), kind: 'insert' },
  { pattern: new RegExp(`\\bUPDATE\\s+${NAME}(?:\\s+(?:AS\\s+)?\\w+)?\\s+SET\\b`, 'i'), kind: 'update' },
  { pattern: new RegExp(`\\bDELETE\\s+FROM\\s+${NAME}(?:\\s+(?:AS\\s+)?(?!WHERE\\b|USING\\b|RETURNING\\b)\\w+)?\\s+(?:WHERE|USING|RETURNING)\\b`, 'i'), kind: 'delete' },
  // A whole statement that deletes every row: the text is nothing else.
  { pattern: new RegExp(`^\\s*DELETE\\s+FROM\\s+${NAME}\\s*;?\\s*$`, 'i'), kind: 'delete' },
];

function sqlWrite(text: string): { target: string; kind: WriteFact['kind']; relative?: string[] } | undefined {
  for (const { pattern, kind } of SQL_WRITES) {
    const m = pattern.exec(text);
    if (!m) continue;
    const upsert = kind === 'insert' && /ON\s+CONFLICT|ON\s+DUPLICATE/i.test(text);
    const relative = kind === 'update' || upsert ? sqlRelative(text) : [];
    return { target: m[1]!, kind: kind === 'insert' ? (upsert ? 'upsert' : 'create') : kind, ...(relative.length > 0 ? { relative } : {}) };
  }
  return undefined;
}

/** Columns set from themselves plus or minus something: `SET stock = stock - $1`, `balance = "balance" + ?`. */
function sqlRelative(text: string): string[] {
  const fields = new Set<string>();
  for (const m of text.matchAll(/(?:\bSET\b|,)\s*["`]?(\w+)["`]?\s*=\s*(?:\w+\.)?["`]?(\w+)["`]?\s*[-+]/gi)) {
    if (m[1]!.toLowerCase() === m[2]!.toLowerCase()) fields.add(m[1]!);
  }
  return [...fields];
}
/** `INSERT … ON CONFLICT (id)` with `randomUUID()` as the id never conflicts: a duplicate inserts a second row. */
function freshUpsert<W extends { target: string; kind: WriteFact['kind'] }>(write: W, call: ts.CallExpression | ts.TaggedTemplateExpression): W | { target: string; kind: WriteFact['kind']; freshKey: string } {
  const fresh = write.kind === 'upsert' ? perAttemptSqlKey(call) : undefined;
  return fresh ? { target: write.target, kind: 'create', freshKey: fresh.value } : write;
}
const DB_RECEIVER = /prisma|\bdb\b|database|supabase|knex|drizzle|\btx\b|\btrx\b|pool|client|sql|repo|repository/i;


/**
 * Writes told only by the repository's name (`tasksRepository.update(…)` → tasks): when the code facts also follow
 * that call into the repository and read the write itself, the guess is dropped (otherwise listed twice).
 */
const NAMED_BY_REPOSITORY = new WeakSet<WriteFact>();

function withoutGuessed(writes: readonly WriteFact[]): WriteFact[] {
  return writes.filter((w) => !NAMED_BY_REPOSITORY.has(w) || !writes.some((other) => other !== w && !NAMED_BY_REPOSITORY.has(other) && other.target === w.target && other.kind === w.kind));
}

/** Writes in `node`: ORM and query-builder calls (dataAccess), drizzle `db.insert(table)`, and SQL text. */
/** Libraries whose models write through static methods (`Order.create(…)`, `Order.updateOne(…)`). */
const MODEL_LIBRARIES = ['mongoose', '@typegoose/typegoose', 'sequelize', 'sequelize-typescript', 'dynamoose', 'ottoman'];

function writesIn(node: ts.Node, source: SourceContext): Array<{ pos: number; call: ts.Node; fact: WriteFact }> {
  const out: Array<{ pos: number; call: ts.Node; fact: WriteFact }> = [];
  // `Order.create(…)` is Mongoose's or Sequelize's: the project's dependencies tell.
  const mongooseModels = source.dependencies.has('mongoose') && !source.dependencies.has('sequelize') && !source.dependencies.has('sequelize-typescript');
  // `Transaction.create(rideId, amount)` in a project with no model library is a domain factory, not an insert.
  const models = MODEL_LIBRARIES.some((name) => source.dependencies.has(name));
  for (const access of dataAccesses(node)) {
    // Repository writes are read below with the function around them (repositoryWrite), once.
    if (access.kind === 'read' || access.target.startsWith('stripe.') || repositoryOf(access.call)) continue;
    if (access.library !== undefined && !models) continue;
    const mongo = access.library === 'mongoose' || (access.library === 'model' && mongooseModels);
    out.push({ pos: access.call.pos, call: access.call, fact: { target: access.target, kind: access.kind, file: source.rel, line: lineOf(source, access.call), ...(access.freshKey ? { freshKey: access.freshKey } : {}), ...(access.relative ? { relative: access.relative } : {}), ...(mongo ? { database: 'MongoDB' } : {}) } });
  }
  for (const call of calls(node)) {
    const repository = repositoryWrite(call, node);
    if (repository) {
      const fact: WriteFact = { ...repository, file: source.rel, line: lineOf(source, call) };
      NAMED_BY_REPOSITORY.add(fact);
      out.push({ pos: call.pos, call, fact });
      continue;
    }
    if (ts.isPropertyAccessExpression(call.expression)) {
      const method = call.expression.name.text;
      const receiver = call.expression.expression.getText(source.sf);
      const arg = call.arguments[0];
      // drizzle's `db.insert(users)` names its table; in a query chain (`knex('tasks').insert(newTask)`) the argument is
      // the data, and the chain's table was read above.
      if (/^(insert|update|delete)$/.test(method) && DB_RECEIVER.test(receiver) && arg && ts.isIdentifier(arg) && !ts.isCallExpression(unwrap(call.expression.expression))) {
        out.push({ pos: call.pos, call, fact: { target: arg.text, kind: method === 'insert' ? 'create' : method, file: source.rel, line: lineOf(source, call) } as WriteFact });
        continue;
      }
    }
    for (const arg of call.arguments) {
      const text = ts.isNoSubstitutionTemplateLiteral(arg) || ts.isStringLiteral(arg) ? arg.text : ts.isTemplateExpression(arg) ? arg.head.text : stringValue(arg);
      const found = text ? sqlWrite(text) : undefined;
      if (found) out.push({ pos: call.pos, call, fact: { ...freshUpsert(found, call), file: source.rel, line: lineOf(source, call) } });
    }
  }
  for (const tagged of collectTagged(node)) {
    const text = tagged.template.getText(source.sf);
    const found = sqlWrite(text);
    if (found) out.push({ pos: tagged.pos, call: tagged, fact: { ...freshUpsert(found, tagged), file: source.rel, line: lineOf(source, tagged) } });
  }
  return out.sort((a, b) => a.pos - b.pos);
}

function collectTagged(node: ts.Node): ts.TaggedTemplateExpression[] {
  const out: ts.TaggedTemplateExpression[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isTaggedTemplateExpression(n)) out.push(n);
    ts.forEachChild(n, visit);
  };
  visit(node);
  return out;
}

function withUnique(ctx: ProjectContext, write: WriteFact): WriteFact {
  const sets = ctx.schema.unique.get(normaliseName(write.target)) ?? ctx.schema.unique.get(normaliseName(write.target).replace(/s$/, ''));
  // A surrogate primary key (`id`) never stops a duplicate: only natural unique columns count.
  const natural = [...(sets ?? [])].filter((set) => set !== 'id').sort();
  return natural.length > 0 ? { ...write, uniqueColumns: natural } : write;
}

/** stripe-node: 80 s per attempt unless `timeout` is set. */
export const STRIPE_TIMEOUT_MS = 80_000;
/** @adyen/api-library: `connectionTimeoutMillis` defaults to 30 s; it does not retry on its own. */
export const ADYEN_TIMEOUT_MS = 30_000;

/** Time-out and attempts of the app's client for `provider`, read from its constructor, else the SDK's defaults. */
export function budgetFor(ctx: ProjectContext, provider: string): ProviderBudget | undefined {
  if (provider === 'stripe') return stripeBudget(ctx);
  if (provider === 'adyen') {
    for (const source of ctx.sources) {
      const m = /connectionTimeoutMillis\s*[:=]\s*([\d_]+)|setTimeouts\(\s*([\d_]+)\s*\)/.exec(source.text);
      if (m) return { provider, timeoutMs: Number((m[1] ?? m[2])!.replace(/_/g, '')), attempts: 1, evidence: `connectionTimeoutMillis in ${source.rel}` };
    }
    return { provider, timeoutMs: ADYEN_TIMEOUT_MS, attempts: 1, evidence: '@adyen/api-library default, no automatic retry' };
  }
  if (provider === 'paypal') {
    for (const source of ctx.sources) {
      if (!/@paypal\/paypal-server-sdk/.test(source.text)) continue;
      const m = /new\s+Client\s*\(\s*\{[\s\S]{0,800}?\btimeout\s*:\s*([\d_]+)/.exec(source.text);
      const ms = m ? Number(m[1]!.replace(/_/g, '')) : 0;
      if (ms > 0) return { provider, timeoutMs: ms, attempts: 1, evidence: `timeout in the PayPal Client of ${source.rel}; POST is not retried by the SDK` };
    }
    return { provider, timeoutMs: null, attempts: 1, evidence: 'the PayPal SDK sets no request time-out by default (timeout: 0)' };
  }
  return undefined;
}

/**
 * A provider reached over raw HTTP: the client's own `timeout` where the calling file sets one (an axios instance,
 * got.extend), else none: axios and got wait as long as the provider takes, and Node's fetch only gives up after
 * undici's 300 s header time-out. None of them retries a POST on its own.
 */
function httpBudget(provider: string, sources: readonly SourceContext[]): ProviderBudget | undefined {
  // The calling files only: a `timeout` elsewhere belongs to another client.
  const files = [...new Set(sources)];
  for (const source of files) {
    // `timeout: 15000` (axios, got) or `signal: AbortSignal.timeout(15000)` (fetch).
    const m = /\btimeout\s*[:(]\s*([\d_]+)/.exec(source.text);
    const ms = m ? Number(m[1]!.replace(/_/g, '')) : 0;
    if (ms > 0) return { provider, timeoutMs: ms, attempts: 1, evidence: `time-out of the HTTP call in ${source.rel}; a POST is not retried`, http: true };
  }
  if (files.length === 0) return undefined;
  const fetchOnly = files.every((f) => /\bfetch\s*\(/.test(f.text) && !/\b(axios|got|ky|undici)\b/.test(f.text));
  return fetchOnly
    ? { provider, timeoutMs: 300_000, attempts: 1, evidence: `fetch in ${files[0]!.rel} sets no time-out: Node's fetch waits up to undici's 300 s for the response headers`, http: true }
    : { provider, timeoutMs: null, attempts: 1, evidence: `raw HTTP calls in ${files[0]!.rel} set no time-out, and axios and got have none by default`, http: true };
}

function stripeBudget(ctx: ProjectContext): ProviderBudget {
  const defaults = stripeDefaults(ctx);
  for (const source of ctx.sources) {
    const m = /(?:new\s+Stripe|\bStripe)\s*\(([\s\S]{0,600}?)\)\s*[;\n]/.exec(source.text);
    if (!m) continue;
    const timeout = /\btimeout\s*:\s*([\d_]+)/.exec(m[1] ?? '')?.[1];
    const retries = /maxNetworkRetries\s*:\s*(\d+)/.exec(m[1] ?? '')?.[1];
    if (timeout || retries) {
      return {
        provider: 'stripe',
        timeoutMs: timeout ? Number(timeout.replace(/_/g, '')) : STRIPE_TIMEOUT_MS,
        attempts: (retries ? Number(retries) : defaults.retries) + 1,
        evidence: `new Stripe(…) in ${source.rel}${timeout ? '' : ', default time-out'}${retries ? '' : `, ${defaults.evidence}`}`,
      };
    }
  }
  return { provider: 'stripe', timeoutMs: STRIPE_TIMEOUT_MS, attempts: defaults.retries + 1, evidence: `stripe-node default time-out, ${defaults.evidence}` };
}

/**
 * stripe-node retries network failures on its own: none before v13, one from v13 (its changelog says so); 23.1.0
 * ships 2 (read from its source). When 2 became the default is not in the changelog: v20 is this table's reading.
 */
function stripeDefaults(ctx: ProjectContext): { retries: number; evidence: string } {
  const range = ctx.dependencies.get('stripe');
  const major = range ? Number(/(\d+)/.exec(range)?.[1]) : NaN;
  if (Number.isNaN(major)) return { retries: 2, evidence: 'stripe version unknown, 2 network retries assumed' };
  const retries = major < 13 ? 0 : major < 20 ? 1 : 2;
  return { retries, evidence: `stripe ${range}: ${retries} automatic network retr${retries === 1 ? 'y' : 'ies'}` };
}

/** Serverless limits: Next.js `export const maxDuration = 60` in the handler, or vercel.json `functions.*.maxDuration`. */
export function platformCap(ctx: ProjectContext, handlerText: string | undefined): { ms: number; evidence: string } | undefined {
  const own = /export\s+const\s+maxDuration\s*=\s*(\d+)/.exec(handlerText ?? '')?.[1];
  if (own) return { ms: Number(own) * 1000, evidence: `maxDuration = ${own} in the route` };
  const vercel = ctx.auxiliary.get('vercel.json');
  const fromVercel = vercel ? /"maxDuration"\s*:\s*(\d+)/.exec(vercel)?.[1] : undefined;
  return fromVercel ? { ms: Number(fromVercel) * 1000, evidence: `maxDuration ${fromVercel} s in vercel.json` } : undefined;
}
