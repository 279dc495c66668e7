import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { Node, Project, SyntaxKind, type ArrowFunction, type FunctionDeclaration, type FunctionExpression, type Identifier, type MethodDeclaration, type SourceFile, type Symbol as MorphSymbol } from 'ts-morph';

export type Handler = ArrowFunction | FunctionExpression | MethodDeclaration | FunctionDeclaration;

/**
 * How many links apply follows from the route's name to the declaration: an import, an index's `export { x } from`,
 * `export { x as y }`, `export default x`, a controller object's `{ pay }`. Real apps need two or three; a longer
 * chain is more likely a registry apply should not guess through.
 */
export const MAX_HOPS = 5;

/** `createPayment` or `controller.pay` as the route's handler: the name apply follows to its declaration. */
export function handlerReference(call: Node, framework: string): Identifier | undefined {
  if (!Node.isCallExpression(call)) return undefined;
  const args = call.getArguments();
  let last = args[args.length - 1];
  // Fastify's route options: app.route({ method, url, handler: createBooking }) or app.post(url, { handler: … }).
  if (framework === 'fastify' && last && Node.isObjectLiteralExpression(last)) {
    const property = last.getProperty('handler');
    last = property && Node.isPropertyAssignment(property) ? property.getInitializer() : undefined;
  }
  if (!last || args.length < 2) return undefined;
  // `controller.handleWebhook.bind(controller)`: the method itself runs, with its own `this`.
  if (Node.isCallExpression(last) && last.getArguments().length === 1) {
    const callee = last.getExpression();
    if (Node.isPropertyAccessExpression(callee) && callee.getName() === 'bind') last = callee.getExpression();
  }
  if (Node.isIdentifier(last)) return last;
  if (Node.isPropertyAccessExpression(last)) return last.getNameNode();
  return undefined;
}

/** The one function a wrapper call (`asyncHandler(async (req, res) => …)`, `catchAsync(...)`) is given: it gets the request. */
function wrappedFunction(node: Node | undefined): Handler | undefined {
  const wrapped = node && Node.isCallExpression(node) ? node.getArguments().filter((a) => Node.isArrowFunction(a) || Node.isFunctionExpression(a)) : [];
  return wrapped.length === 1 ? (wrapped[0] as ArrowFunction | FunctionExpression) : undefined;
}

const asFunction = (node: Node | undefined): Handler | undefined => (node && (Node.isArrowFunction(node) || Node.isFunctionExpression(node)) ? node : wrappedFunction(node));

/** The function a definition node stands for: `function f`, `const f = () =>`, a method, `pay: async () =>`, `export default …`. */
export function functionOf(node: Node): Handler | undefined {
  if (Node.isFunctionDeclaration(node) || Node.isMethodDeclaration(node)) return node.getBody() ? node : undefined;
  // `export default asyncHandler(async (req, res) => …)` / `export default async (req, res) => …`.
  if (Node.isExportAssignment(node)) return asFunction(node.getExpression());
  const declaration = Node.isIdentifier(node) || Node.isPropertyAccessExpression(node) ? node.getParent() : node;
  if (!declaration) return undefined;
  // CommonJS: `exports.createPayment = async (req, res) => …` / `module.exports.pay = function (req, res) { … }`, and
  // a script's undeclared global `createPayment = async (req, res) => …`.
  if (isAssignment(declaration) && Node.isBinaryExpression(declaration)) return asFunction(declaration.getRight());
  if (Node.isFunctionDeclaration(declaration) || Node.isMethodDeclaration(declaration)) return declaration.getBody() ? declaration : undefined;
  if (Node.isVariableDeclaration(declaration) || Node.isPropertyAssignment(declaration) || Node.isPropertyDeclaration(declaration)) return asFunction(declaration.getInitializer());
  return undefined;
}

/**
 * A function given a name by assignment: `exports.pay = …`, `module.exports.pay = …`, or a script's top-level
 * `pay = …` to an undeclared global (implicitGlobal).
 */
export const isAssignment = (node: Node) =>
  Node.isBinaryExpression(node) && node.getOperatorToken().getKind() === SyntaxKind.EqualsToken && (Node.isPropertyAccessExpression(node.getLeft()) || (Node.isIdentifier(node.getLeft()) && Node.isExpressionStatement(node.getParent()) && Node.isSourceFile(node.getParentOrThrow().getParent())));

