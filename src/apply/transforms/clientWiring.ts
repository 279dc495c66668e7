import path from 'node:path';
import { Node, SyntaxKind, VariableDeclarationKind, type ArrowFunction, type Block, type CallExpression, type Expression, type FunctionDeclaration, type FunctionExpression, type Identifier, type JsxAttribute, type ObjectLiteralExpression, type SourceFile } from 'ts-morph';
import { importStyleFor, type ProjectImports } from '../importStyle.js';
import { ensureNamedImport, fitStatement, parseSource } from '../sourceFile.js';
import type { Edit, ImportStyle, ManualStep, WiringTarget } from '../types.js';
import { nextKindOf, onOwnLine, replaceRaw, serverActionName } from './nextRoute.js';

export interface ClientWiringOptions {
  scaffoldDir: string;
  imports: ProjectImports;
  /** The key header the generated policy reads (`Idempotency-Key` unless configured otherwise). */
  keyHeader: string;
  /**
   * The client is not the routes' own app (another package of the repository): a dev-server proxy or gateway may put a
   * prefix before the route (`/api/create-payment-intent` for `/create-payment-intent`). Such URLs match when the
   * route matches no URL exactly.
   */
  elsewhere?: boolean;
  /** The routes are a Next.js app's: a module is a client one by its directive or place, as Next.js decides. */
  next?: boolean;
}

export interface ClientWiringResult {
  /** New text per file that changed. */
  texts: Map<string, string>;
  edits: Edit[];
  manual: ManualStep[];
  /** Some component now imports useIdempotencyKey: the hook files must exist in the scaffold folder. */
  usesHook: boolean;
  /** The routes and actions some caller was found for (wired or not). */
  found: Set<string>;
}

/** `useIdempotencyKey` and the hooks' own folder are apply's; their files are templates, see planApply. */
export const HOOK_FILES = ['intentKey', 'useIdempotencyKey'] as const;

const CODE = /\.[cm]?[jt]sx?$/;
const PASCAL = /^[A-Z][\w$]*$/;

/**
 * A component body runs in the browser: a "use client" module, or a .tsx/.jsx outside the App Router's server tree.
 * Outside Next.js, any module of React components (a .jsx/.tsx, or a .js that imports React, as CRA apps write them).
 */
