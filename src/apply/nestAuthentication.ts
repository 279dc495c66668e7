import { Node, ts, type Decorator, type MethodDeclaration } from 'ts-morph';
import type { PathAlias } from '../scaffold/profile/pathAliases.js';
import { importedName, resolveSpecifier } from './nestApplications.js';

/**
 * Nest's own parameter decorators (and @nestjs/graphql's): each reads a part of the request, none hands over the caller;
 * a project's decorator (`@User()`, `@CurrentUser()`) does.
 */
export const REQUEST_PARTS = new Set(['Body', 'Param', 'Query', 'Headers', 'Ip', 'HostParam', 'Session', 'Req', 'Request', 'Res', 'Response', 'Next', 'UploadedFile', 'UploadedFiles', 'Args', 'Context', 'Info', 'Parent', 'Root']);

const HTTP_VERBS = new Set(['Post', 'Put', 'Patch', 'Delete', 'All']);

/** `@UseGuards(JwtAuthGuard)`, `@Auth()`, `@Roles('admin')`, a project's `@Authenticated()`. */
const AUTH_DECORATOR = /Guard|Auth|Roles?$|Permission|Scopes?$|Jwt|Session/i;

/** The metadata key of an opt-out the global guard reads: `IS_PUBLIC_KEY`, `'isPublic'`, `SKIP_AUTH`, `allowAnonymous`. */
const PUBLIC_KEY = /public|skip[-_]?auth|allow[-_]?anonymous/i;

/** A project decorator whose name says the route takes anonymous callers: `@Public()`, `@IsPublic()`, `@SkipAuth()`, `@AllowAnonymous()`. */
const PUBLIC_NAME = /^(is)?public$|^skip[-_]?auth(entication)?$|^allow[-_]?anonymous$|^no[-_]?auth$|^anonymous$/i;

/**
 * One entry of `forRoutes(...)` or `exclude(...)`: a path with its method (upper-case, `ALL` for every method,
 * undefined when the code computes it), a controller class, or something this does not read (a spread, a variable).
 */
type RouteEntry = { kind: 'path'; path: string; method: string | undefined } | { kind: 'controller'; name: string } | { kind: 'unknown' };

/** One `consumer.apply(...).exclude(...).forRoutes(...)` chain: the routes its middleware runs for. */
interface MiddlewareBinding {
  routes: RouteEntry[];
  exclude: RouteEntry[];
}

/** What the project says about authentication as a whole, read once per apply from its source files. */
export interface NestAuthentication {
  /** A global guard (`APP_GUARD`, `app.useGlobalGuards(...)`): every route may be authenticated, unless it opts out. */
  global: boolean;
  /** Every `consumer.apply(...).forRoutes(...)` chain of the project. */
  middleware: MiddlewareBinding[];
  /**
   * Whether the decorator, in the file it is used in, is the project's `SetMetadata(IS_PUBLIC_KEY, true)` factory
   * (`@Public()`, `@SkipAuth()`), resolved through that file's imports to its declaration. False when unresolved.
   */
  optsOut(decorator: Decorator): boolean;
}

export interface ProjectText {
  /** Root-relative, posix. */
  file: string;
  text: string;
}

const parse = (file: string, text: string) => ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
const trimSlashes = (p: string) => p.replace(/^\/+|\/+$/g, '');
const literalText = (node: ts.Node | undefined) => (node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) ? node.text : undefined);

