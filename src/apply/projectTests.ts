import { ts } from 'ts-morph';
import { ensureNamedImport, parseSource } from './sourceFile.js';
import type { Edit, ImportStyle, ManualStep } from './types.js';

/** A protected route whose callers must send the key header: what a test request is matched against. */
export interface KeyedRoute {
  action: string;
  /** Upper-case method; 'ALL' matches any. */
  method: string;
  /** The route template as configured: `/orders/:id`, `/api/orders/{id}`. */
  path: string;
}

const METHODS = new Set(['post', 'put', 'patch', 'delete', 'del']);

/**
 * A request path as a list of segments, `null` where the test computes the segment (`${id}`, `'/orders/' + id`);
 * a base URL in front (`${baseUrl}/orders`, `http://localhost:3000/orders`) and the query string are dropped.
 * Undefined when the expression is not a path this can read.
 */
export function requestPath(node: ts.Expression): Array<string | null> | undefined {
  const HOLE = '\u0000';
  const flat = (n: ts.Expression): string | undefined => {
    if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) return n.text;
    if (ts.isTemplateExpression(n)) return n.head.text + n.templateSpans.map((span) => `${HOLE}${span.literal.text}`).join('');
    if (ts.isParenthesizedExpression(n)) return flat(n.expression);
    if (ts.isBinaryExpression(n) && n.operatorToken.kind === ts.SyntaxKind.PlusToken) {
      const left = flat(n.left) ?? HOLE;
      const right = flat(n.right) ?? HOLE;
      return left === HOLE && right === HOLE ? undefined : left + right;
    }
    return undefined;
  };
  let text = flat(node);
  if (text === undefined) return undefined;
  text = text.replace(/[?#].*$/s, '').replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '');
  // A computed base in front of the first slash: `${baseUrl}/orders`.
  if (text.startsWith(HOLE)) text = text.slice(text.indexOf('/') === -1 ? text.length : text.indexOf('/'));
  if (!text.startsWith('/')) return undefined;
  return text
    .split('/')
    .filter((segment) => segment !== '')
    .map((segment) => (segment.includes(HOLE) ? null : segment));
}

/** `:id`, `{id}`, `[id]`, `[...slug]`, `*`: a segment of a route template that matches any value. */
const isParameter = (segment: string) => /^(:|\{|\[|\*)/.test(segment);

/**
 * Whether a test request path reaches the route: compared from the end, so a prefix only one side has (a global
 * `/api` the app sets in main.ts but the test app does not, or a router mounted under a prefix) still matches. At
 * least one literal segment has to agree: a path made only of computed parts says nothing. Erring towards a match
 * is safe: a key on a request to an unprotected route is ignored.
 */
export function reachesRoute(request: ReadonlyArray<string | null>, route: string): boolean {
  const template = route.split('/').filter((segment) => segment !== '');
  const length = Math.min(request.length, template.length);
  if (length === 0) return false;
  let literal = false;
  for (let i = 1; i <= length; i++) {
    const sent = request[request.length - i];
    const expected = template[template.length - i]!;
    if (sent === null || sent === undefined || isParameter(expected)) continue;
    if (sent !== expected) return false;
    literal = true;
  }
  return literal;
}

interface Found {
  /** Where to insert and what (already in the file's quote style). */
  insert: Array<{ pos: number; text: string }>;
  replace: Array<{ start: number; end: number; text: string }>;
  actions: Set<string>;
  lines: number[];
}

/** The names a module is imported or required under in the file: `import request from 'supertest'`, `const st = require('supertest')`. */
function bindingsOf(sf: ts.SourceFile, module: string): Set<string> {
  const names = new Set<string>();
  for (const statement of sf.statements) {
    if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier) && statement.moduleSpecifier.text === module) {
      const clause = statement.importClause;
      if (clause?.name) names.add(clause.name.text);
      if (clause?.namedBindings && ts.isNamespaceImport(clause.namedBindings)) names.add(clause.namedBindings.name.text);
      if (clause?.namedBindings && ts.isNamedImports(clause.namedBindings)) for (const element of clause.namedBindings.elements) if ((element.propertyName ?? element.name).text === 'default') names.add(element.name.text);
    }
    if (ts.isImportEqualsDeclaration(statement) && ts.isExternalModuleReference(statement.moduleReference) && ts.isStringLiteral(statement.moduleReference.expression) && statement.moduleReference.expression.text === module) names.add(statement.name.text);
    if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        let init = declaration.initializer;
        while (init && (ts.isPropertyAccessExpression(init) || ts.isAwaitExpression(init))) init = init.expression;
        if (init && ts.isCallExpression(init) && ts.isIdentifier(init.expression) && init.expression.text === 'require' && ts.isStringLiteral(init.arguments[0] ?? init) && (init.arguments[0] as ts.StringLiteral).text === module && ts.isIdentifier(declaration.name)) names.add(declaration.name.text);
      }
    }
  }
  return names;
}

