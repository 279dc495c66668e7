import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { Node, Project, SyntaxKind, type ArrowFunction, type FunctionDeclaration, type FunctionExpression, type Identifier, type MethodDeclaration, type PropertyAccessExpression, type SourceFile } from 'ts-morph';
import { readInside } from '../emit/safePath.js';
import { walkProject } from '../inspect/files/walkProject.js';
import { importStyleFor, type ProjectImports } from './importStyle.js';
import { locateRoute, isWired, routeCalls } from './locateRoute.js';
import { principalPathIn } from './principalPath.js';
import { parseSource } from './sourceFile.js';
import type { TransformContext } from './transforms/context.js';
import { keyStripeCalls } from './transforms/stripeKey.js';
import type { Edit, ManualStep, WiringTarget } from './types.js';

type Handler = ArrowFunction | FunctionExpression | MethodDeclaration | FunctionDeclaration;

/** The frameworks whose routes take the handler as their last argument (or Fastify's `handler:` option). */
export const NAMED_HANDLER_FRAMEWORKS = new Set(['express', 'fastify', 'koa', 'hono']);

export interface NamedHandlerInput {
  root: string;
  framework: string;
  /** The HTTP targets apply wired, with the text each file had before and has after the route pass. */
  targets: readonly WiringTarget[];
  texts: ReadonlyMap<string, { before: string; after: string }>;
  /** Whether the file is byte-for-byte what the last apply wrote (its recorded line may have moved). */
  anyLine: (file: string) => boolean;
  scaffoldDir: string;
  imports: ProjectImports;
  scaffoldModules: ReadonlySet<string>;
}

export interface NamedHandlerOutcome {
  /** Files whose text changed, with their new text (a file the route pass changed already is built upon). */
  texts: Map<string, string>;
  edits: Edit[];
  manual: ManualStep[];
  /** Actions whose followed handler reads the caller's id (`req.user.id`), and that path (Express, Fastify). */
  principals: Map<string, string[]>;
}

/** `createPayment` or `controller.pay` as the route's handler: the name apply follows to its declaration. */
function handlerReference(call: Node, framework: string): Identifier | undefined {
  if (!Node.isCallExpression(call)) return undefined;
  const args = call.getArguments();
  let last = args[args.length - 1];
  // Fastify's route options: app.route({ method, url, handler: createBooking }) or app.post(url, { handler: … }).
  if (framework === 'fastify' && last && Node.isObjectLiteralExpression(last)) {
    const property = last.getProperty('handler');
    last = property && Node.isPropertyAssignment(property) ? property.getInitializer() : undefined;
  }
  if (!last || args.length < 2) return undefined;
  if (Node.isIdentifier(last)) return last;
  if (Node.isPropertyAccessExpression(last)) return last.getNameNode();
  return undefined;
}

/** The function a definition node stands for: `function f`, `const f = () =>`, a method, `pay: async () =>`. */
function functionOf(node: Node): Handler | undefined {
  if (Node.isFunctionDeclaration(node) || Node.isMethodDeclaration(node)) return node.getBody() ? node : undefined;
  const declaration = Node.isIdentifier(node) || Node.isPropertyAccessExpression(node) ? node.getParent() : node;
  if (!declaration) return undefined;
  // CommonJS: `exports.createPayment = async (req, res) => …` / `module.exports.pay = function (req, res) { … }`.
  const assigned = exportAssignment(declaration);
  if (assigned) return assigned;
  if (Node.isFunctionDeclaration(declaration) || Node.isMethodDeclaration(declaration)) return declaration.getBody() ? declaration : undefined;
  if (Node.isVariableDeclaration(declaration) || Node.isPropertyAssignment(declaration) || Node.isPropertyDeclaration(declaration)) {
    const init = declaration.getInitializer();
    if (init && (Node.isArrowFunction(init) || Node.isFunctionExpression(init))) return init;
    // `asyncHandler(async (req, res) => …)` / `catchAsync(...)`: the one function the wrapper is given gets the request.
    const wrapped = init && Node.isCallExpression(init) ? init.getArguments().filter((a) => Node.isArrowFunction(a) || Node.isFunctionExpression(a)) : [];
    return wrapped.length === 1 ? (wrapped[0] as ArrowFunction | FunctionExpression) : undefined;
  }
  return undefined;
}

