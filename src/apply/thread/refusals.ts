import path from 'node:path';
import { ts } from 'ts-morph';
import { namedImportOrigin, resolveCallee } from '../../findings/actionFacts.js';
import { unwrap } from '../../inspect/parse/astHelpers.js';
import { calls, isLoop } from '../../findings/walk.js';
import { insideProject } from '../followHandler.js';
import { CONTEXT_NAME } from '../transforms/stripeKey.js';
import { lineOf, readsAmbientContext, type Hop, type Sources } from './chains.js';

/** SQL transactions that run their callback once per call: knex and objection `transaction`, Prisma `$transaction`, TypeORM, Sequelize and Drizzle `transaction`. */
const ONCE_TRANSACTION = /^\$?transaction$/;

/** What a project's dependencies say about its transaction callbacks. */
export interface RepetitionFacts {
  /** Mongoose's Connection#transaction wraps MongoDB's withTransaction, which runs the callback again on a transient error. */
  mongoose: boolean;
}

const LOOP_OR_CALLBACK = 'runs in a loop or a callback';

/**
 * Whether a callback runs exactly once per call of the function around it: a `new Promise(executor)`'s executor, or
 * the one function given to a SQL transaction method (by shape: the method's name and the callback among its
 * arguments, whatever the receiver is called). A string says why not where it looks like one: MongoDB's
 * withTransaction, and Mongoose's transaction, run it again after a transient transaction error.
 */
function runsOnce(callback: ts.ArrowFunction | ts.FunctionExpression, facts: RepetitionFacts): boolean | string {
  const parent = callback.parent;
  if (ts.isNewExpression(parent)) return ts.isIdentifier(parent.expression) && parent.expression.text === 'Promise' && parent.arguments?.[0] === callback;
  if (!ts.isCallExpression(parent) || !parent.arguments.includes(callback)) return false;
  if (parent.arguments.filter((a) => ts.isArrowFunction(a) || ts.isFunctionExpression(a)).length !== 1) return false;
  const callee = parent.expression;
  const name = ts.isPropertyAccessExpression(callee) ? callee.name.text : ts.isIdentifier(callee) ? callee.text : undefined;
  if (name === 'withTransaction') return 'runs in a withTransaction callback, which the MongoDB driver runs again after a transient transaction error';
  if (name === undefined || !ONCE_TRANSACTION.test(name)) return false;
  if (facts.mongoose && name === 'transaction') return "runs in a transaction callback, and in this Mongoose project transaction() wraps MongoDB's withTransaction, which runs it again after a transient transaction error";
  return true;
}

/**
 * How `node` may run more than once per run of `fn`, or undefined when it runs once: inside a loop, or in a callback
 * (`items.map(...)`, `forEach`) between the two, except one that runs exactly once (runsOnce). Every run would send
 * the provider the same key with other parameters, which it refuses.
 */
export function repetition(node: ts.Node, fn: ts.Node, facts: RepetitionFacts): string | undefined {
  for (let current = node.parent; current && current !== fn; current = current.parent) {
    if (isLoop(current)) return LOOP_OR_CALLBACK;
    if (ts.isArrowFunction(current) || ts.isFunctionExpression(current)) {
      const once = runsOnce(current, facts);
      if (once === true) continue;
      return once === false ? LOOP_OR_CALLBACK : once;
    }
  }
  return undefined;
}

/** The name a function is known by (method, function, `const f = …`), for uses elsewhere and messages. */
export function nameOfFunction(fn: ts.FunctionLikeDeclaration): string | undefined {
  if ((ts.isMethodDeclaration(fn) || ts.isFunctionDeclaration(fn)) && fn.name && ts.isIdentifier(fn.name)) return fn.name.text;
  const parent = fn.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyDeclaration(parent) || ts.isPropertyAssignment(parent)) && ts.isIdentifier(parent.name)) return parent.name.text;
  return undefined;
}

/** Why `hop.fn` may not gain the parameter, or undefined when it may. */
export function refusal(root: string, ctx: Sources, hop: Hop): string | undefined {
  const { fn, source } = hop;
  const name = nameOfFunction(fn) ?? 'the function';
  if (insideProject(root, path.join(root, source.rel)) === undefined) return `${name} is in ${source.rel}, outside the project's own files`;
  if (fn.parameters.some((p) => p.dotDotDotToken)) return `${name} takes a rest parameter, so no parameter can follow it`;
  const holder = fn.parent;
  if (ts.isMethodDeclaration(fn) && (ts.isClassDeclaration(holder) || ts.isClassExpression(holder))) {
    if (holder.members.filter((m) => ts.isMethodDeclaration(m) && m.name.getText(source.sf) === name).length > 1) return `${name} is overloaded`;
  }
  const overridden = overridable(ctx, hop);
  if (overridden) return overridden;
  if (ts.isFunctionDeclaration(fn) && source.sf.statements.filter((s) => ts.isFunctionDeclaration(s) && s.name?.text === name).length > 1) return `${name} is overloaded`;
  if (fn.parameters.some((p) => ts.isIdentifier(p.name) && p.name.text === CONTEXT_NAME)) return undefined;
  if (fn.body && collectIdentifiers(fn.body).some((id) => id.text === CONTEXT_NAME)) return `${name} already uses the name ${CONTEXT_NAME}`;
  return undefined;
}

