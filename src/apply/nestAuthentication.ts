import { Node, type MethodDeclaration } from 'ts-morph';

/** Parameter decorators that read a part of the request, not the caller: anything else (`@User()`, `@CurrentUser()`) does. */
const REQUEST_PARTS = new Set(['Body', 'Param', 'Query', 'Headers', 'Ip', 'HostParam', 'Session', 'Req', 'Request', 'Res', 'Response', 'Next', 'UploadedFile', 'UploadedFiles', 'Args', 'Context', 'Info', 'Parent', 'Root']);

const HTTP_VERBS = new Set(['Post', 'Put', 'Patch', 'Delete', 'All']);

/** `@UseGuards(JwtAuthGuard)`, `@Auth()`, `@Roles('admin')`, a project's `@Authenticated()`. */
const AUTH_DECORATOR = /Guard|Auth|Roles?$|Permission|Scopes?$|Jwt|Session/i;

/** What the project says about authentication as a whole, read once per apply from its files' text. */
export interface NestAuthentication {
  /** A global guard (`APP_GUARD`, `app.useGlobalGuards(...)`): every route may be authenticated; no warning. */
  global: boolean;
  /** The argument texts of every `consumer.apply(...).forRoutes(...)` call: the routes middleware covers. */
  middlewareRoutes: string[];
}

export function readNestAuthentication(texts: Iterable<string>): NestAuthentication {
  let global = false;
  const middlewareRoutes: string[] = [];
  for (const text of texts) {
    if (/\bAPP_GUARD\b|\.useGlobalGuards\s*\(/.test(text)) global = true;
    for (const m of text.matchAll(/\.forRoutes\s*\(([^;]*?)\)\s*;/gs)) middlewareRoutes.push(m[1]!);
  }
  return { global, middlewareRoutes };
}

const trimSlashes = (p: string) => p.replace(/^\/+|\/+$/g, '');

/** A forRoutes argument text covers the route: its controller class, or a path equal to it or a wildcard above it. */
function coveredByMiddleware(args: string, controller: string | undefined, declaredPath: string | undefined): boolean {
  if (controller && new RegExp(`\\b${controller}\\b`).test(args)) return true;
  if (declaredPath === undefined) return true;
  const wanted = trimSlashes(declaredPath);
  for (const m of args.matchAll(/['"`]([^'"`]*)['"`]/g)) {
    const path = trimSlashes(m[1]!);
    if (path === '*' || path === '(.*)' || path === wanted) return true;
    const wildcard = /^(.*?)\/?(\*|\(\.\*\))$/.exec(path);
    if (wildcard && (wanted === wildcard[1] || wanted.startsWith(`${wildcard[1]}/`))) return true;
  }
  return false;
}

/**
 * Whether nothing authenticates this controller method, as far as the code shows: no guard or auth decorator on it or
 * its class, no parameter reading the caller (`@User()`, `req.user`), no global guard and no middleware whose
 * `forRoutes` names its controller or path. Anything unclear counts as authenticated, so the warning it feeds is
 * only given when it is true.
 */
export function nestMethodUnauthenticated(method: MethodDeclaration, declaredPath: string | undefined, project: NestAuthentication): boolean {
  // Controller routes only: a GraphQL resolver's caller comes from its own context, which this does not read.
  if (project.global || !method.getDecorators().some((d) => HTTP_VERBS.has(d.getName()))) return false;
  const cls = method.getParent();
  const classDecorators = Node.isClassDeclaration(cls) ? cls.getDecorators() : [];
  // Swagger's @ApiBearerAuth() documents a scheme; it authenticates nothing.
  if ([...method.getDecorators(), ...classDecorators].some((d) => AUTH_DECORATOR.test(d.getName()) && !/^Api[A-Z]/.test(d.getName()))) return false;
  for (const parameter of method.getParameters()) {
    for (const decorator of parameter.getDecorators()) {
      const name = decorator.getName();
      if (!REQUEST_PARTS.has(name)) return false;
      if ((name === 'Req' || name === 'Request') && new RegExp(`\\b${parameter.getName()}\\s*\\.\\s*user\\b`).test(method.getBodyText() ?? '')) return false;
    }
  }
  const controller = Node.isClassDeclaration(cls) ? cls.getName() : undefined;
  return !project.middlewareRoutes.some((args) => coveredByMiddleware(args, controller, declaredPath));
}