/**
 * Where a function sits, as names from the file down (`['refundController', 'create']`, `['default']` for a default
 * export), to find it again in the file's text after earlier edits moved it.
 */
export function namePath(node: Node): string[] {
  const names: string[] = [];
  for (let current: Node | undefined = node; current && !Node.isSourceFile(current); current = current.getParent()) {
    if (Node.isFunctionDeclaration(current) || Node.isMethodDeclaration(current) || Node.isClassDeclaration(current) || Node.isVariableDeclaration(current) || Node.isPropertyAssignment(current) || Node.isPropertyDeclaration(current)) {
      names.unshift(current.getName() ?? 'default');
    } else if (Node.isExportAssignment(current)) {
      names.unshift('default');
    } else if (isAssignment(current) && Node.isBinaryExpression(current)) {
      names.unshift(current.getLeft().getText());
    }
  }
  return names;
}

export function findByNamePath(sf: SourceFile, names: readonly string[]): Handler | undefined {
  const matches = sf.getDescendants().filter((node) => (Node.isFunctionDeclaration(node) || Node.isMethodDeclaration(node) || Node.isVariableDeclaration(node) || Node.isPropertyAssignment(node) || Node.isPropertyDeclaration(node) || Node.isExportAssignment(node) || isAssignment(node)) && namePath(node).join('\0') === names.join('\0'));
  const functions = matches.map(functionOf).filter((f): f is Handler => f !== undefined);
  return functions.length === 1 ? functions[0] : undefined;
}

/** A reference that only names the function (import, export, its own declaration, a controller's `{ pay }`), as opposed to using it. */
function isMention(node: Node, at: number): boolean {
  if (node.getStart() === at || node.getKind() === SyntaxKind.DefaultKeyword) return true;
  const parent = node.getParent();
  return !!parent && (Node.isImportSpecifier(parent) || Node.isImportClause(parent) || Node.isExportSpecifier(parent) || Node.isNamespaceImport(parent) || Node.isExportAssignment(parent) || Node.isShorthandPropertyAssignment(parent));
}

/**
 * Every place that uses the function a definition declares, through imports and re-exports: from its name, or from
 * the `default` keyword of an anonymous default export. Undefined when the definition has neither.
 */
export function usesOf(definition: Node, links: readonly Node[] = []): Node[] | undefined {
  const all = [definition, ...links].map(usesOfOne);
  if (all[0] === undefined) return undefined;
  // The links name the function themselves (`{ stripe: handleStripe }`): those references only pass it on.
  const passesOn = (node: Node) => links.some((link) => link.getSourceFile() === node.getSourceFile() && link.getStart() <= node.getStart() && node.getEnd() <= link.getEnd());
  const unique = new Map<string, Node>();
  for (const node of all.flatMap((uses) => uses ?? [])) if (!passesOn(node)) unique.set(`${node.getSourceFile().getFilePath()}:${node.getStart()}`, node);
  return [...unique.values()];
}

function usesOfOne(definition: Node): Node[] | undefined {
  const named = Node.isIdentifier(definition) ? definition : Node.isPropertyAccessExpression(definition) ? definition.getNameNode() : isAssignment(definition) && Node.isBinaryExpression(definition) ? definition.getLeft() : (definition as { getNameNode?: () => Node | undefined }).getNameNode?.();
  const anchor = (named && Node.isPropertyAccessExpression(named) ? named.getNameNode() : named) ?? definition.getFirstDescendantByKind(SyntaxKind.DefaultKeyword) ?? definition.getFirstChildByKind(SyntaxKind.DefaultKeyword);
  if (!anchor) return undefined;
  const sf = definition.getSourceFile();
  const at = anchor.getStart();
  const referenced = sf.getProject().getLanguageService().findReferencesAtPosition(sf, at);
  return referenced.flatMap((r) => r.getReferences()).map((entry) => entry.getNode()).filter((node) => !(node.getSourceFile() === sf && isMention(node, at)) && !isMention(node, -1));
}

