import { ts } from 'ts-morph';
import { accessChain, stringValue, unwrap } from '../parse/astHelpers.js';
import { functionKeyOf } from '../parse/functionKey.js';
import type { HttpMethod } from '../types.js';
import type { Detector, FileContext, FileFacts, RawRoute } from './detectorTypes.js';

const MUTATING: Record<string, HttpMethod> = { POST: 'POST', PUT: 'PUT', PATCH: 'PATCH', DELETE: 'DELETE' };

/** Next.js: app-router `route.ts` method exports and pages-router `pages/api` default exports. File path = URL. */
export const nextRoutes: Detector = {
  name: 'nextjs',
  mentions: /export/,
  // App-router `route.*` files and `pages/api/**`, under any workspace (the match in detect is on the package-local
  // path). Without it `/export/` sent nearly every file of a project to the parser.
  paths: /(?:^|\/)route\.[cm]?[jt]sx?$|(?:^|\/)pages\/api(?:\/.*)?\.[cm]?[jt]sx?$/,
  detect(ctx, facts) {
    if (!ctx.pkg.stack.frameworks.includes('nextjs') && ![...ctx.index.imports.values()].some((b) => b.module.startsWith('next'))) return;
    const local = ctx.pkg.dir ? ctx.rel.slice(ctx.pkg.dir.length + 1) : ctx.rel;
    // An adapter that hands every request to a Hono app or the tRPC router: their own routes and procedures are
    // the endpoints, the catch-all export is not one more.
    if ([...ctx.index.imports.values()].some((b) => /^(hono\/(vercel|nextjs)|@trpc\/server\/adapters\/.+)$/.test(b.module))) return;
    const app = /^(?:src\/)?app\/(?:(.*)\/)?route\.[cm]?[jt]sx?$/.exec(local);
    if (app) return recordAppRoute(urlOf(app[1] ?? ''), ctx, facts);
    const pages = /^(?:src\/)?pages\/(api(?:\/.*)?)\.[cm]?[jt]sx?$/.exec(local);
    if (pages) recordPagesApi(urlOf((pages[1] ?? '').replace(/\/index$|^index$/, '')), ctx, facts);
  },
};

/** `(group)` and `@slot` segments are not in the URL; `[id]` → `:id`, `[...slug]` / `[[...slug]]` → `:slug*`. */
function urlOf(dir: string): string {
  const segments = dir.split('/').filter((s) => s && !/^\(.*\)$/.test(s) && !s.startsWith('@'));
  return `/${segments.map((s) => s.replace(/^\[\[?\.\.\.(.+?)\]\]?$/, ':$1*').replace(/^\[(.+)\]$/, ':$1')).join('/')}`;
}

function route(ctx: FileContext, node: ts.Node, method: HttpMethod, url: string, fn: ts.Node | undefined, handler: string | undefined): RawRoute {
  const key = fn ? functionKeyOf(fn) : handler?.toLowerCase();
  const facts = key ? ctx.index.functions.get(key) : undefined;
  return {
    file: ctx.rel,
    line: ctx.line(node),
    method,
    path: url,
    framework: 'nextjs',
    ...(handler ? { handler } : {}),
    handlerKeys: key ? [key] : [],
    bodyFields: facts ? [...facts.bodyFields] : [],
    bodyShapes: facts ? [...facts.bodyShapes] : [],
    prefixResolved: true,
  };
}