/** Why the method reached may not be the one that runs (an abstract class, a subclass overriding it), or undefined. */
export function overridable(ctx: Sources, hop: Hop): string | undefined {
  const { fn } = hop;
  const holder = fn.parent;
  if (!ts.isMethodDeclaration(fn) || !(ts.isClassDeclaration(holder) || ts.isClassExpression(holder))) return undefined;
  const name = nameOfFunction(fn) ?? 'the function';
  if (ts.getModifiers(holder)?.some((m) => m.kind === ts.SyntaxKind.AbstractKeyword)) return `${name} belongs to an abstract class: subclasses may override it`;
  const className = holder.name?.text;
  const overriding = className && ctx.sources.some((s) => /\bextends\s+/.test(s.text) && collectClasses(s.sf).some((c) => c.heritageClauses?.some((h) => h.types.some((t) => t.expression.getText(s.sf) === className)) && c.members.some((m) => m.name?.getText(s.sf) === name)));
  return overriding ? `${name} is overridden in a subclass of ${className}, which is reached through the base type` : undefined;
}

/**
 * Why the function holding a provider call may not read the claim itself (`const idempotencyContext =
 * idempotencyOf();` first in its body), or undefined when it may.
 */
export function ambientRefusal(root: string, holder: Hop): string | undefined {
  const { fn, source } = holder;
  const name = nameOfFunction(fn) ?? 'the function';
  if (insideProject(root, path.join(root, source.rel)) === undefined) return `${name} is in ${source.rel}, outside the project's own files`;
  if (!fn.body || !ts.isBlock(fn.body)) return `${name} has an expression for its body, with no place for a statement`;
  if (readsAmbientContext(fn)) return undefined;
  if (fn.parameters.some((p) => collectIdentifiers(p).some((id) => id.text === CONTEXT_NAME)) || collectIdentifiers(fn.body).some((id) => id.text === CONTEXT_NAME)) return `${name} already uses the name ${CONTEXT_NAME}`;
  const shadowed = collectIdentifiers(fn).some((id) => id.text === 'idempotencyOf' && !ts.isCallExpression(id.parent));
  if (shadowed) return `${name} binds the name idempotencyOf to something of its own`;
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
/** A variable the file declares with a value of its own (not `require(…)` of a module): `const client = new X()`. */
function madeLocally(sf: ts.SourceFile, name: string): boolean {
  let found = false;
  const visit = (node: ts.Node): void => {
    if (found) return;
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.name.text === name && node.initializer) {
      const value = unwrap(node.initializer);
      found = !(ts.isCallExpression(value) && ts.isIdentifier(value.expression) && value.expression.text === 'require');
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

export function otherUses(ctx: Sources, hop: Hop, ignore?: ts.Node): { callers: string[]; values: string[]; extraArgs: boolean } {
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
      // A call passing the context in its place already (another protected action's, threaded before) is no caller without one.
      const given = call.arguments[hop.fn.parameters.findIndex((p) => ts.isIdentifier(p.name) && p.name.text === CONTEXT_NAME)];
      if (given && ts.isIdentifier(given) && given.text === CONTEXT_NAME) continue;
      callers.push(`${source.rel}:${lineOf(call)}`);
    }
    // `handleRoute` imported here from another module than the one defining this function is that module's.
    const origin = member ? undefined : namedImportOrigin(ctx, source, name);
    const foreign = origin !== undefined && origin !== null && origin.rel !== hop.source.rel;
    for (const id of collectIdentifiers(source.sf)) {
      if (id.text !== name) continue;
      if (foreign && !ts.isPropertyAccessExpression(id.parent)) continue;
      const parent = id.parent;
      const expression = ts.isPropertyAccessExpression(parent) && parent.name === id ? parent : !member && isReference(id) ? id : undefined;
      if (!expression || expression === hop.call.expression || resolved.has(expression) || generatedName(expression, source.sf)) continue;
      // A plain function is reached as `x.name` only through its module (a namespace import, a require): a member
      // of an object the file makes itself (`ordersController.createOrder(…)`, PayPal's SDK) is another function.
      if (!member && ts.isPropertyAccessExpression(expression) && ts.isIdentifier(expression.expression) && madeLocally(source.sf, expression.expression.text)) continue;
      // Nor is `this.leads.create(…)` or `prisma.lead.create(…)`: a module is never reached through a member chain.
      if (!member && ts.isPropertyAccessExpression(expression) && !ts.isIdentifier(expression.expression)) continue;
      if (ignore && ignore.getSourceFile() === source.sf && id.pos >= ignore.pos && id.end <= ignore.end) continue;
      const where = `${source.rel}:${lineOf(id)}`;
      if (ts.isCallExpression(expression.parent) && expression.parent.expression === expression) callers.push(where);
      else values.push(where);
    }
  }
  return { callers: [...new Set(callers)], values: [...new Set(values)], extraArgs };
}