/** Whether `expression` is a supertest entry point: `request(app)`, `request.agent(app)`, or a variable set from one. */
function isSupertest(expression: ts.Expression, entry: ReadonlySet<string>, agents: ReadonlySet<string>): boolean {
  if (ts.isParenthesizedExpression(expression)) return isSupertest(expression.expression, entry, agents);
  if (ts.isIdentifier(expression)) return agents.has(expression.text);
  if (ts.isPropertyAccessExpression(expression) && expression.expression.kind === ts.SyntaxKind.ThisKeyword) return agents.has(expression.name.text);
  if (!ts.isCallExpression(expression)) return false;
  const callee = expression.expression;
  if (ts.isIdentifier(callee)) return entry.has(callee.text);
  return ts.isPropertyAccessExpression(callee) && callee.name.text === 'agent' && ts.isIdentifier(callee.expression) && entry.has(callee.expression.text);
}

/** Variables (and `this.x` fields) the file sets from a supertest entry point, so `api.post('/orders')` is seen too. */
function supertestAgents(sf: ts.SourceFile, entry: ReadonlySet<string>): Set<string> {
  const agents = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer && isSupertest(node.initializer, entry, new Set())) agents.add(node.name.text);
    if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.EqualsToken && isSupertest(node.right, entry, new Set())) {
      if (ts.isIdentifier(node.left)) agents.add(node.left.text);
      else if (ts.isPropertyAccessExpression(node.left) && node.left.expression.kind === ts.SyntaxKind.ThisKeyword) agents.add(node.left.name.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return agents;
}

/** The local names of a module's named export in the file: `import { testClient as tc } from 'hono/testing'`, `const { hc } = require('hono/client')`. */
function namedBindingsOf(sf: ts.SourceFile, module: string, exported: string): Set<string> {
  const names = new Set<string>();
  for (const statement of sf.statements) {
    if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier) && statement.moduleSpecifier.text === module) {
      const bindings = statement.importClause?.namedBindings;
      if (bindings && ts.isNamedImports(bindings)) for (const element of bindings.elements) if ((element.propertyName ?? element.name).text === exported) names.add(element.name.text);
    }
    if (!ts.isVariableStatement(statement)) continue;
    for (const declaration of statement.declarationList.declarations) {
      const init = declaration.initializer;
      const required = init && ts.isCallExpression(init) && ts.isIdentifier(init.expression) && init.expression.text === 'require' && init.arguments[0] && ts.isStringLiteral(init.arguments[0]) && init.arguments[0].text === module;
      if (!required || !ts.isObjectBindingPattern(declaration.name)) continue;
      for (const element of declaration.name.elements) {
        const from = element.propertyName ?? element.name;
        if (ts.isIdentifier(from) && from.text === exported && ts.isIdentifier(element.name)) names.add(element.name.text);
      }
    }
  }
  return names;
}

/** Whether `expression` is a Hono typed client: `testClient(app)`, `hc<AppType>(url)`, or a variable (or `this.x`) set from one. */
function isHonoClient(expression: ts.Expression, entry: ReadonlySet<string>, clients: ReadonlySet<string>): boolean {
  while (ts.isParenthesizedExpression(expression) || ts.isAwaitExpression(expression) || ts.isAsExpression(expression) || ts.isNonNullExpression(expression)) expression = expression.expression;
  if (ts.isIdentifier(expression)) return clients.has(expression.text);
  if (ts.isPropertyAccessExpression(expression) && expression.expression.kind === ts.SyntaxKind.ThisKeyword) return clients.has(expression.name.text);
  return ts.isCallExpression(expression) && ts.isIdentifier(expression.expression) && entry.has(expression.expression.text);
}