function recordAppRoute(url: string, ctx: FileContext, facts: FileFacts): void {
  for (const statement of ctx.sf.statements) {
    const exported = (ts.canHaveModifiers(statement) ? ts.getModifiers(statement) ?? [] : []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
    if (ts.isFunctionDeclaration(statement) && exported && statement.name && MUTATING[statement.name.text]) {
      facts.routes.push(route(ctx, statement, MUTATING[statement.name.text] as HttpMethod, url, statement, statement.name.text));
    } else if (ts.isVariableStatement(statement) && exported) {
      for (const decl of statement.declarationList.declarations) {
        if (ts.isIdentifier(decl.name) && MUTATING[decl.name.text]) {
          const wrapped = decl.initializer && unwrapWrappers(unwrap(decl.initializer));
          // `export const POST = withAuth(handler)`: the wrapped function is the handler.
          if (wrapped && ts.isIdentifier(wrapped)) facts.routes.push(route(ctx, statement, MUTATING[decl.name.text] as HttpMethod, url, undefined, wrapped.text));
          else facts.routes.push(route(ctx, statement, MUTATING[decl.name.text] as HttpMethod, url, wrapped, decl.name.text));
        }
      }
    } else if (ts.isExportDeclaration(statement) && statement.exportClause && ts.isNamedExports(statement.exportClause)) {
      // export { handler as POST, handler as PUT }
      for (const el of statement.exportClause.elements) {
        const method = MUTATING[el.name.text];
        const local = el.propertyName?.getText() ?? el.name.text;
        if (method) facts.routes.push(route(ctx, el, method, url, undefined, local));
      }
    }
  }
}

function recordPagesApi(url: string, ctx: FileContext, facts: FileFacts): void {
  const exported = ctx.index.exports.get('default');
  if (!exported) return;
  const anchor = ctx.sf.statements.find((s) => ts.isExportAssignment(s) || (ts.isFunctionDeclaration(s) && (ts.getModifiers(s) ?? []).some((m) => m.kind === ts.SyntaxKind.DefaultKeyword))) ?? ctx.sf.statements[0];
  if (!anchor) return;
  const handler = exported.startsWith('<') ? undefined : exported;
  const fnKey = exported.toLowerCase();
  const methods = comparedMethods(ctx);
  // No method check: every method reaches the handler. Only GET checked: read-only, not a finding.
  if (methods.size === 0) {
    facts.routes.push(route(ctx, anchor, 'ALL', url, undefined, handler ?? fnKey));
    return;
  }
  for (const m of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
    if (!methods.has(m)) continue;
    const found = route(ctx, anchor, m, url, undefined, handler ?? fnKey);
    // `case 'POST': return handlePOST(req, res);`: what that function reads of the body is this method's body.
    for (const delegate of methods.get(m) ?? []) {
      const own = ctx.index.functions.get(delegate);
      if (!own) continue;
      found.handlerKeys.push(delegate);
      found.bodyFields.push(...own.bodyFields);
      found.bodyShapes.push(...own.bodyShapes);
    }
    facts.routes.push(found);
  }
}

/**
 * The local functions a method's branch hands the request to (`handlePOST(req, res)` in `case 'POST':` or in
 * `if (req.method === 'POST')`), by function key.
 */
function delegatesIn(branch: ts.Node | undefined): string[] {
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.arguments.some((a) => ts.isIdentifier(a) && /^(req|request)$/i.test(a.text))) out.push(node.expression.text.toLowerCase());
    if (!ts.isFunctionLike(node)) ts.forEachChild(node, visit);
  };
  if (branch) visit(branch);
  return out;
}

/** Methods the handler branches on: `req.method === 'POST'`, `case 'PUT':` in `switch (req.method)`, `['POST'].includes(req.method)`. */
function comparedMethods(ctx: FileContext): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const isMethod = (e: ts.Expression) => {
    const chain = accessChain(unwrap(e));
    return chain[chain.length - 1] === 'method';
  };
  const add = (e: ts.Expression | undefined, branch?: ts.Node) => {
    const v = stringValue(e)?.toUpperCase();
    if (v && /^(GET|HEAD|OPTIONS|POST|PUT|PATCH|DELETE)$/.test(v)) found.set(v, [...(found.get(v) ?? []), ...delegatesIn(branch)]);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isBinaryExpression(node) && /^(===|!==|==|!=)$/.test(node.operatorToken.getText())) {
      // Only `===`/`==` in an if's condition leads into that method's branch.
      const branch = /^(===|==)$/.test(node.operatorToken.getText()) && ts.isIfStatement(node.parent) && node.parent.expression === node ? node.parent.thenStatement : undefined;
      if (isMethod(node.left)) add(node.right, branch);
      else if (isMethod(node.right)) add(node.left, branch);
    } else if (ts.isSwitchStatement(node) && isMethod(node.expression)) {
      for (const clause of node.caseBlock.clauses) if (ts.isCaseClause(clause)) add(clause.expression, clause);
    } else if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'includes' && node.arguments[0] && isMethod(node.arguments[0])) {
      const list = unwrap(node.expression.expression);
      if (ts.isArrayLiteralExpression(list)) list.elements.forEach((e) => add(e));
    }
    ts.forEachChild(node, visit);
  };
  visit(ctx.sf);
  return found;
}

/** `withA(withB(handler))` → `handler`; `withA(async (req) => …)` → the arrow. Anything else is returned as is. */
function unwrapWrappers(expr: ts.Expression): ts.Expression {
  let node = expr;
  for (let depth = 0; depth < 4 && ts.isCallExpression(node); depth++) {
    const inner = [...node.arguments].reverse().map(unwrap).find((a) => ts.isIdentifier(a) || ts.isArrowFunction(a) || ts.isFunctionExpression(a) || ts.isCallExpression(a));
    if (!inner) break;
    node = inner;
  }
  return node;
}