/** The function a CommonJS export assignment (`exports.x = …`) gives, directly or through a one-function wrapper. */
function exportAssignment(node: Node): Handler | undefined {
  if (!Node.isBinaryExpression(node) || node.getOperatorToken().getKind() !== SyntaxKind.EqualsToken || !Node.isPropertyAccessExpression(node.getLeft())) return undefined;
  const right = node.getRight();
  if (Node.isArrowFunction(right) || Node.isFunctionExpression(right)) return right;
  const wrapped = Node.isCallExpression(right) ? right.getArguments().filter((a) => Node.isArrowFunction(a) || Node.isFunctionExpression(a)) : [];
  return wrapped.length === 1 ? (wrapped[0] as ArrowFunction | FunctionExpression) : undefined;
}

const isAssignment = (node: Node) => Node.isBinaryExpression(node) && node.getOperatorToken().getKind() === SyntaxKind.EqualsToken && Node.isPropertyAccessExpression(node.getLeft());

/**
 * Where a function sits, as names from the file down (`['refundController', 'create']`), to find it again in the
 * file's text after earlier edits moved it.
 */
function namePath(node: Node): string[] {
  const names: string[] = [];
  for (let current: Node | undefined = node; current && !Node.isSourceFile(current); current = current.getParent()) {
    if (Node.isFunctionDeclaration(current) || Node.isMethodDeclaration(current) || Node.isClassDeclaration(current) || Node.isVariableDeclaration(current) || Node.isPropertyAssignment(current) || Node.isPropertyDeclaration(current)) {
      names.unshift(current.getName() ?? 'default');
    } else if (isAssignment(current) && Node.isBinaryExpression(current)) {
      names.unshift(current.getLeft().getText());
    }
  }
  return names;
}

function findByNamePath(sf: SourceFile, names: readonly string[]): Handler | undefined {
  const matches = sf.getDescendants().filter((node) => (Node.isFunctionDeclaration(node) || Node.isMethodDeclaration(node) || Node.isVariableDeclaration(node) || Node.isPropertyAssignment(node) || Node.isPropertyDeclaration(node) || isAssignment(node)) && namePath(node).join('\0') === names.join('\0'));
  const functions = matches.map(functionOf).filter((f): f is Handler => f !== undefined);
  return functions.length === 1 ? functions[0] : undefined;
}

/** The declaration's name (of the definition the route's reference leads to), whose references say who else uses the function. */
function nameNodeOf(definition: Node): Node | undefined {
  if (Node.isIdentifier(definition)) return definition;
  if (Node.isPropertyAccessExpression(definition)) return definition.getNameNode();
  if (isAssignment(definition) && Node.isBinaryExpression(definition)) return (definition.getLeft() as PropertyAccessExpression).getNameNode();
  return Node.isFunctionDeclaration(definition) || Node.isMethodDeclaration(definition) || Node.isVariableDeclaration(definition) || Node.isPropertyAssignment(definition) || Node.isPropertyDeclaration(definition) ? definition.getNameNode() : undefined;
}

/** A reference that only names the function (import, export, its own declaration), as opposed to using it. */
function isMention(node: Node, nameNode: Node): boolean {
  if (node === nameNode) return true;
  const parent = node.getParent();
  return !!parent && (Node.isImportSpecifier(parent) || Node.isImportClause(parent) || Node.isExportSpecifier(parent) || Node.isNamespaceImport(parent) || Node.isExportAssignment(parent));
}