/** Variables (and `this.x` fields) the file sets from `testClient(app)` or `hc(...)`. */
function honoClients(sf: ts.SourceFile, entry: ReadonlySet<string>): Set<string> {
  const clients = new Set<string>();
  if (entry.size === 0) return clients;
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer && isHonoClient(node.initializer, entry, new Set())) clients.add(node.name.text);
    if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.EqualsToken && isHonoClient(node.right, entry, new Set())) {
      if (ts.isIdentifier(node.left)) clients.add(node.left.text);
      else if (ts.isPropertyAccessExpression(node.left) && node.left.expression.kind === ts.SyntaxKind.ThisKeyword) clients.add(node.left.name.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return clients;
}

/**
 * The route path of a Hono client call, from the property chain in front of its `$verb`: `client.api.orders.$post`
 * → api/orders, `client.orders[':id'].$put` → orders/(parameter); `index` is the client's name for a trailing `/`.
 * Undefined when the chain does not start at a client.
 */
function honoClientPath(receiver: ts.Expression, isClient: (e: ts.Expression) => boolean): Array<string | null> | undefined {
  const segments: Array<string | null> = [];
  let node = receiver;
  for (;;) {
    if (isClient(node)) break;
    if (ts.isPropertyAccessExpression(node)) segments.unshift(node.name.text);
    else if (ts.isElementAccessExpression(node)) {
      const argument = node.argumentExpression;
      segments.unshift(ts.isStringLiteral(argument) || ts.isNoSubstitutionTemplateLiteral(argument) ? argument.text : null);
    } else if (ts.isParenthesizedExpression(node) || ts.isNonNullExpression(node)) {
      node = node.expression;
      continue;
    } else return undefined;
    node = (node as ts.PropertyAccessExpression | ts.ElementAccessExpression).expression;
  }
  if (segments[segments.length - 1] === 'index') segments.pop();
  return segments.map((segment) => (segment === null || /^[:{*]/.test(segment) ? null : segment));
}

const headerName = (name: ts.PropertyName) => (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNoSubstitutionTemplateLiteral(name) ? name.text : undefined);

/** Whether a supertest chain already sends the header: `.set('Idempotency-Key', …)` or `.set({ 'Idempotency-Key': … })`. */
function chainSetsHeader(call: ts.CallExpression, header: string): boolean {
  let node: ts.Node = call;
  while (ts.isPropertyAccessExpression(node.parent) && ts.isCallExpression(node.parent.parent)) {
    const next = node.parent.parent;
    const first = next.arguments[0];
    if (node.parent.name.text === 'set' && first) {
      if ((ts.isStringLiteral(first) || ts.isNoSubstitutionTemplateLiteral(first)) && first.text.toLowerCase() === header.toLowerCase()) return true;
      if (ts.isObjectLiteralExpression(first) && objectHasHeader(first, header)) return true;
    }
    node = next;
  }
  return false;
}

function objectHasHeader(object: ts.ObjectLiteralExpression, header: string): boolean {
  return object.properties.some((p) => (ts.isPropertyAssignment(p) || ts.isShorthandPropertyAssignment(p)) && headerName(p.name)?.toLowerCase() === header.toLowerCase());
}

/** A property's value in an object literal (`method: 'POST'`; shorthand `{ url }` is the variable), or undefined. */
function stringProperty(object: ts.ObjectLiteralExpression, name: string): ts.Expression | undefined {
  for (const p of object.properties) {
    if (ts.isPropertyAssignment(p) && headerName(p.name) === name) return p.initializer;
    if (ts.isShorthandPropertyAssignment(p) && p.name.text === name) return p.name;
  }
  return undefined;
}

/**
 * `{ method: 'POST', url, headers? }` options (fastify/light-my-request `inject`, Hono `app.request(path, init)`,
 * `fetch(url, init)`): the key goes into `headers`, added when absent, merged into a literal, spread before a value.
 * Undefined when the headers are something this will not rewrite (a `new Headers()`, a spread of unknown shape).
 */
function headersEdit(sf: ts.SourceFile, init: ts.ObjectLiteralExpression, property: string): { insert?: { pos: number; text: string }; replace?: { start: number; end: number; text: string } } | undefined {
  const headers = init.properties.find((p) => (ts.isPropertyAssignment(p) || ts.isShorthandPropertyAssignment(p)) && headerName(p.name) === 'headers');
  if (!headers) {
    const last = init.properties[init.properties.length - 1];
    if (!last) return { replace: { start: init.getStart(sf), end: init.getEnd(), text: `{ headers: { ${property} } }` } };
    const multiLine = sf.getLineAndCharacterOfPosition(init.getStart(sf)).line !== sf.getLineAndCharacterOfPosition(init.getEnd()).line;
    if (!multiLine) return { insert: { pos: last.getEnd(), text: `, headers: { ${property} }` } };
    const lineStart = sf.text.lastIndexOf('\n', last.getStart(sf)) + 1;
    const indent = /^[ \t]*/.exec(sf.text.slice(lineStart))![0];
    const comma = sf.text.slice(last.getEnd()).trimStart().startsWith(',');
    return { insert: { pos: comma ? sf.text.indexOf(',', last.getEnd()) + 1 : last.getEnd(), text: `${comma ? '' : ','}\n${indent}headers: { ${property} }${comma ? ',' : ''}` } };
  }
  if (ts.isShorthandPropertyAssignment(headers)) return { replace: { start: headers.getStart(sf), end: headers.getEnd(), text: `headers: { ...headers, ${property} }` } };
  if (!ts.isPropertyAssignment(headers)) return undefined;
  const value = headers.initializer;
  if (ts.isObjectLiteralExpression(value)) {
    const last = value.properties[value.properties.length - 1];
    if (!last) return { replace: { start: value.getStart(sf), end: value.getEnd(), text: `{ ${property} }` } };
    return { insert: { pos: last.getEnd(), text: `, ${property}` } };
  }
  // A plain object in a variable or returned by a helper; a `new Headers()` is left alone.
  if (ts.isIdentifier(value) || ts.isPropertyAccessExpression(value) || ts.isCallExpression(value)) {
    return { replace: { start: value.getStart(sf), end: value.getEnd(), text: `{ ...${value.getText(sf)}, ${property} }` } };
  }
  return undefined;
}

/**
 * The paths a request helper is called with, when the request's path is one of its parameters:
 * `const post = (path, body) => request(app).post(path).send(body)` called as `post('/orders', …)` in the same file.
 * Undefined when the path is not a parameter of the function around it, or the function has no name to find its
 * calls by; a call whose argument is not readable adds nothing.
 */
function pathsThroughParameter(sf: ts.SourceFile, path: ts.Expression): Array<Array<string | null>> | undefined {
  if (!ts.isIdentifier(path)) return undefined;
  let fn: ts.Node | undefined = path.parent;
  while (fn && !ts.isFunctionDeclaration(fn) && !ts.isArrowFunction(fn) && !ts.isFunctionExpression(fn) && !ts.isMethodDeclaration(fn)) fn = fn.parent;
  if (!fn) return undefined;
  const declaration = fn as ts.FunctionDeclaration | ts.ArrowFunction | ts.FunctionExpression | ts.MethodDeclaration;
  const index = declaration.parameters.findIndex((param) => ts.isIdentifier(param.name) && param.name.text === path.text);
  if (index < 0) return undefined;
  const holder = declaration.parent;
  const name = ts.isFunctionDeclaration(declaration) || ts.isMethodDeclaration(declaration)
    ? declaration.name && ts.isIdentifier(declaration.name) ? declaration.name.text : undefined
    : holder && (ts.isVariableDeclaration(holder) || ts.isPropertyAssignment(holder)) && ts.isIdentifier(holder.name) ? holder.name.text : undefined;
  if (!name) return undefined;
  const paths: Array<Array<string | null>> = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const called = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : undefined;
      const argument = node.arguments[index];
      const read = called === name && argument ? requestPath(argument) : undefined;
      if (read) paths.push(read);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return paths;
}

/**
 * The project's own test file, its requests to protected routes given a fresh key each: supertest chains
 * (`request(app).post('/orders')` gains `.set('Idempotency-Key', randomUUID())`), options that carry method and URL
 * (`inject({ method, url })`, a wrapper of it, axios/got configs), Hono's `app.request(path, { method })` and
 * `fetch(url, { method })` or `new Request(url, { method })`, and Hono's typed client (`testClient(app).orders.$post({ json })`, `hc`), whose second
 * argument gets the header. One new key per request keeps what the test
 * did before (every request a new intent); a request that already sends the header is left alone, so a second apply
 * changes nothing. Requests whose path or method the test computes are not touched.
 */
export function keyTestRequests(file: string, text: string, routes: readonly KeyedRoute[], header: string, style: Pick<ImportStyle, 'quote' | 'semicolons'>): { text: string; edits: Edit[]; manual: ManualStep[] } {
  const none = { text, edits: [], manual: [] };
  if (routes.length === 0 || !/\.\$?(post|put|patch|delete|del)\s*\(|\bmethod\s*:/.test(text)) return none;
  const kind = /\.[cm]?tsx?$/.test(file) ? (file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS) : file.endsWith('x') ? ts.ScriptKind.JSX : ts.ScriptKind.JS;
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const q = style.quote === 'double' ? '"' : "'";
  const literal = (value: string) => `${q}${value.replace(/\\/g, '\\\\').replace(new RegExp(q, 'g'), `\\${q}`)}${q}`;
  const entry = bindingsOf(sf, 'supertest');
  const agents = supertestAgents(sf, entry);
  const honoEntry = new Set([...namedBindingsOf(sf, 'hono/testing', 'testClient'), ...namedBindingsOf(sf, 'hono/client', 'hc')]);
  const clients = honoClients(sf, honoEntry);
  const found: Found = { insert: [], replace: [], actions: new Set(), lines: [] };
  const routesFor = (method: string, path: ReadonlyArray<string | null>) =>
    routes.filter((route) => (route.method === 'ALL' || route.method === method.toUpperCase() || (method.toLowerCase() === 'del' && route.method === 'DELETE')) && reachesRoute(path, route.path));
  const note = (node: ts.Node, matched: readonly KeyedRoute[]) => {
    for (const route of matched) found.actions.add(route.action);
    found.lines.push(sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1);
  };
  const property = `${literal(header)}: randomUUID()`;

  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const method = node.expression.name.text;
      const first = node.arguments[0];
      // supertest: request(app).post('/orders'), agent.post(`/orders/${id}`)
      if (METHODS.has(method) && first && entry.size > 0 && isSupertest(node.expression.expression, entry, agents)) {
        const path = requestPath(first);
        // A helper's own chain, its path a parameter: keyed when a call of the helper reaches a protected route.
        const matched = path ? routesFor(method, path) : (pathsThroughParameter(sf, first) ?? []).flatMap((through) => routesFor(method, through));
        if (matched.length > 0 && !chainSetsHeader(node, header)) {
          const end = node.getEnd();
          // A chain written one call per line gets the new call on its own line, at the same indentation.
          const dot = node.expression.name.getStart(sf) - 1;
          const lineStart = sf.text.lastIndexOf('\n', dot) + 1;
          const before = sf.text.slice(lineStart, dot);
          const ownLine = /^[ \t]*$/.test(before);
          found.insert.push({ pos: end, text: `${ownLine ? `\n${before}` : ''}.set(${literal(header)}, randomUUID())` });
          note(node, matched);
        }
      }
    }
    // Hono's typed client: client.api.orders.$post({ json }), client.orders[':id'].$put({ param, json }, { headers })
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && honoEntry.size > 0 && /^\$(post|put|patch|delete)$/.test(node.expression.name.text)) {
      const path = honoClientPath(node.expression.expression, (e) => isHonoClient(e, honoEntry, clients));
      const matched = path ? routesFor(node.expression.name.text.slice(1), path) : [];
      if (matched.length > 0) honoClientCall(node, matched);
    }
    if (ts.isCallExpression(node)) {
      // Options that carry their own URL, whatever takes them: fastify's `inject({ method, url })` and the project's
      // wrappers of it (`injectWithLogin(user, { … })`), axios/got/undici request configs.
      const withUrl = node.arguments.find((a): a is ts.ObjectLiteralExpression => ts.isObjectLiteralExpression(a) && stringProperty(a, 'method') !== undefined && (stringProperty(a, 'url') ?? stringProperty(a, 'path')) !== undefined);
      if (withUrl) requestOptions(node, withUrl, stringProperty(withUrl, 'url') ?? stringProperty(withUrl, 'path'));
      // `(url, { method })`: fetch, Hono's `app.request('/orders', init)`, undici's request.
      const [url, init] = node.arguments;
      const callee = node.expression;
      const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : '';
      if (!withUrl && url && init && ts.isObjectLiteralExpression(init) && /^(fetch|request)$/.test(name) && !(ts.isPropertyAccessExpression(callee) && isSupertest(callee.expression, entry, agents))) requestOptions(node, init, url);
    }
    // `new Request(url, { method })`, handed to `app.request(…)`, `app.fetch(…)` or `fetch(…)`.
    if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'Request') {
      const [url, init] = node.arguments ?? [];
      if (url && init && ts.isObjectLiteralExpression(init)) requestOptions(node, init, url);
    }
    ts.forEachChild(node, visit);
  };
  // The key goes into the call's options (its second argument), made when absent; options held in a variable are left.
  const honoClientCall = (call: ts.CallExpression, matched: readonly KeyedRoute[]) => {
    const [input, options] = call.arguments;
    // The input's `header` (what a header validator reads) is sent as request headers too.
    const sent = input && ts.isObjectLiteralExpression(input) ? stringProperty(input, 'header') : undefined;
    if (sent && ts.isObjectLiteralExpression(sent) && objectHasHeader(sent, header)) return;
    if (!input) found.insert.push({ pos: call.arguments.pos, text: `{}, { headers: { ${property} } }` });
    else if (!options) found.insert.push({ pos: input.getEnd(), text: `, { headers: { ${property} } }` });
    else {
      if (!ts.isObjectLiteralExpression(options)) return;
      const headers = stringProperty(options, 'headers');
      if (headers && ts.isObjectLiteralExpression(headers) && objectHasHeader(headers, header)) return;
      const edit = headersEdit(sf, options, property);
      if (!edit) return;
      if (edit.insert) found.insert.push(edit.insert);
      if (edit.replace) found.replace.push(edit.replace);
    }
    note(call, matched);
  };
  const requestOptions = (call: ts.CallExpression | ts.NewExpression, init: ts.ObjectLiteralExpression, url: ts.Expression | undefined) => {
    const method = stringProperty(init, 'method');
    if (!url || !method || !(ts.isStringLiteral(method) || ts.isNoSubstitutionTemplateLiteral(method))) return;
    const path = requestPath(url);
    const matched = path ? routesFor(method.text, path) : (pathsThroughParameter(sf, url) ?? []).flatMap((through) => routesFor(method.text, through));
    if (matched.length === 0) return;
    const headers = stringProperty(init, 'headers');
    if (headers && ts.isObjectLiteralExpression(headers) && objectHasHeader(headers, header)) return;
    const edit = headersEdit(sf, init, property);
    if (!edit) return;
    if (edit.insert) found.insert.push(edit.insert);
    if (edit.replace) found.replace.push(edit.replace);
    note(call, matched);
  };
  visit(sf);
  if (found.lines.length === 0) return none;

  // Spliced from the end so earlier positions stay valid; replacements and insertions never overlap (one per request).
  const splices = [...found.insert.map((i) => ({ start: i.pos, end: i.pos, text: i.text })), ...found.replace].sort((a, b) => b.start - a.start);
  let edited = text;
  for (const splice of splices) edited = edited.slice(0, splice.start) + splice.text + edited.slice(splice.end);
  const morph = parseSource(file, edited, style);
  const crypto = /['"]node:[a-z]/.test(text) ? 'node:crypto' : 'crypto';
  if (!ensureNamedImport(morph, crypto, 'randomUUID')) {
    return { text, edits: [], manual: [{ action: [...found.actions][0]!, file, line: found.lines[0], reason: `this test file sends requests to protected routes without ${header} and already uses the name randomUUID for something else: give each of those requests a fresh key (randomUUID() from node:crypto) by hand` }] };
  }
  const count = found.lines.length;
  return {
    text: morph.getFullText(),
    edits: [{ action: [...found.actions][0]!, file, summary: `gives ${count === 1 ? 'the request' : `${count} requests`} to protected routes a fresh ${header} each (line${count === 1 ? '' : 's'} ${found.lines.join(', ')}), so the test still runs its request as a new intent` }],
    manual: [],
  };
}