/**
 * A program over the project's own source files only, with its tsconfig's options (paths, module resolution):
 * `noResolve` keeps dependencies (and anything an import reaches outside the walk) out, which also keeps it fast.
 */
export function loadProject(root: string, files: readonly string[]): Project {
  const tsconfig = path.join(root, 'tsconfig.json');
  const project = existsSync(tsconfig)
    ? new Project({ tsConfigFilePath: tsconfig, skipAddingFilesFromTsConfig: true, skipFileDependencyResolution: true, compilerOptions: { noResolve: true } })
    : new Project({ compilerOptions: { allowJs: true, checkJs: false, noResolve: true }, skipFileDependencyResolution: true });
  for (const rel of files) if (/\.(m|c)?[jt]sx?$/.test(rel) && !rel.endsWith('.d.ts')) project.addSourceFileAtPath(path.join(root, rel));
  return project;
}

/** Inside the project for real: not a declaration file, not a dependency, not reached through a symlink out of it. */
export function insideProject(root: string, file: string): string | undefined {
  const realRoot = realpathSync(root);
  let real: string;
  try {
    real = realpathSync(file);
  } catch {
    return undefined;
  }
  const rel = path.relative(realRoot, real);
  if (rel.startsWith('..') || path.isAbsolute(rel) || rel.split(path.sep).includes('node_modules') || /\.d\.(m|c)?ts$/.test(rel)) return undefined;
  return rel.split(path.sep).join('/');
}

export type Followed =
  /** `links`: the other names given to it on the way (`{ pay }`, `export default x`), whose uses are its uses too. */
  | { kind: 'function'; fn: Handler; definition: Node; links: Node[]; file: string }
  /** The chain ends in an import the program does not follow (a dependency, a file outside the walk). */
  | { kind: 'unresolved' }
  /** A link on the way, or the declaration, is outside the project (a dependency, a link out of it). */
  | { kind: 'outside' }
  | { kind: 'too-far' }
  /** Declared, but not as one function apply can edit (re-assigned, declared several times, built at run time). */
  | { kind: 'not-a-function' };

/** Where a name ends after its links: the one declaration apply may edit, or why there is none. */
export type FollowedDeclaration = { kind: 'declaration'; definition: Node; links: Node[]; file: string } | Exclude<Followed, { kind: 'function' }>;

/**
 * The declaration a name leads to, link by link (imports, re-exports, `export default x`, a controller object's
 * shorthand `{ pay }`), each link inside the project and at most MAX_HOPS of them: a route's handler, or a
 * @hono/zod-openapi route config (`routes.create` → `export const create = createRoute({ … })`).
 */
export function followDeclaration(root: string, reference: Identifier): FollowedDeclaration {
  let symbol: MorphSymbol | undefined = reference.getSymbol();
  const seen = new Set<unknown>();
  const links: Node[] = [];
  for (let hops = 0; symbol; hops++) {
    if (hops > MAX_HOPS || seen.has(symbol.compilerSymbol)) return { kind: 'too-far' };
    seen.add(symbol.compilerSymbol);
    const declarations = symbol.getDeclarations();
    if (declarations.some((d) => insideProject(root, d.getSourceFile().getFilePath()) === undefined)) return { kind: 'outside' };
    if (symbol.isAlias()) {
      const aliased = symbol.getImmediatelyAliasedSymbol();
      // An undeclared global the compiler resolves to nothing: `module.exports = { createOrder }` or, through
      // `const checkout = require('./pay')`, pay's `module.exports = checkout`.
      const [first] = declarations;
      const global = aliased === undefined || aliased.getDeclarations().length === 0 ? (first && Node.isShorthandPropertyAssignment(first) ? implicitGlobal(first.getSourceFile(), first.getName()) : exportedGlobal(first)) : undefined;
      if (global) return globalDeclaration(root, global, links);
      symbol = aliased;
      continue;
    }
    const [only] = declarations;
    if (declarations.length === 1 && Node.isShorthandPropertyAssignment(only)) {
      links.push(only);
      symbol = only.getValueSymbol();
      // `module.exports = { createOrder }` of an undeclared global `createOrder = async (req, res) => …`.
      const global = symbol === undefined || symbol.getDeclarations().length === 0 ? implicitGlobal(only.getSourceFile(), only.getName()) : undefined;
      if (global) return globalDeclaration(root, global, links);
      continue;
    }
    // `export default handleStripe`, `{ stripe: handleStripe }`, `const stripeWebhook = handleStripe`: another name for it.
    const named = only && (Node.isExportAssignment(only) ? only.getExpression() : Node.isPropertyAssignment(only) || Node.isVariableDeclaration(only) ? only.getInitializer() : undefined);
    if (declarations.length === 1 && named && Node.isIdentifier(named)) {
      links.push(only!);
      symbol = named.getSymbol();
      continue;
    }
    if (declarations.length === 0) return { kind: 'unresolved' };
    const file = declarations.length === 1 ? insideProject(root, only!.getSourceFile().getFilePath()) : undefined;
    return file ? { kind: 'declaration', definition: only!, links, file } : { kind: 'not-a-function' };
  }
  return { kind: 'unresolved' };
}