/**
 * A program over the project's own source files only, with its tsconfig's options (paths, module resolution):
 * `noResolve` keeps dependencies (and anything an import reaches outside the walk) out, which also keeps it fast.
 */
function loadProject(root: string, files: readonly string[]): Project {
  const tsconfig = path.join(root, 'tsconfig.json');
  const project = existsSync(tsconfig)
    ? new Project({ tsConfigFilePath: tsconfig, skipAddingFilesFromTsConfig: true, skipFileDependencyResolution: true, compilerOptions: { noResolve: true } })
    : new Project({ compilerOptions: { allowJs: true, checkJs: false, noResolve: true }, skipFileDependencyResolution: true });
  for (const rel of files) if (/\.(m|c)?[jt]sx?$/.test(rel) && !rel.endsWith('.d.ts')) project.addSourceFileAtPath(path.join(root, rel));
  return project;
}

/** Inside the project for real: not a declaration file, not a dependency, not reached through a symlink out of it. */
function insideProject(root: string, file: string): string | undefined {
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

interface Resolved {
  target: WiringTarget;
  file: string;
  names: string[];
  /** Uses of the function other than this route's own reference: a second route, a test, another caller. */
  others: Array<{ file: string; line: number }>;
  reference: string;
}

/**
 * Routes that pass their handler by name (`router.post('/pay', createPayment)`, `app.post('/pay', auth,
 * controller.pay)`): the handler is followed to its declaration, in the same file or a project file it imports, and
 * its provider calls get the derived keys as an inline handler's do, reading the claim from the handler's own first
 * parameter (the request the route hands it). A function more than one place uses is left as a manual step: keyed
 * from one route's claim it would throw (or send another action's key) when called from the other.
 */
export async function keyNamedHandlers(input: NamedHandlerInput): Promise<NamedHandlerOutcome> {
  const out: NamedHandlerOutcome = { texts: new Map(), edits: [], manual: [], principals: new Map() };
  if (!NAMED_HANDLER_FRAMEWORKS.has(input.framework)) return out;
  const candidates = input.targets.filter((t) => t.trigger === 'http' && input.texts.has(t.file));
  // Cheap first look on the route files alone: most apps pass inline handlers, and then no program is loaded.
  const named = candidates.filter((target) => {
    const sf = parseSource(target.file, input.texts.get(target.file)!.before, { quote: 'single', semicolons: true });
    const located = locateRoute(sf, target, input.anyLine(target.file));
    return located.kind === 'found' && handlerReference(located.call, input.framework) !== undefined;
  });
  if (named.length === 0) return out;

  // The inspection's walk: confined to the root, a symlink out of it is never followed.
  const { files } = await walkProject(input.root);
  const project = loadProject(input.root, files.map((f) => f.rel));
  const resolved: Resolved[] = [];
  for (const target of named) {
    const sf = project.getSourceFile(path.join(input.root, target.file));
    if (!sf) continue;
    const located = locateRoute(sf, target, input.anyLine(target.file));
    if (located.kind !== 'found') continue;
    // Only a route the route pass left wired: its middleware is what puts the claim on the request.
    const occurrence = located.occurrence ?? routeCalls(sf, target).indexOf(located.call);
    const after = parseSource(target.file, input.texts.get(target.file)!.after, { quote: 'single', semicolons: true });
    const wired = routeCalls(after, target)[occurrence];
    if (!wired || !isWired(wired, target.codeName)) continue;
    const reference = handlerReference(located.call, input.framework)!;
    const line = located.call.getStartLineNumber();
    const name = reference.getText();
    const definitions = reference.getDefinitionNodes().map((d) => ({ node: d, fn: functionOf(d) }));
    const fn = definitions.length === 1 ? definitions[0]!.fn : undefined;
    // An import the program does not follow (noResolve: a dependency, a file outside the walk) ends at the import itself.
    const unresolved = definitions.length === 0 || definitions.every((d) => d.node.getFirstAncestorByKind(SyntaxKind.ImportDeclaration) !== undefined || Node.isImportSpecifier(d.node) || Node.isImportClause(d.node));
    if (unresolved) {
      out.manual.push({ action: target.action, file: target.file, line, reason: `the route passes its handler by name (${name}) and its declaration is not among the project's own files (a dependency, or a file outside the project or behind a link out of it); apply edits only your own files: key its provider calls by hand` });
      continue;
    }
    if (!fn) {
      out.manual.push({ action: target.action, file: target.file, line, reason: `the route passes its handler by name (${name}) and apply cannot follow it to one function it can edit (wrapped, re-assigned or declared several times): key its provider calls with stripeRequestOptions(idempotencyOf(req)) by hand` });
      continue;
    }
    const file = insideProject(input.root, fn.getSourceFile().getFilePath());
    if (!file) {
      out.manual.push({ action: target.action, file: target.file, line, reason: `the handler ${name} is declared outside the project (a dependency or a link out of it); apply edits only your own files: key its provider calls by hand` });
      continue;
    }
    const nameNode = nameNodeOf(definitions[0]!.node);
    if (!Node.isReferenceFindable(nameNode)) {
      out.manual.push({ action: target.action, file: target.file, line, reason: `the route passes its handler by name (${name}) and apply cannot tell who else calls it; key its provider calls with stripeRequestOptions(idempotencyOf(req)) by hand` });
      continue;
    }
    const uses = nameNode.findReferencesAsNodes().filter((ref) => !isMention(ref, nameNode));
    const others = uses.filter((ref) => !(ref.getSourceFile() === sf && ref.getStart() === reference.getStart())).map((ref) => ({ file: insideProject(input.root, ref.getSourceFile().getFilePath()) ?? ref.getSourceFile().getBaseName(), line: ref.getStartLineNumber() }));
    resolved.push({ target, file, names: namePath(fn), others, reference: name });
    // As for an inline handler: how it reads the caller's id is what the instance's principal reads (Koa and Hono
    // read theirs from ctx.state / c.get, which their route transforms work out).
    const principal = input.framework === 'express' || input.framework === 'fastify' ? principalPathIn(fn) : undefined;
    if (principal) out.principals.set(target.action, principal);
  }

  for (const item of resolved) {
    const { target } = item;
    if (item.others.length > 0) {
      const where = item.others.map((o) => `${o.file}:${o.line}`).join(', ');
      out.manual.push({ action: target.action, file: item.file, reason: `the handler ${item.reference} is also used at ${where}: keyed from this route's claim it would fail (or send this action's key) there. Give each route its own handler, or pass idempotencyOf(req) into a shared function and add stripeRequestOptions(context) to its provider calls by hand` });
      continue;
    }
    const current = out.texts.get(item.file) ?? input.texts.get(item.file)?.after ?? (await readInside(input.root, item.file));
    if (current === undefined) continue;
    const style = importStyleFor(item.file, current, input.scaffoldDir, input.imports);
    const sf = parseSource(item.file, current, style);
    const handler = findByNamePath(sf, item.names);
    if (!handler) continue;
    const context: TransformContext = { style, anyLine: true, scaffoldModules: input.scaffoldModules };
    const keyed = keyStripeCalls(sf, handler, { ...target, file: item.file, line: handler.getStartLineNumber() }, context);
    out.manual.push(...keyed.manual);
    if (keyed.edits.length > 0) {
      out.edits.push({ action: target.action, file: item.file, summary: `follows the handler ${item.reference} of ${target.method ?? 'POST'} ${target.path ?? ''} to ${item.file}: its provider calls read the claim from the handler's own request parameter` });
      out.edits.push(...keyed.edits);
    }
    if (sf.getFullText() !== current) out.texts.set(item.file, sf.getFullText());
  }
  return out;
}