export function readNestAuthentication(files: Iterable<ProjectText>, options: { aliases?: readonly PathAlias[] } = {}): NestAuthentication {
  let global = false;
  const middleware: MiddlewareBinding[] = [];
  const texts = new Map<string, string>();
  for (const { file, text } of files) {
    texts.set(file, text);
    if (/\bAPP_GUARD\b|\.useGlobalGuards\s*\(/.test(text)) global = true;
    if (text.includes('forRoutes')) middleware.push(...middlewareBindings(parse(file, text)));
  }
  const sources = new Map<string, ts.SourceFile | undefined>();
  const sourceOf = (file: string) => {
    if (!sources.has(file)) {
      const text = texts.get(file);
      sources.set(file, text === undefined ? undefined : parse(file, text));
    }
    return sources.get(file);
  };
  const resolver = { known: new Set(texts.keys()), aliases: options.aliases ?? [] };

  /**
   * How `name`, as `file` sees it, is declared (there, or through imports and barrels): 'public' as a public marker,
   * 'other' as something else of the project's own, undefined when no declaration is found.
   */
  const declaredPublic = (sf: ts.SourceFile, file: string, name: string, depth: number): 'public' | 'other' | undefined => {
    if (depth > 3) return undefined;
    const marks = (node: ts.Node | undefined) => (node !== undefined && marksPublic(node, sf) ? 'public' : 'other');
    for (const statement of sf.statements) {
      if (ts.isVariableStatement(statement)) {
        const declaration = statement.declarationList.declarations.find((d) => ts.isIdentifier(d.name) && d.name.text === name);
        if (declaration) return marks(declaration.initializer);
      }
      if (ts.isFunctionDeclaration(statement) && statement.name?.text === name) return marks(statement);
    }
    let found: 'other' | undefined;
    for (const statement of sf.statements) {
      if (!ts.isImportDeclaration(statement) && !ts.isExportDeclaration(statement)) continue;
      const specifier = literalText(statement.moduleSpecifier);
      const imported = specifier === undefined ? undefined : importedName(statement, name, depth > 0);
      if (specifier === undefined || imported === undefined) continue;
      const target = resolveSpecifier(file, specifier, resolver);
      const source = target ? sourceOf(target) : undefined;
      const state = source && target ? declaredPublic(source, target, imported, depth + 1) : undefined;
      if (state === 'public') return state;
      found ??= state;
    }
    return found;
  };

  return {
    global,
    middleware,
    optsOut(decorator) {
      const expression = decorator.getExpression();
      const callee = Node.isCallExpression(expression) ? expression.getExpression() : expression;
      if (!Node.isIdentifier(callee)) return false;
      const sf = decorator.getSourceFile();
      const declared = declaredPublic(sf.compilerNode, trimSlashes(sf.getFilePath()), callee.getText(), 0);
      // A project decorator named for what it does (`@IsPublic()`, built on its own `Auth([AuthTypes.None])`) opts out too.
      return declared === 'public' || (declared === 'other' && PUBLIC_NAME.test(callee.getText()));
    },
  };
}

/**
 * A decorator factory whose result is `SetMetadata(key, value)` with a public-like key and a value other than
 * `false`: `() => SetMetadata(IS_PUBLIC_KEY, true)`, a function returning it, `applyDecorators(SetMetadata(...), …)`,
 * or the decorator itself (`export const Public = SetMetadata('isPublic', true)`, used as `@Public`).
 */
function marksPublic(node: ts.Node, sf: ts.SourceFile): boolean {
  const results: ts.Expression[] = [];
  const body = ts.isArrowFunction(node) || ts.isFunctionExpression(node) || ts.isFunctionDeclaration(node) ? node.body : node;
  if (body && ts.isBlock(body)) {
    for (const statement of body.statements) if (ts.isReturnStatement(statement) && statement.expression) results.push(statement.expression);
  } else if (body && ts.isExpression(body)) results.push(body);
  const setsPublic = (expression: ts.Expression): boolean => {
    while (ts.isParenthesizedExpression(expression) || ts.isAsExpression(expression)) expression = expression.expression;
    if (!ts.isCallExpression(expression)) return false;
    const callee = expression.expression;
    const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : '';
    if (name === 'applyDecorators') return expression.arguments.some(setsPublic);
    if (name !== 'SetMetadata') return false;
    const [key, value] = expression.arguments;
    if (!key || value?.kind === ts.SyntaxKind.FalseKeyword) return false;
    return PUBLIC_KEY.test(metadataKeyName(key, sf));
  };
  return results.some(setsPublic);
}

/** The words a metadata key is known by: its constant's name and, for a constant of this file, its string value. */
function metadataKeyName(key: ts.Expression, sf: ts.SourceFile): string {
  const literal = literalText(key);
  if (literal !== undefined) return literal;
  if (ts.isPropertyAccessExpression(key)) return key.name.text;
  if (!ts.isIdentifier(key)) return '';
  for (const statement of sf.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    const declaration = statement.declarationList.declarations.find((d) => ts.isIdentifier(d.name) && d.name.text === key.text);
    const value = literalText(declaration?.initializer);
    if (value !== undefined) return `${key.text} ${value}`;
  }
  return key.text;
}

/** The `consumer.apply(...)[.exclude(...)].forRoutes(...)` chains of a file, each with its own excludes. */
function middlewareBindings(sf: ts.SourceFile): MiddlewareBinding[] {
  const out: MiddlewareBinding[] = [];
  // A name the file declares as a variable holds routes (`const ProtectedRoutes = [...]`), not a controller class.
  const variables = new Set<string>();
  const arrays = new Map<string, ts.ArrayLiteralExpression>();
  const declared = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name)) {
      variables.add(node.name.text);
      if (node.initializer && ts.isArrayLiteralExpression(node.initializer) && ts.isVariableDeclarationList(node.parent) && node.parent.flags & ts.NodeFlags.Const) arrays.set(node.name.text, node.initializer);
    }
    ts.forEachChild(node, declared);
  };
  declared(sf);
  // `forRoutes(...authenticatedController)` with `const authenticatedController = [UsersController, …]` in the file
  // (gitroomhq/postiz-app): the entries of the array; a spread of anything else stays unknown.
  const routeEntry = (argument: ts.Expression): RouteEntry[] => {
    if (!ts.isSpreadElement(argument)) return [readRouteEntry(argument, variables)];
    const array = ts.isIdentifier(argument.expression) ? arrays.get(argument.expression.text) : undefined;
    return array ? array.elements.flatMap((element) => (ts.isSpreadElement(element) ? [{ kind: 'unknown' as const }] : [readRouteEntry(element, variables)])) : [{ kind: 'unknown' }];
  };
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'forRoutes') {
      const exclude: RouteEntry[] = [];
      let link: ts.Expression = node.expression.expression;
      // Back along the chain to its `.apply(...)`: a later apply in the same chain starts a binding of its own.
      while (ts.isCallExpression(link) && ts.isPropertyAccessExpression(link.expression) && link.expression.name.text === 'exclude') {
        exclude.push(...link.arguments.flatMap(routeEntry));
        link = link.expression.expression;
      }
      out.push({ routes: node.arguments.flatMap(routeEntry), exclude });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** `'users/*'`, `{ path: 'users', method: RequestMethod.POST }`, `UsersController`; anything else is unknown. */
function readRouteEntry(argument: ts.Expression, variables: ReadonlySet<string>): RouteEntry {
  const path = literalText(argument);
  if (path !== undefined) return { kind: 'path', path, method: 'ALL' };
  if (ts.isObjectLiteralExpression(argument)) {
    const property = (name: string) => argument.properties.find((p): p is ts.PropertyAssignment => ts.isPropertyAssignment(p) && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)) && p.name.text === name)?.initializer;
    const routePath = literalText(property('path'));
    if (routePath === undefined) return { kind: 'unknown' };
    const method = property('method');
    if (method === undefined) return { kind: 'path', path: routePath, method: 'ALL' };
    return { kind: 'path', path: routePath, method: ts.isPropertyAccessExpression(method) ? method.name.text.toUpperCase() : undefined };
  }
  // A class by its PascalCase name; `ROUTES`, `protectedRoutes` and spreads hold routes this does not read.
  if (ts.isIdentifier(argument) && !variables.has(argument.text) && /^[A-Z][A-Za-z0-9_$]*[a-z][A-Za-z0-9_$]*$/.test(argument.text)) return { kind: 'controller', name: argument.text };
  return { kind: 'unknown' };
}