/**
 * A handler assigned to an undeclared name at the top of a script (`createOrder = async (req, res) => { … }`, without
 * const: sloppy-mode JavaScript makes it a global): the assignment's name, when it is the file's only assignment to a
 * name the file declares nowhere.
 */
function implicitGlobal(sf: SourceFile, name: string): Identifier | undefined {
  if (sf.getVariableDeclaration(name) || sf.getFunction(name) || sf.getClass(name)) return undefined;
  const assigned = sf.getStatements().flatMap((statement) => {
    const expression = Node.isExpressionStatement(statement) ? statement.getExpression() : undefined;
    if (!expression || !Node.isBinaryExpression(expression) || expression.getOperatorToken().getKind() !== SyntaxKind.EqualsToken) return [];
    const left = expression.getLeft();
    return Node.isIdentifier(left) && left.getText() === name ? [left] : [];
  });
  return assigned.length === 1 && asFunction(assigned[0]!.getParentOrThrow().asKindOrThrow(SyntaxKind.BinaryExpression).getRight()) ? assigned[0] : undefined;
}

/** For `const x = require('./pay')`: pay's `module.exports = name` when `name` is an implicit global of pay's. */
function exportedGlobal(declaration: Node | undefined): Identifier | undefined {
  const call = declaration && Node.isVariableDeclaration(declaration) ? declaration.getInitializer() : undefined;
  const specifier = call && Node.isCallExpression(call) && call.getExpression().getText() === 'require' ? call.getArguments()[0] : undefined;
  if (!specifier || !Node.isStringLiteral(specifier) || !specifier.getLiteralValue().startsWith('.')) return undefined;
  const from = path.dirname(declaration!.getSourceFile().getFilePath());
  const base = path.resolve(from, specifier.getLiteralValue());
  const project = declaration!.getSourceFile().getProject();
  const module = ['', '.js', '.cjs', '.ts', '/index.js', '/index.ts'].map((ext) => project.getSourceFile(base + ext)).find((f) => f !== undefined);
  const exported = module?.getStatements().flatMap((statement) => {
    const expression = Node.isExpressionStatement(statement) ? statement.getExpression() : undefined;
    return expression && Node.isBinaryExpression(expression) && expression.getLeft().getText() === 'module.exports' && Node.isIdentifier(expression.getRight()) ? [expression.getRight().getText()] : [];
  });
  return module && exported?.length === 1 ? implicitGlobal(module, exported[0]!) : undefined;
}

function globalDeclaration(root: string, name: Identifier, links: Node[]): FollowedDeclaration {
  const file = insideProject(root, name.getSourceFile().getFilePath());
  return file ? { kind: 'declaration', definition: name, links, file } : { kind: 'outside' };
}

/** The function declaration a route's handler name leads to (followDeclaration), or why apply cannot edit it. */
export function followReference(root: string, reference: Identifier): Followed {
  const followed = followDeclaration(root, reference);
  if (followed.kind !== 'declaration') return followed;
  const fn = functionOf(followed.definition);
  const file = fn && insideProject(root, fn.getSourceFile().getFilePath());
  return fn && file ? { kind: 'function', fn, definition: followed.definition, links: followed.links, file } : { kind: 'not-a-function' };
}