function isClientModule(file: string, text: string, next: boolean): boolean {
  if (!next) return /\.[jt]sx$/.test(file) || IMPORTS_REACT.test(text);
  if (/^\s*(?:\/\/[^\n]*\n\s*|\/\*[\s\S]*?\*\/\s*)*['"]use client['"]/.test(text)) return true;
  return /\.[jt]sx$/.test(file) && !/(^|\/)app\//.test(file) && nextKindOf(file, text) === undefined;
}

const IMPORTS_REACT = /\bfrom\s*['"]react['"]|\brequire\(\s*['"]react['"]\s*\)/;
/** React Native has no Web Crypto to make keys with: its components are left to the user. */
const REACT_NATIVE = /\bfrom\s*['"]react-native['"]|\brequire\(\s*['"]react-native['"]\s*\)/;

/**
 * A route template's segments against a URL written in code: `:id` / `[id]` match one segment, `${…}` any one. A
 * leading substitution is the origin, and may carry the route's leading literal segments too (`${API}/checkout` for
 * `/v1/checkout`, the API's base URL ending in `/v1`). `prefixed`: the URL may start with literal segments the route
 * lacks (a proxy's `/api`).
 */
function urlMatches(node: Node, route: string, prefixed = false): boolean {
  let text: string;
  if (Node.isStringLiteral(node) || Node.isNoSubstitutionTemplateLiteral(node)) text = node.getLiteralValue();
  else if (Node.isTemplateExpression(node)) text = node.getHead().getLiteralText() + node.getTemplateSpans().map((s) => `\0${s.getLiteral().getLiteralText()}`).join('');
  else return false;
  const url = text.replace(/[?#].*$/, '').split('/').filter(Boolean);
  const wanted = route.split('/').filter(Boolean);
  const isParam = (segment: string) => /^:|^\[.+\]$/.test(segment);
  const same = (segments: readonly string[], template: readonly string[]) =>
    segments.length === template.length && template.every((segment, i) => segments[i] === segment || (isParam(segment) && segments[i] !== '' && (segments[i] === '\0' || !segments[i]!.includes('\0'))));
  const matches = (segments: readonly string[], origin: boolean): boolean => {
    if (segments.length === 0) return false;
    // The origin (a base URL) may end in the route's first literal segments.
    if (origin && segments.length < wanted.length) {
      const skipped = wanted.slice(0, wanted.length - segments.length);
      return !skipped.some(isParam) && same(segments, wanted.slice(skipped.length));
    }
    const extra = segments.slice(0, Math.max(0, segments.length - wanted.length));
    if (extra.length > 0 && (!prefixed || extra.some((segment) => segment.includes('\0')))) return false;
    return same(segments.slice(extra.length), wanted);
  };
  // `${baseUrl}/api/x`: a leading substitution is the origin (or the route's first parameter, `/${orgId}/checkout`).
  return matches(url, false) || (url[0] === '\0' && matches(url.slice(1), true));
}

/** The route `url` calls with `method`: one the URL matches exactly, else (a client of another package) one behind a prefix. */
function routeCalled(url: Node, method: string | undefined, targets: readonly WiringTarget[], elsewhere: boolean): WiringTarget | undefined {
  const candidates = targets.filter((t) => t.path !== undefined && (t.method ?? 'POST') === method);
  return candidates.find((t) => urlMatches(url, t.path!)) ?? (elsewhere ? candidates.find((t) => urlMatches(url, t.path!, true)) : undefined);
}

const propertyValue = (object: ObjectLiteralExpression, name: string) => {
  const property = object.getProperty(name);
  return property && Node.isPropertyAssignment(property) ? property.getInitializer() : undefined;
};

/** Whether the function calls a hook (`useState(…)`, `useSelector(…)`) in its own body, not in a nested function. */
function callsHooks(fn: FunctionDeclaration | ArrowFunction | FunctionExpression): boolean {
  return fn.getDescendantsOfKind(SyntaxKind.CallExpression).some((call) => {
    const callee = call.getExpression();
    const name = Node.isIdentifier(callee) ? callee.getText() : Node.isPropertyAccessExpression(callee) && callee.getExpression().getText() === 'React' ? callee.getName() : undefined;
    return name !== undefined && /^use[A-Z]/.test(name) && call.getFirstAncestor((a) => Node.isFunctionLikeDeclaration(a)) === fn;
  });
}

/**
 * The React component the node runs in: a top-level PascalCase function (declaration or const arrow / function), or
 * one named otherwise that calls hooks.
 */
function componentOf(node: Node): { body: Block; name: string } | undefined {
  let current: Node | undefined = node;
  let outermost: FunctionDeclaration | ArrowFunction | FunctionExpression | undefined;
  while (current) {
    if (Node.isFunctionDeclaration(current) || Node.isArrowFunction(current) || Node.isFunctionExpression(current)) outermost = current;
    current = current.getParent();
  }
  if (!outermost) return undefined;
  let name: string | undefined;
  if (Node.isFunctionDeclaration(outermost)) name = outermost.getName() ?? (outermost.isDefaultExport() ? 'default' : undefined);
  else {
    const holder = outermost.getParent();
    if (holder && Node.isVariableDeclaration(holder)) name = holder.getName();
  }
  const body = outermost.getBody();
  if (!name || !body || !Node.isBlock(body)) return undefined;
  // `export default function checkoutForm()`: a lowercase name is still a component when it calls hooks itself (and
  // is not a hook, `use…`), since only components and hooks may.
  if (!(PASCAL.test(name) || name === 'default') && (/^use[A-Z0-9]/.test(name) || !callsHooks(outermost))) return undefined;
  // The hook is declared at the top of the component: the site must not be that very statement.
  return { body, name };
}

/**
 * `const <name>Intent = useIdempotencyKey();` as the component's first statement, once per action; returns the
 * variable. The body is found again by position after every edit (ts-morph forgets nodes on text edits).
 */
function ensureIntent(sf: SourceFile, body: Block, target: WiringTarget): string {
  const name = `${target.codeName}Intent`;
  const existing = body.getVariableDeclaration(name);
  if (existing) return name;
  body.insertStatements(0, fitStatement(sf, `const ${name} = useIdempotencyKey();`));
  return name;
}

interface Site {
  target: WiringTarget;
  line: number;
  /** Applies the edit (given the intent's variable); undefined when the site is already wired. */
  wire?: (intent: string) => string | undefined;
  /**
   * For a request a helper function makes (`export const checkout = (cart) => api.post('/checkout', cart)`): sends
   * the header from the helper's parameter when the caller gives one, and leaves settling to the caller.
   */
  keyWith?: (parameter: string) => void;
  node: Node;
  /** What the edit calls from the hook's module besides useIdempotencyKey. */
  helper?: 'keyedAction';
  /** The request helper the site calls (`checkout` of `checkout(cart)`), which sends the key it is given. */
  via?: string;
}

/** A function outside any component that makes the request, keyed through a parameter of its own (see keyHelpers). */
interface RequestHelper {
  file: string;
  name: string;
  /** The position of its `idempotencyKey` parameter. */
  keyIndex: number;
  target: WiringTarget;
  line: number;
}

/** A code file of the user's that may call a target: not a declaration file, the scaffold, or a target's own file. */
const clientCandidate = (file: string, targets: readonly WiringTarget[], options: ClientWiringOptions) =>
  CODE.test(file) && !file.endsWith('.d.ts') && !file.startsWith(`${options.scaffoldDir}/`) && !targets.some((t) => t.file === file);

const KEY_PARAMETER = 'idempotencyKey';

/**
 * The top-level function a node runs in when that is no component: `export async function checkout(cart) {…}` or
 * `export const checkout = (cart) => api.post(…)`. A function nested in another, a class method or an object's
 * member is not one (its callers cannot be found by name).
 */
function helperOf(node: Node): { fn: FunctionDeclaration | ArrowFunction | FunctionExpression; name: string } | undefined {
  let outermost: FunctionDeclaration | ArrowFunction | FunctionExpression | undefined;
  for (let current: Node | undefined = node; current; current = current.getParent()) {
    if (Node.isFunctionDeclaration(current) || Node.isArrowFunction(current) || Node.isFunctionExpression(current)) outermost = current;
    if (Node.isClassDeclaration(current) || Node.isClassExpression(current) || Node.isObjectLiteralExpression(current)) return undefined;
  }
  if (!outermost) return undefined;
  if (Node.isFunctionDeclaration(outermost)) {
    const name = outermost.getName();
    return name && Node.isSourceFile(outermost.getParent()) ? { fn: outermost, name } : undefined;
  }
  const holder = outermost.getParent();
  const statement = holder && Node.isVariableDeclaration(holder) ? holder.getVariableStatement() : undefined;
  return statement && Node.isSourceFile(statement.getParent()) && Node.isVariableDeclaration(holder) ? { fn: outermost, name: holder.getName() } : undefined;
}

/** Whether a helper hands its caller the request's promise: it is async, or returns a call (`axios.post(…)`, `fetch(…).then(…)`). */
function returnsPromise(fn: FunctionDeclaration | ArrowFunction | FunctionExpression): boolean {
  if (fn.isAsync()) return true;
  const body = fn.getBody();
  if (!body) return false;
  if (!Node.isBlock(body)) return Node.isCallExpression(body) || Node.isAwaitExpression(body);
  const own = body.getDescendantsOfKind(SyntaxKind.ReturnStatement).filter((r) => r.getFirstAncestor((a) => Node.isFunctionLikeDeclaration(a)) === fn);
  return own.length > 0 && own.every((r) => {
    const value = r.getExpression();
    return value !== undefined && Node.isCallExpression(value);
  });
}

/**
 * The request helpers of the files outside components (an API module: `export const checkout = (cart) =>
 * api.post('/checkout', cart)`): each gets a last, optional `idempotencyKey` parameter and sends the header when it
 * is given, so every existing call still compiles and the components' calls can pass their intent's key (callSites).
 * One already keyed so is only registered. Returns the helpers; their files' new text replaces `current`'s.
 */
function keyHelpers(current: Map<string, string>, routes: readonly WiringTarget[], options: ClientWiringOptions, result: ClientWiringResult, listed: Set<string>): RequestHelper[] {
  const helpers: RequestHelper[] = [];
  const sources = new Map(current);
  for (const [file, text] of current) {
    if (!clientCandidate(file, routes, options)) continue;
    if (!text.includes('fetch') && !AXIOS_CALL.test(text)) continue;
    const style = clientImportStyle(file, text, options);
    const sf = parseSource(file, text, style);
    const count = () => [...fetchSites(sf, routes, options, style, file, sources), ...axiosSites(sf, routes, options, style, file, sources)].sort((a, b) => a.node.getStart() - b.node.getStart());
    const typed = /\.[cm]?tsx?$/.test(file);
    // Lines as the file had them before any edit here: what a reviewer of the diff reads.
    const lines = count().map((s) => s.line);
    for (let index = lines.length - 1; index >= 0; index--) {
      const located = count()[index];
      const site = located && { ...located, line: lines[index]! };
      if (!site || componentOf(site.node)) continue;
      const helper = helperOf(site.node);
      if (!helper) continue;
      const parameters = helper.fn.getParameters();
      const existing = parameters.findIndex((p) => p.getName() === KEY_PARAMETER);
      if (!site.wire) {
        if (existing >= 0) helpers.push({ file, name: helper.name, keyIndex: existing, target: site.target, line: site.line });
        continue;
      }
      // The caller settles the intent with what the helper returns: a helper that returns a function (a Redux thunk,
      // `(order) => async (dispatch) => { … }`) or nothing gives it nothing to settle with.
      if (existing < 0 && !returnsPromise(helper.fn)) {
        listed.add(`${file}:${site.line}`);
        result.manual.push({ action: site.target.action, file, line: site.line, reason: `${describe(site.target)} is requested in ${helper.name}, which does not return the request's promise (it returns a function, as a Redux thunk does, or nothing): take a key from useIdempotencyKey() in the component that dispatches it, pass it down to this call's ${options.keyHeader} header, and settle the intent (intent.settle / intent.fail) when the request ends, by hand` });
        continue;
      }
      if (!site.keyWith || existing >= 0 || parameters.some((p) => p.isRestParameter()) || helper.fn.getDescendantsOfKind(SyntaxKind.Identifier).some((id) => id.getText() === KEY_PARAMETER)) continue;
      const line = site.line;
      site.keyWith(KEY_PARAMETER);
      // Found again after the raw edit; a one-parameter arrow without parentheses gets them.
      const fn = helperOf(count()[index]!.node)!.fn;
      fn.addParameter({ name: KEY_PARAMETER, ...(typed ? { type: 'string', hasQuestionToken: true } : {}) });
      helpers.push({ file, name: helper.name, keyIndex: fn.getParameters().length - 1, target: site.target, line });
      result.edits.push({ action: site.target.action, file, summary: `${helper.name} sends the ${options.keyHeader} header to ${describe(site.target)} when its caller passes a key (line ${line})` });
    }
    if (sf.getFullText() !== text) current.set(file, sf.getFullText());
  }
  return helpers;
}

/** Calls of request helpers in a file: `checkout(cart)` gets the intent's key at the helper's key position, and settles with the answer. */
function helperCallSites(sf: SourceFile, file: string, helpers: readonly RequestHelper[], imports: ProjectImports): Site[] {
  const sites: Site[] = [];
  const locals = new Map<string, RequestHelper>();
  for (const helper of helpers) {
    if (helper.file === file) locals.set(helper.name, helper);
  }
  for (const declaration of sf.getImportDeclarations()) {
    const module = resolveSpecifier(file, declaration.getModuleSpecifierValue(), imports);
    if (module === undefined) continue;
    for (const helper of helpers) {
      if (!isModule(helper.file, module)) continue;
      const imported = declaration.getNamedImports().find((n) => n.getName() === helper.name);
      if (imported) locals.set(imported.getAliasNode()?.getText() ?? helper.name, helper);
    }
  }
  if (locals.size === 0) return sites;
  for (const call of sf.getDescendantsOfKind(SyntaxKind.CallExpression)) {
    const callee = call.getExpression();
    const helper = Node.isIdentifier(callee) ? locals.get(callee.getText()) : undefined;
    if (!helper || helperOf(call)?.name === helper.name) continue;
    const line = call.getStartLineNumber();
    const args = call.getArguments();
    if (args.some((a) => a.getKind() === SyntaxKind.SpreadElement) || args.length > helper.keyIndex + 1) {
      sites.push({ target: helper.target, line, node: call, via: helper.name, wire: () => `${helper.name} is called with arguments apply cannot line up with its parameters: pass a key from useIdempotencyKey() as its ${KEY_PARAMETER} argument` });
      continue;
    }
    const given = args[helper.keyIndex];
    if (given && /\bIntent\.key\(\)$|\bidempotencyKey$/.test(given.getText())) {
      sites.push({ target: helper.target, line, node: call, via: helper.name });
      continue;
    }
    if (given) {
      sites.push({ target: helper.target, line, node: call, via: helper.name });
      continue;
    }
    sites.push({
      target: helper.target,
      line,
      node: call,
      via: helper.name,
      wire: (intent) => {
        replaceRaw(call, `${withArgumentAt(call, helper.keyIndex, `${intent}.key()`)}.then(${intent}.settle, ${intent}.fail)`);
        return undefined;
      },
    });
  }
  return sites;
}

/** The text of `outer` with `inner` (a descendant) replaced by `text`. */
function replaceRange(outer: Node, inner: Node, text: string): string {
  const full = outer.getText();
  const start = inner.getStart() - outer.getStart();
  return `${full.slice(0, start)}${text}${full.slice(start + inner.getWidth())}`;
}

/** `{ a }` → `{ a, entry }`; a multi-line literal gets the entry on its own line, indented like its last property. */
function withProperty(object: ObjectLiteralExpression, entry: string): string {
  const text = object.getText();
  const last = object.getProperties().at(-1);
  if (object.getStartLineNumber() === object.getEndLineNumber() || !last) {
    const inner = text.slice(1, -1).trim().replace(/,$/, '');
    return inner === '' ? `{ ${entry} }` : `{ ${inner}, ${entry} }`;
  }
  const end = last.getEnd() - object.getStart();
  const after = text.slice(end);
  const indent = last.getIndentationText();
  return after.trimStart().startsWith(',') ? `${text.slice(0, end)},\n${indent}${entry},${after.replace(/^\s*,/, '')}` : `${text.slice(0, end)},\n${indent}${entry}${after}`;
}

/**
 * The text of `call` with `value` as its argument at `index`, after the arguments it has (any it skips are
 * `undefined`), written after its last argument so the rest of the call keeps its layout.
 */
function withArgumentAt(call: CallExpression, index: number, value: string): string {
  const args = call.getArguments();
  const added = [...Array.from({ length: Math.max(0, index - args.length) }, () => 'undefined'), value].join(', ');
  const full = call.getText();
  const last = args.at(-1);
  if (!last) return `${full.slice(0, -1)}${added})`;
  const end = last.getEnd() - call.getStart();
  return `${full.slice(0, end)}, ${added}${full.slice(end)}`;
}

/** A header entry sent only when the helper's caller gave a key: `...(idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {})`. */
const optionalHeader = (header: string, parameter: string) => `...(${parameter} ? { ${header}: ${parameter} } : {})`;

/** Whether a fetch's options already send the key header. */
const sendsKey = (options: ObjectLiteralExpression, header: string) => {
  const headers = propertyValue(options, 'headers');
  return !!headers && headers.getText().toLowerCase().includes(header.toLowerCase());
};

/** Whether `id` names a const declared with an object literal in a scope the use is in (a function's `const config = {…}`). */
function constObjectInScope(id: Identifier): boolean {
  for (const scope of id.getAncestors()) {
    if (!Node.isBlock(scope) && !Node.isSourceFile(scope)) continue;
    for (const statement of scope.getStatements()) {
      if (!Node.isVariableStatement(statement) || statement.getDeclarationKind() !== VariableDeclarationKind.Const || statement.getStart() > id.getStart()) continue;
      const declaration = statement.getDeclarations().find((d) => d.getName() === id.getText());
      if (declaration) return Node.isObjectLiteralExpression(declaration.getInitializer());
    }
  }
  return false;
}

/**
 * Whether a fetch's `headers: defaultHeaders` is a plain object, so `{ ...defaultHeaders, key }` sends all it did: a
 * const initialised with an object literal, in this file or exported by the project module it is imported from. A
 * `Headers` instance or an entry list would spread to nothing, so anything else is left to the user.
 */
function plainObjectHeaders(headers: Node, sf: SourceFile, file: string, files: ReadonlyMap<string, string>, imports: ProjectImports): boolean {
  if (!Node.isIdentifier(headers)) return false;
  const name = headers.getText();
  const isObjectConst = (source: SourceFile, exported: boolean) => {
    const declaration = source.getVariableDeclaration(name);
    const statement = declaration?.getVariableStatement();
    if (!declaration || !statement || statement.getDeclarationKind() !== VariableDeclarationKind.Const || (exported && !statement.isExported())) return false;
    let value = declaration.getInitializer();
    while (value && (Node.isAsExpression(value) || Node.isSatisfiesExpression(value) || Node.isParenthesizedExpression(value))) value = value.getExpression();
    return value !== undefined && Node.isObjectLiteralExpression(value);
  };
  if (isObjectConst(sf, false)) return true;
  const declaration = sf.getImportDeclarations().find((d) => d.getNamedImports().some((n) => (n.getAliasNode() ?? n.getNameNode()).getText() === name && n.getAliasNode() === undefined));
  const module = declaration && importedModule(file, declaration.getModuleSpecifierValue(), files, imports);
  return module !== undefined && isObjectConst(module, true);
}

/** The project module an import of `file` names (relative or through an alias), parsed; undefined for packages. */
function importedModule(file: string, specifier: string, files: ReadonlyMap<string, string>, imports: ProjectImports): SourceFile | undefined {
  const module = resolveSpecifier(file, specifier, imports);
  const found = module === undefined ? undefined : [...files].find(([rel]) => isModule(rel, module));
  return found ? parseSource(found[0], found[1], { quote: 'single', semicolons: true }) : undefined;
}

function fetchSites(sf: SourceFile, targets: readonly WiringTarget[], options: ClientWiringOptions, style: ImportStyle, file: string, files: ReadonlyMap<string, string>): Site[] {
  const sites: Site[] = [];
  const header = style.quote === 'double' ? `"${options.keyHeader}"` : `'${options.keyHeader}'`;
  for (const call of sf.getDescendantsOfKind(SyntaxKind.CallExpression)) {
    const callee = call.getExpression().getText();
    if (callee !== 'fetch' && callee !== 'window.fetch' && callee !== 'globalThis.fetch') continue;
    const [url, init] = call.getArguments();
    if (!url || !init || !Node.isObjectLiteralExpression(init)) continue;
    const method = propertyValue(init, 'method');
    const methodName = method && (Node.isStringLiteral(method) || Node.isNoSubstitutionTemplateLiteral(method)) ? method.getLiteralValue().toUpperCase() : undefined;
    const target = routeCalled(url, methodName, targets, options.elsewhere ?? false);
    if (!target) continue;
    if (sendsKey(init, options.keyHeader)) {
      sites.push({ target, line: call.getStartLineNumber(), node: call });
      continue;
    }
    const headers = propertyValue(init, 'headers');
    const spread = headers !== undefined && plainObjectHeaders(headers, sf, file, files, options.imports);
    if (headers && !Node.isObjectLiteralExpression(headers) && !spread) {
      sites.push({ target, line: call.getStartLineNumber(), node: call, wire: () => `its headers are not an object literal: add ${options.keyHeader}: <intent>.key() to them` });
      continue;
    }
    // One text edit for the whole call: the header joins the options, and the answer settles the intent.
    const edit = (entry: string, after: string) => {
      const initText =
        headers && Node.isObjectLiteralExpression(headers)
          ? replaceRange(init, headers, withProperty(headers, entry))
          : headers && spread
            ? replaceRange(init, headers, `{ ...${headers.getText()}, ${entry} }`)
            : withProperty(init, `headers: { ${entry} }`);
      replaceRaw(call, `${replaceRange(call, init, initText)}${after}`);
    };
    sites.push({
      target,
      line: call.getStartLineNumber(),
      node: call,
      wire: (intent) => {
        edit(`${header}: ${intent}.key()`, `.then(${intent}.settle)`);
        return undefined;
      },
      keyWith: (parameter) => edit(optionalHeader(header, parameter), ''),
    });
  }
  return sites;
}

/** A file that may call axios: it imports it, or calls something named like an API client. */
const AXIOS_CALL = /\baxios\b|\.(?:post|put|patch|delete)\s*\(/;
/** axios's methods that take the request body second and the config third; the others take the config second. */
const BODY_METHODS = new Set(['post', 'put', 'patch', 'postForm', 'putForm', 'patchForm']);

/**
 * Whether `name` in `sf` is axios or an instance of it: axios's default import (or require), a const made by
 * `axios.create(…)` in the file, or such a const exported by the project module it is imported from (`api` of
 * `import { api } from '../lib/api'`, also as that module's default export); or a const a project function without
 * arguments returns one into (`const api = useAxiosPrivate()`, a hook that sets up interceptors and returns the
 * instance).
 */
function isAxios(name: string, sf: SourceFile, file: string, files: ReadonlyMap<string, string>, imports: ProjectImports, depth = 0): boolean {
  const axiosLocal = (source: SourceFile) =>
    source.getImportDeclarations().find((d) => d.getModuleSpecifierValue() === 'axios')?.getDefaultImport()?.getText() ??
    (/\brequire\(\s*['"]axios['"]\s*\)/.test(source.getFullText()) ? 'axios' : undefined);
  const moduleFile = (source: SourceFile) => source.getFilePath().slice(1);
  const madeBy = (source: SourceFile, local: string) => {
    const created = axiosLocal(source);
    let value = source.getVariableDeclaration(local)?.getInitializer() ?? localDeclaration(source, local);
    while (value && (Node.isAsExpression(value) || Node.isSatisfiesExpression(value) || Node.isParenthesizedExpression(value))) value = value.getExpression();
    if (value === undefined || !Node.isCallExpression(value)) return false;
    if (created !== undefined && value.getExpression().getText() === `${created}.create`) return true;
    const callee = value.getExpression();
    return depth < 2 && value.getArguments().length === 0 && Node.isIdentifier(callee) && returnsAxios(source, callee.getText());
  };
  // A function of `source` (or imported into it) whose every return is axios or an instance of it.
  const returnsAxios = (source: SourceFile, callee: string): boolean => {
    const fn = functionNamed(source, callee);
    if (fn) {
      const returned = returnedValues(fn);
      return returned.length > 0 && returned.every((value) => Node.isIdentifier(value) && isAxios(value.getText(), source, moduleFile(source), files, imports, depth + 1));
    }
    const imported = importedBinding(source, callee);
    if (imported?.name === undefined) return false;
    const module = importedModule(moduleFile(source), imported.specifier, files, imports);
    return module !== undefined && functionNamed(module, imported.name) !== undefined && returnsAxios(module, imported.name);
  };
  if (axiosLocal(sf) === name || madeBy(sf, name)) return true;
  const imported = importedBinding(sf, name);
  if (!imported) return false;
  const source = importedModule(file, imported.specifier, files, imports);
  if (!source) return false;
  if (imported.name !== undefined) return madeBy(source, imported.name);
  const exported = source.getExportAssignment((e) => !e.isExportEquals())?.getExpression();
  return exported !== undefined && Node.isIdentifier(exported) && madeBy(source, exported.getText());
}

/** The const `local` declares anywhere in the file (a component's `const api = useAxiosPrivate()`), when only one does. */
function localDeclaration(sf: SourceFile, local: string): Expression | undefined {
  const found = sf.getDescendantsOfKind(SyntaxKind.VariableDeclaration).filter((d) => d.getName() === local);
  return found.length === 1 ? found[0]!.getInitializer() : undefined;
}

/** How `local` is imported into `sf`: the module and the exported name (undefined for the default export). */
function importedBinding(sf: SourceFile, local: string): { specifier: string; name?: string } | undefined {
  for (const declaration of sf.getImportDeclarations()) {
    const named = declaration.getNamedImports().find((n) => (n.getAliasNode() ?? n.getNameNode()).getText() === local);
    if (named) return { specifier: declaration.getModuleSpecifierValue(), name: named.getName() };
    if (declaration.getDefaultImport()?.getText() === local) return { specifier: declaration.getModuleSpecifierValue() };
  }
  return undefined;
}

/** A top-level function of the file by name: `function f() {}` or `const f = () => …`. */
function functionNamed(sf: SourceFile, name: string): FunctionDeclaration | ArrowFunction | FunctionExpression | undefined {
  const declared = sf.getFunction(name);
  if (declared) return declared;
  const value = sf.getVariableDeclaration(name)?.getInitializer();
  return value && (Node.isArrowFunction(value) || Node.isFunctionExpression(value)) ? value : undefined;
}

/** What a function returns: its `return` expressions (not those of functions nested in it), or an arrow's body. */
function returnedValues(fn: FunctionDeclaration | ArrowFunction | FunctionExpression): Node[] {
  const body = fn.getBody();
  if (body && !Node.isBlock(body)) return [body];
  return fn.getDescendantsOfKind(SyntaxKind.ReturnStatement).filter((r) => r.getFirstAncestor((a) => Node.isFunctionLikeDeclaration(a)) === fn).flatMap((r) => r.getExpression() ?? []);
}

/**
 * axios calls of a protected route: `axios.post(url, data, config)`, `api.delete(url, config)` on an instance,
 * `axios({ method, url, … })`. The key header joins the config (one is added when there is none), and the answer
 * settles the intent; axios rejects on an error answer, which `intent.fail` reads before passing the error on.
 */
function axiosSites(sf: SourceFile, targets: readonly WiringTarget[], options: ClientWiringOptions, style: ImportStyle, file: string, files: ReadonlyMap<string, string>): Site[] {
  const sites: Site[] = [];
  if (!AXIOS_CALL.test(sf.getFullText())) return sites;
  const header = style.quote === 'double' ? `"${options.keyHeader}"` : `'${options.keyHeader}'`;
  const known = new Map<string, boolean>();
  const axiosNamed = (name: string) => {
    if (!known.has(name)) known.set(name, isAxios(name, sf, file, files, options.imports));
    return known.get(name)!;
  };
  const literalText = (node: Node | undefined) => (node && (Node.isStringLiteral(node) || Node.isNoSubstitutionTemplateLiteral(node)) ? node.getLiteralValue() : undefined);
  for (const call of sf.getDescendantsOfKind(SyntaxKind.CallExpression)) {
    const callee = call.getExpression();
    const args = call.getArguments();
    let url: Node | undefined;
    let method: string | undefined;
    let configAt: number;
    if (Node.isPropertyAccessExpression(callee) && Node.isIdentifier(callee.getExpression()) && /^(post|put|patch|delete)(Form)?$/.test(callee.getName())) {
      if (!axiosNamed(callee.getExpression().getText())) continue;
      url = args[0];
      method = callee.getName().replace(/Form$/, '').toUpperCase();
      configAt = BODY_METHODS.has(callee.getName()) ? 2 : 1;
    } else if ((Node.isIdentifier(callee) && axiosNamed(callee.getText())) || (Node.isPropertyAccessExpression(callee) && callee.getName() === 'request' && Node.isIdentifier(callee.getExpression()) && axiosNamed(callee.getExpression().getText()))) {
      // `axios(config)`, `axios(url, config)`, `api.request(config)`
      configAt = args[0] && Node.isObjectLiteralExpression(args[0]) ? 0 : 1;
      const config = args[configAt];
      if (!config || !Node.isObjectLiteralExpression(config)) continue;
      url = configAt === 0 ? propertyValue(config, 'url') : args[0];
      method = literalText(propertyValue(config, 'method'))?.toUpperCase() ?? 'GET';
    } else continue;
    if (!url) continue;
    const target = routeCalled(url, method, targets, options.elsewhere ?? false);
    if (!target) continue;
    const line = call.getStartLineNumber();
    const config = args[configAt];
    if (config && Node.isObjectLiteralExpression(config) && sendsKey(config, options.keyHeader)) {
      sites.push({ target, line, node: call });
      continue;
    }
    const headers = config && Node.isObjectLiteralExpression(config) ? propertyValue(config, 'headers') : undefined;
    const spread = headers !== undefined && plainObjectHeaders(headers, sf, file, files, options.imports);
    // `const config = { headers: { Authorization } }; axios.post(url, data, config)`: the call gets a copy with the key.
    const named = config !== undefined && Node.isIdentifier(config) && constObjectInScope(config) ? config.getText() : undefined;
    if ((config && !Node.isObjectLiteralExpression(config) && named === undefined) || (headers && !Node.isObjectLiteralExpression(headers) && !spread)) {
      sites.push({ target, line, node: call, wire: () => `its ${headers ? 'headers are' : 'config is'} not an object literal: add ${options.keyHeader}: <intent>.key() to ${headers ? 'them' : 'its headers'}, and settle with .then(<intent>.settle, <intent>.fail)` });
      continue;
    }
    // One text edit for the whole call: the header joins the config (made when there is none), then the settling.
    const edit = (entry: string, after: string): void => {
      let text: string;
      if (config && named !== undefined) {
        text = replaceRange(call, config, `{ ...${named}, headers: { ...${named}.headers, ${entry} } }`);
      } else if (config && Node.isObjectLiteralExpression(config)) {
        const configText = headers && Node.isObjectLiteralExpression(headers) ? replaceRange(config, headers, withProperty(headers, entry)) : headers && spread ? replaceRange(config, headers, `{ ...${headers.getText()}, ${entry} }`) : withProperty(config, `headers: { ${entry} }`);
        text = replaceRange(call, config, configText);
      } else {
        // No config yet: the body argument a body method skips is undefined.
        text = withArgumentAt(call, configAt, `{ headers: { ${entry} } }`);
      }
      replaceRaw(call, `${text}${after}`);
    };
    sites.push({
      target,
      line,
      node: call,
      wire: (intent) => {
        edit(`${header}: ${intent}.key()`, `.then(${intent}.settle, ${intent}.fail)`);
        return undefined;
      },
      keyWith: (parameter) => edit(optionalHeader(header, parameter), ''),
    });
  }
  return sites;
}

/** The module file an import specifier points at, without extension, or undefined for packages. */
function resolveSpecifier(from: string, specifier: string, imports: ProjectImports): string | undefined {
  let resolved: string | undefined;
  if (specifier.startsWith('./') || specifier.startsWith('../')) resolved = path.posix.join(path.posix.dirname(from), specifier);
  else {
    const alias = imports.aliases.find((a) => specifier.startsWith(a.prefix));
    if (alias) resolved = path.posix.join(alias.dir, specifier.slice(alias.prefix.length));
  }
  return resolved?.replace(/\.[cm]?[jt]sx?$/, '');
}

/** Whether `file` is the module a resolved specifier names: `lib/api` is lib/api.ts or lib/api/index.ts. */
const isModule = (file: string, module: string) => file.replace(/\.[cm]?[jt]sx?$/, '') === module || file.replace(/\/index\.[cm]?[jt]sx?$/, '') === module;

function actionSites(sf: SourceFile, file: string, targets: readonly WiringTarget[], imports: ProjectImports): Site[] {
  const sites: Site[] = [];
  const typed = /\.[cm]?tsx?$/.test(file);
  for (const declaration of sf.getImportDeclarations()) {
    const module = resolveSpecifier(file, declaration.getModuleSpecifierValue(), imports);
    if (module === undefined) continue;
    for (const target of targets) {
      if (!isModule(target.file, module)) continue;
      const name = serverActionName(target);
      const imported = declaration.getNamedImports().find((n) => n.getName() === name);
      if (!imported) continue;
      const local = imported.getAliasNode()?.getText() ?? imported.getName();
      for (const id of sf.getDescendantsOfKind(SyntaxKind.Identifier)) {
        if (id.getText() !== local || id.getFirstAncestorByKind(SyntaxKind.ImportDeclaration)) continue;
        sites.push(actionSite(target, id, typed));
      }
    }
  }
  return sites;
}

/** The action handed to useActionState (or the older useFormState), directly or as a branch of a conditional. */
function isActionStateArgument(id: Identifier): boolean {
  let node: Node = id;
  for (let parent = node.getParent(); parent; node = parent, parent = parent.getParent()) {
    if (Node.isParenthesizedExpression(parent)) continue;
    if (Node.isConditionalExpression(parent) && parent.getCondition() !== node) continue;
    if (!Node.isCallExpression(parent) || parent.getArguments()[0] !== node) return false;
    return /^(?:React\.)?use(?:ActionState|FormState)$/.test(parent.getExpression().getText());
  }
  return false;
}

/** One use of a Server Action in a component: a call gets the key first, a form's action a small wrapper. */
function actionSite(target: WiringTarget, id: Identifier, typed: boolean): Site {
  const parent = id.getParentOrThrow();
  const line = id.getStartLineNumber();
  // Wired by an earlier run: `keyedAction(signInIntent, signIn)`.
  if (Node.isCallExpression(parent) && parent.getExpression().getText() === 'keyedAction' && parent.getArguments()[1] === id) return { target, line, node: id };
  if (Node.isCallExpression(parent) && parent.getExpression() === id) {
    const first = parent.getArguments()[0];
    if (first && /^\w+Intent\.key\(\)$/.test(first.getText())) return { target, line, node: id };
    return {
      target,
      line,
      node: id,
      wire: (intent) => {
        const call = parent as CallExpression;
        const first = call.getArguments()[0];
        const text = first && onOwnLine(first) ? replaceRange(call, first, `${intent}.key(),\n${first.getIndentationText()}${first.getText()}`) : undefined;
        if (text === undefined) call.insertArgument(0, `${intent}.key()`);
        replaceRaw(call, `${text ?? call.getText()}.then(${intent}.settle)`);
        return undefined;
      },
    };
  }
  if (isActionStateArgument(id)) {
    // `useActionState(signIn, initial)`, also as one branch of `mode === 'signin' ? signIn : signUp`: React calls it
    // with (previous state, FormData), which the wrapper hands on after the key.
    return {
      target,
      line,
      node: id,
      helper: 'keyedAction',
      wire: (intent) => {
        replaceRaw(id, `keyedAction(${intent}, ${id.getText()})`);
        return undefined;
      },
    };
  }
  const container = parent.getParent();
  const attribute = Node.isJsxExpression(parent) && container && Node.isJsxAttribute(container) ? (container as JsxAttribute) : undefined;
  const attributeName = attribute?.getNameNode().getText();
  if (attribute && (attributeName === 'action' || attributeName === 'formAction')) {
    return {
      target,
      line,
      node: id,
      wire: (intent) => {
        const formData = typed ? 'formData: FormData' : 'formData';
        replaceRaw(parent, `{async (${formData}) => { ${intent}.settle(await ${id.getText()}(${intent}.key(), formData)); }}`);
        return undefined;
      },
    };
  }
  const receiver = Node.isCallExpression(parent) ? `to ${parent.getExpression().getText()}()` : Node.isJsxExpression(parent) && attributeName ? `as the ${attributeName} prop` : 'on';
  return { target, line, node: id, wire: () => `${id.getText()} is passed ${receiver}, not called: whoever calls it must pass a key from useIdempotencyKey() as its first argument` };
}

/**
 * The client half of a Next.js app's wiring: components that fetch a protected route send the key header, and
 * components that call a Server Action pass the key first; both from one useIdempotencyKey() per component and
 * action, settled with the answer. Whatever is not in a client component (a fetch wrapper, a Server Component's
 * form) is listed with the reason: a hook cannot live there.
 */
export function wireClients(files: ReadonlyArray<{ path: string; text: string }>, wired: { routes: readonly WiringTarget[]; actions: readonly WiringTarget[] }, options: ClientWiringOptions): ClientWiringResult {
  const result: ClientWiringResult = { texts: new Map(), edits: [], manual: [], usesHook: false, found: new Set() };
  const actions = wired.actions;
  const routes = wired.routes.filter((t) => t.keySource === 'client');
  const targets = [...wired.routes, ...actions];
  const found = result.found;
  const sources = new Map(files.map((f) => [f.path, f.text]));
  // Request helpers first: the components' calls of them are sites of the pass below.
  const current = new Map(sources);
  // Sites a step was written for already (a helper whose request cannot be settled by its caller).
  const listed = new Set<string>();
  const helpers = keyHelpers(current, routes, options, result, listed);
  const called = new Set<RequestHelper>();
  for (const { path: file, text: original } of files) {
    const text = current.get(file) ?? original;
    if (!clientCandidate(file, targets, options)) continue;
    if (!text.includes('fetch') && !AXIOS_CALL.test(text) && !actions.some((t) => text.includes(serverActionName(t)!)) && !helpers.some((h) => text.includes(h.name))) {
      if (text !== original) result.texts.set(file, text);
      continue;
    }
    const style = clientImportStyle(file, text, options);
    const sf = parseSource(file, text, style);
    const count = () => [...fetchSites(sf, routes, options, style, file, sources), ...axiosSites(sf, routes, options, style, file, sources), ...helperCallSites(sf, file, helpers, options.imports), ...actionSites(sf, file, actions, options.imports)].sort((a, b) => a.node.getStart() - b.node.getStart());
    const client = isClientModule(file, text, options.next ?? true) && !REACT_NATIVE.test(text);
    // Sites are wired one at a time, last first, and found again after each edit (text edits forget nodes).
    let pending = count();
    for (const site of pending) {
      found.add(site.target.action);
      if (site.via !== undefined && componentOf(site.node) && client) called.add(helpers.find((h) => h.name === site.via && h.target === site.target)!);
    }
    const total = pending.length;
    // Lines as the file had them before any edit here (the hook's import and each intent move the ones above).
    const lines = pending.map((s) => s.line);
    for (let index = total - 1; index >= 0; index--) {
      pending = count();
      const located = pending[index];
      const site = located && { ...located, line: lines[index]! };
      if (!site?.wire) continue;
      const enclosing = componentOf(site.node);
      const component = client ? enclosing : undefined;
      if (!component) {
        if (listed.has(`${file}:${site.line}`)) continue;
        const why = REACT_NATIVE.test(text) ? 'a React Native component has no Web Crypto to make keys with (use expo-crypto\'s randomUUID or react-native-get-random-values)' : enclosing ? 'it is not in a client component ("use client"), where a hook could hold the key' : site.via !== undefined ? `it calls ${site.via} outside a React component` : 'it is outside a React component (a fetch wrapper or a module-level call)';
        result.manual.push({ action: site.target.action, file, line: site.line, reason: `${describe(site.target)} here cannot get a key mechanically: ${why}; create one key per user intent with useIdempotencyKey() in the component that starts it and pass it down` });
        continue;
      }
      const intent = `${site.target.codeName}Intent`;
      const problem = site.wire(intent);
      if (problem !== undefined) {
        result.manual.push({ action: site.target.action, file, line: site.line, reason: `${describe(site.target)}: ${problem}` });
        continue;
      }
      const again = componentOf(count()[index]!.node);
      if (again) ensureIntent(sf, again.body, site.target);
      if (!ensureNamedImport(sf, style.specifier('useIdempotencyKey'), 'useIdempotencyKey') || (site.helper !== undefined && !ensureNamedImport(sf, style.specifier('useIdempotencyKey'), site.helper))) {
        result.manual.push({ action: site.target.action, file, line: site.line, reason: `the file already binds ${site.helper ?? 'useIdempotencyKey'} to something else; import the generated hook under another name` });
        return { texts: new Map(), edits: [], manual: result.manual, usesHook: false, found: new Set() };
      }
      result.usesHook = true;
      const what = actions.includes(site.target) ? `passes a key from useIdempotencyKey() to the Server Action ${serverActionName(site.target)}` : site.via !== undefined ? `passes a key from useIdempotencyKey() to ${site.via}, which sends it to ${describe(site.target)}` : `sends the ${options.keyHeader} header from useIdempotencyKey() to ${describe(site.target)}`;
      result.edits.push({ action: site.target.action, file, summary: `${component.name === 'default' ? 'the default component' : component.name} ${what} (line ${site.line})` });
    }
    if (sf.getFullText() !== original) result.texts.set(file, sf.getFullText());
  }
  for (const helper of helpers) {
    if (called.has(helper)) continue;
    result.manual.push({ action: helper.target.action, file: helper.file, line: helper.line, reason: `no React component calls ${helper.name}, which now sends the ${options.keyHeader} header only when given a key (its ${KEY_PARAMETER} parameter): whoever calls it must pass one per user intent, reused on retry` });
  }
  for (const target of routes) {
    if (found.has(target.action)) continue;
    result.manual.push({ action: target.action, file: target.file, line: target.line, reason: `no caller found in the project's components: callers must now send an ${options.keyHeader} header (one per user intent, reused on retry); requests without it are answered 400, so ship the client change first` });
  }
  for (const target of actions) {
    if (found.has(target.action)) continue;
    result.manual.push({ action: target.action, file: target.file, line: target.line, reason: `no caller of the Server Action ${serverActionName(target)} found in the project: its callers must pass an idempotency key (useIdempotencyKey()) as the first argument` });
  }
  return result;
}

/**
 * A component that imports nothing of the project's by relative path gets the hook through the tsconfig alias that
 * covers the scaffold folder (`@/lib/idempotency/useIdempotencyKey`), as Next apps write it; otherwise the file's way.
 */
function clientImportStyle(file: string, text: string, options: ClientWiringOptions): ImportStyle {
  const style = importStyleFor(file, text, options.scaffoldDir, options.imports);
  const alias = options.imports.aliases.find((a) => a.dir === '' || options.scaffoldDir === a.dir || options.scaffoldDir.startsWith(`${a.dir}/`));
  if (!alias || /(?:from|import)\s*\(?\s*['"]\.\.?\//.test(text)) return style;
  return { ...style, specifier: (target) => `${alias.prefix}${path.posix.relative(alias.dir, `${options.scaffoldDir}/${target}`)}` };
}

const describe = (target: WiringTarget) => `${target.method ?? 'POST'} ${target.path ?? ''}`;