/**
 * A Nest route path pattern as a regular expression over a route path without its outer slashes. Nest 11 (path-to-regexp
 * 8): `:id`, `*splat` (one segment or more), `{…}` optional; Nest 10 and older: `*` and `(.*)` match anything,
 * `?` and `+` after a character make it optional or repeated (read so for forRoutes only).
 * `generous` (for forRoutes, where erring means no warning) also lets a trailing `/*`, `/(.*)` or `/{*splat}` take in
 * the path above it; an exclude is read strictly. Undefined when the pattern does not compile.
 */
function pathPattern(pattern: string, generous: boolean): RegExp | undefined {
  // `users/{*splat}`: generously, the slash before an optional part belongs to it.
  const p = generous ? trimSlashes(pattern).replace(/\/\{/g, '{/') : trimSlashes(pattern);
  let source = '';
  for (let i = 0; i < p.length; ) {
    const rest = p.slice(i);
    let m: RegExpExecArray | null;
    if (generous && /^\/(\*|\(\.\*\))$/.test(rest)) {
      source += '(?:/.*)?';
      break;
    }
    if ((m = /^\*[A-Za-z_$][\w$]*/.exec(rest))) source += '.+';
    else if ((m = /^:[A-Za-z_$][\w$]*(\([^)]*\))?(\?)?/.exec(rest))) source += m[2] ? '[^/]*' : '[^/]+';
    else if ((m = /^\([^)]*\)/.exec(rest))) source += '.*';
    else if ((m = /^\*/.exec(rest))) source += '.*';
    else if ((m = /^\{/.exec(rest))) source += '(?:';
    else if ((m = /^\}/.exec(rest))) source += ')?';
    else {
      m = /^./s.exec(rest)!;
      // Nest 10's `ab?cd` and `ab+cd` (the character before optional, or repeated), where they can only widen coverage.
      source += generous && /^[?+]$/.test(m[0]) && /[\w-]$/.test(source) ? m[0] : m[0].replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    }
    i += m[0].length;
  }
  try {
    return new RegExp(`^${source}$`);
  } catch {
    return undefined;
  }
}

