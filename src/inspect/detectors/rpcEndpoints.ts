import { ts } from 'ts-morph';
import { isFunctionLike, propertyName, stringValue, unwrap } from '../parse/astHelpers.js';
import { functionKeyOf } from '../parse/functionKey.js';
import type { Detector, FileContext, FileFacts, GuardRef, RawRoute } from './detectorTypes.js';
import { guardOf } from './routeGuards.js';

/** Any "use server" directive, module-level or in a function body. */
export const USE_SERVER = /^\s*['"]use server['"];?\s*$/m;

/** A module whose first statement is the "use server" directive: every exported async function is a Server Action. */
export const USE_SERVER_FILE = /^\s*(?:\/\/[^\n]*\n\s*|\/\*[\s\S]*?\*\/\s*)*['"]use server['"]/;

/**
 * Endpoints that are not declared as routes: Next.js Server Actions (module-level or function-level "use server")
 * and tRPC mutations. Both are POSTs a client can retry; neither has a URL the code states, so the path is the
 * action or procedure name and `prefixResolved` is false.
 */
export const rpcEndpoints: Detector = {
  name: 'rpc-endpoints',
  mentions: /use server|\.mutation\(/,
  detect(ctx, facts) {
    recordServerActions(ctx, facts);
    recordTrpcMutations(ctx, facts);
  },
};

function recordServerActions(ctx: FileContext, facts: FileFacts): void {
  const wholeFile = USE_SERVER_FILE.test(ctx.text);
  const recorded = new Set<ts.Node>();
  const add = (anchor: ts.Node, name: string, fn: ts.FunctionLikeDeclaration | undefined, built?: ts.CallExpression) => {
    if (fn) recorded.add(fn);
    const action = route(ctx, anchor, `/${name}`, 'nextjs', 'server-action', name, fn ? functionKeyOf(fn) : undefined, fn ? formFields(fn, ctx) : [], built ? schemaArguments(built) : []);
    // What builds the action runs before its function (`validatedActionWithUser(schema, fn)` reads the session first).
    facts.routes.push(built ? { ...action, guards: builderGuards(built, ctx) } : action);
  };
  if (wholeFile) {
    // Every async export of a "use server" module is callable from the client, including actions built by a
    // client library (`export const saveAction = actionClient.inputSchema(s).action(async (…) => …)`).
    for (const statement of ctx.sf.statements) {
      if (!isExported(statement)) continue;
      if (ts.isFunctionDeclaration(statement) && statement.name && isAsync(statement)) add(statement, statement.name.text, statement);
      else if (ts.isVariableStatement(statement)) {
        for (const d of statement.declarationList.declarations) {
          const init = d.initializer && unwrap(d.initializer);
          if (!init || !ts.isIdentifier(d.name)) continue;
          if (isFunctionLike(init) && isAsync(init)) add(d, d.name.text, init);
          else if (ts.isCallExpression(init)) {
            const fn = lastFunctionArgument(init);
            if (fn) add(d, d.name.text, fn, init);
          }
        }
      }
    }
  }
  const visit = (node: ts.Node): void => {
    if (isFunctionLike(node) && node.body && ts.isBlock(node.body) && !recorded.has(node) && isDirective(node.body.statements[0])) {
      const name = actionName(node);
      if (name) add(node, name, node);
    }
    ts.forEachChild(node, visit);
  };
  if (/['"]use server['"]/.test(ctx.text)) visit(ctx.sf);
}

/** The handler a builder chain wraps: the last function among the call's arguments, down the chain. */
function lastFunctionArgument(call: ts.CallExpression): ts.FunctionLikeDeclaration | undefined {
  for (let node: ts.Expression = call; ts.isCallExpression(node) || ts.isPropertyAccessExpression(node); node = node.expression) {
    if (ts.isCallExpression(node)) {
      for (const arg of [...node.arguments].reverse()) {
        const fn = unwrap(arg);
        if (isFunctionLike(fn)) return fn;
      }
    }
  }
  return undefined;
}

/**
 * The schemas a builder validates the form with before the handler sees it: `validatedAction(signInSchema, fn)`,
 * `actionClient.inputSchema(s).action(fn)`. Named ones only; a name that is no object schema resolves to no fields.
 */
function schemaArguments(call: ts.CallExpression): string[] {
  const names: string[] = [];
  for (let node: ts.Expression = call; ts.isCallExpression(node) || ts.isPropertyAccessExpression(node); node = node.expression) {
    if (ts.isCallExpression(node)) for (const arg of node.arguments) if (ts.isIdentifier(unwrap(arg))) names.push((unwrap(arg) as ts.Identifier).text);
  }
  return names;
}

/** The builder of a built action, as a middleware would be read: the called function, or the chain's root client. */
function builderGuards(call: ts.CallExpression, ctx: FileContext): GuardRef[] {
  let root: ts.Expression = call;
  while (ts.isCallExpression(root) || ts.isPropertyAccessExpression(root)) root = unwrap(root.expression);
  if (!ts.isIdentifier(root)) return [];
  const callee = unwrap(call.expression);
  return guardOf(ts.isIdentifier(callee) ? callee : root, ctx);
}

function isDirective(statement: ts.Statement | undefined): boolean {
  return !!statement && ts.isExpressionStatement(statement) && ts.isStringLiteral(statement.expression) && statement.expression.text === 'use server';
}

function isAsync(node: ts.FunctionLikeDeclaration): boolean {
  return (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.AsyncKeyword);
}

function actionName(node: ts.FunctionLikeDeclaration): string | undefined {
  if (node.name && ts.isIdentifier(node.name)) return node.name.text;
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  return undefined;
}

function isExported(statement: ts.Node): boolean {
  return ts.canHaveModifiers(statement) && (ts.getModifiers(statement) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
}

/** `formData.get('amount')` fields, or the names in a destructured first parameter. */
function formFields(node: ts.FunctionLikeDeclaration, ctx: FileContext): string[] {
  const fields = new Set<string>();
  const visit = (n: ts.Node): void => {
    if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression) && /^(get|getAll)$/.test(n.expression.name.text) && /form/i.test(n.expression.expression.getText(ctx.sf))) {
      const field = stringValue(n.arguments[0], ctx.index.consts);
      if (field) fields.add(field);
    }
    ts.forEachChild(n, visit);
  };
  if (node.body) visit(node.body);
  const first = node.parameters[0];
  if (first && ts.isObjectBindingPattern(first.name)) for (const el of first.name.elements) fields.add(propertyName(el.propertyName ?? el.name) ?? '');
  return [...fields].filter(Boolean);
}

/** `publicProcedure.input(z.object({…})).mutation(handler)` as a property of a `router({…})` object. */
function recordTrpcMutations(ctx: FileContext, facts: FileFacts): void {
  const importsTrpc = [...ctx.index.imports.values()].some((b) => b.module.startsWith('@trpc/'));
  for (const call of ctx.index.calls) {
    if (!ts.isPropertyAccessExpression(call.expression) || call.expression.name.text !== 'mutation') continue;
    // Apps re-export their procedures (`~/server/api/trpc`): a chain rooted in a `…Procedure` is evidence enough.
    if (!importsTrpc && !/procedure/i.test(rootName(call.expression.expression))) continue;
    const names = procedurePath(call);
    if (!names.length) continue;
    const handler = call.arguments[0] && unwrap(call.arguments[0]);
    const key = handler && isFunctionLike(handler) ? functionKeyOf(handler) : undefined;
    facts.routes.push(route(ctx, call.expression.name, `/${names.join('.')}`, 'trpc', 'trpc', names[names.length - 1] as string, key, inputFields(call)));
  }
}

/** Property names from the procedure up through nested router objects in this file. */
function procedurePath(call: ts.CallExpression): string[] {
  const names: string[] = [];
  let node: ts.Node = call;
  while (ts.isPropertyAccessExpression(node.parent) || ts.isCallExpression(node.parent) || ts.isParenthesizedExpression(node.parent)) node = node.parent;
  for (let current: ts.Node | undefined = node.parent; current; current = current.parent) {
    if (ts.isPropertyAssignment(current)) {
      const name = propertyName(current.name);
      if (name) names.unshift(name);
    } else if (ts.isVariableDeclaration(current) && ts.isIdentifier(current.name)) {
      // `export const postRouter = createTRPCRouter({…})` is mounted as `post` by convention; `appRouter` is the root.
      const router = /^(\w+?)Router$/.exec(current.name.text)?.[1];
      if (router && names.length && !/^(app|root|main|api|trpc)$/i.test(router)) names.unshift(router);
      break;
    } else if (isFunctionLike(current) || ts.isSourceFile(current)) break;
  }
  return names;
}

/** Keys of the `.input(z.object({…}))` schema along the procedure chain. */
function inputFields(call: ts.CallExpression): string[] {
  for (let expr: ts.Expression = call.expression; ts.isPropertyAccessExpression(expr) || ts.isCallExpression(expr);) {
    if (ts.isCallExpression(expr)) {
      if (ts.isPropertyAccessExpression(expr.expression) && expr.expression.name.text === 'input') {
        const schema = expr.arguments[0];
        const shape = schema && ts.isCallExpression(unwrap(schema)) ? (unwrap(schema) as ts.CallExpression).arguments[0] : undefined;
        const literal = shape && unwrap(shape);
        if (literal && ts.isObjectLiteralExpression(literal)) return literal.properties.map((p) => (p.name ? propertyName(p.name as ts.PropertyName) : undefined) ?? '').filter(Boolean);
        return [];
      }
      expr = expr.expression;
    } else expr = expr.expression;
  }
  return [];
}

function route(ctx: FileContext, node: ts.Node, path: string, framework: string, transport: 'server-action' | 'trpc', handler: string, key: string | undefined, bodyFields: string[], schemas: string[] = []): RawRoute {
  const fnFacts = key ? ctx.index.functions.get(key) : undefined;
  return {
    file: ctx.rel,
    line: ctx.line(node),
    method: 'POST',
    path,
    framework,
    handler,
    handlerKeys: key ? [key] : [],
    bodyFields: bodyFields.length ? bodyFields : fnFacts ? [...fnFacts.bodyFields] : [],
    bodyShapes: [...schemas, ...(fnFacts ? fnFacts.bodyShapes : [])],
    prefixResolved: false,
    transport,
  };
}

function rootName(expr: ts.Expression): string {
  let node: ts.Expression = expr;
  while (ts.isCallExpression(node) || ts.isPropertyAccessExpression(node)) node = node.expression;
  return ts.isIdentifier(node) ? node.text : '';
}