/** A route as the patterns see it: parameters stand for a value only a parameter or wildcard of a pattern takes. */
const routeText = (declared: string) =>
  trimSlashes(declared)
    .split('/')
    .map((segment) => (/^[:*]/.test(segment) ? '\u0000' : segment))
    .join('/');

/** Whether a forRoutes entry takes the route in: anything this cannot read does (the safe side for the warning). */
function entryCovers(entry: RouteEntry, controller: string | undefined, declaredPath: string | undefined, method: string): boolean {
  if (entry.kind === 'unknown') return true;
  if (entry.kind === 'controller') return entry.name === controller;
  if (entry.method !== undefined && entry.method !== 'ALL' && entry.method !== method) return false;
  if (declaredPath === undefined) return true;
  return pathPattern(entry.path, true)?.test(routeText(declaredPath)) ?? true;
}

/** Whether an exclude entry takes the route out: only when it surely does (an `@All()` route is out only for ALL). */
function entryExcludes(entry: RouteEntry, declaredPath: string | undefined, method: string): boolean {
  if (entry.kind !== 'path' || declaredPath === undefined) return false;
  if (entry.method !== 'ALL' && entry.method !== method) return false;
  return pathPattern(entry.path, false)?.test(routeText(declaredPath)) ?? false;
}

/** The route's method from its verb decorator (`@Post()` → POST, `@All()` → ALL). */
const verbOf = (method: MethodDeclaration) => method.getDecorators().find((d) => HTTP_VERBS.has(d.getName()))?.getName().toUpperCase();

/**
 * Why nothing authenticates this controller method, as far as the code shows, or undefined when something may: a
 * guard or auth decorator on it or its class, a parameter reading the caller (`@User()`, `req.user`), a global guard
 * the route does not opt out of (`@Public()`), or middleware whose `forRoutes` takes in its controller, or its path
 * and method, and whose `exclude` does not take it out. Anything unclear counts as authenticated, so the warning it
 * feeds is only given when it is true. `optOut` is the decorator that opts the route out of a global guard, `on` where.
 */
export function nestUnauthenticatedRoute(method: MethodDeclaration, declaredPath: string | undefined, project: NestAuthentication, httpMethod?: string): { optOut?: string; on?: 'route' | 'controller' } | undefined {
  // Controller routes only: a GraphQL resolver's caller comes from its own context, which this does not read.
  const verb = httpMethod?.toUpperCase() ?? verbOf(method);
  if (!verb || !method.getDecorators().some((d) => HTTP_VERBS.has(d.getName()))) return undefined;
  const cls = method.getParent();
  const decorators = [...method.getDecorators(), ...(Node.isClassDeclaration(cls) ? cls.getDecorators() : [])];
  const optOut = decorators.find((d) => project.optsOut(d));
  if (project.global && !optOut) return undefined;
  // Swagger's @ApiBearerAuth() documents a scheme and @SkipAuth() opts out: neither authenticates.
  if (decorators.some((d) => AUTH_DECORATOR.test(d.getName()) && !/^Api[A-Z]/.test(d.getName()) && !project.optsOut(d))) return undefined;
  for (const parameter of method.getParameters()) {
    for (const decorator of parameter.getDecorators()) {
      const name = decorator.getName();
      if (!REQUEST_PARTS.has(name)) return undefined;
      if ((name === 'Req' || name === 'Request') && new RegExp(`\\b${parameter.getName()}\\s*\\.\\s*user\\b`).test(method.getBodyText() ?? '')) return undefined;
    }
  }
  const controller = Node.isClassDeclaration(cls) ? cls.getName() : undefined;
  const covered = project.middleware.some((binding) => binding.routes.some((entry) => entryCovers(entry, controller, declaredPath, verb)) && !binding.exclude.some((entry) => entryExcludes(entry, declaredPath, verb)));
  if (covered) return undefined;
  if (!project.global || !optOut) return {};
  // As the code spells it (`@Public()`, or `@Public` for a SetMetadata result used as is), and where it sits.
  return { optOut: `@${optOut.getName()}${optOut.isDecoratorFactory() ? '()' : ''}`, on: method.getDecorators().includes(optOut) ? 'route' : 'controller' };
}

/** Whether nothing authenticates this controller method (see nestUnauthenticatedRoute). */
export function nestMethodUnauthenticated(method: MethodDeclaration, declaredPath: string | undefined, project: NestAuthentication, httpMethod?: string): boolean {
  return nestUnauthenticatedRoute(method, declaredPath, project, httpMethod) !== undefined;
}
