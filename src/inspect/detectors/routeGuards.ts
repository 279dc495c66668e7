import { ts } from 'ts-morph';
import { isFunctionLike, objectProperty, stringValue, unwrap } from '../parse/astHelpers.js';
import type { FileContext, GuardRef } from './detectorTypes.js';

/**
 * What authenticates a route, read per middleware by what it is: its package (passport, express-jwt, koa-jwt,
 * hono/jwt, …), the body of a function written in the project (it reads the Authorization header, verifies a token,
 * sets the request's user, answers 401), and only then its name (auth, requireAuth, protect, verifyToken, …).
 * This file reads one source file; a middleware defined elsewhere is decided once files are linked
 * (resolve/routeAuthentication.ts).
 */

/** Packages whose middleware authenticates (any export of them used as route middleware). */
const AUTH_MODULES = /^(passport|express-jwt|koa-jwt|koa-passport|express-openid-connect|express-oauth2-jwt-bearer|connect-ensure-login|keycloak-connect|@fastify\/jwt|@fastify\/auth|@fastify\/passport|@fastify\/basic-auth|@fastify\/bearer-auth|express-basic-auth|hono\/(jwt|jwk|bearer-auth|basic-auth)|@hono\/(clerk-auth|auth-js|firebase-auth|oidc-auth)|@clerk\/.+|@auth\/.+|@auth0\/.+|@supabase\/.+|better-auth.*|lucia|supertokens-node.*|@kinde-oss\/.+)$/;

/** Packages whose middleware does something else (parsing, CORS, logging, validation, rate limits, uploads). */
const OTHER_MODULES = /^(express|body-parser|cors|@fastify\/cors|helmet|@fastify\/helmet|morgan|compression|multer|express-validator|celebrate|express-rate-limit|rate-limiter-flexible|@fastify\/rate-limit|koa-body|koa-bodyparser|@koa\/bodyparser|@koa\/cors|koa-helmet|koa-logger|@hono\/[\w-]+-validator|hono\/(cors|logger|validator|body-limit|etag|compress|secure-headers|pretty-json|timing|request-id|context-storage|csrf|cache|method-override|trailing-slash|ip-restriction|language|timeout)|zod|joi|yup|cookie-parser|express-fileupload|hpp|xss-clean|express-mongo-sanitize|csurf|express-session|cookie-session|koa-session|@fastify\/session|@fastify\/cookie|connect-timeout|serve-static|@fastify\/multipart|@fastify\/formbody)$/;

/** What a function's own code does when it authenticates a request. */
export const AUTHENTICATES =
  /\.headers\s*\.\s*authorization\b|\.headers\s*\[\s*['"`]authorization['"`]\s*\]|\b(get|header)\s*\(\s*['"`]authorization['"`]|\b(jwt|jsonwebtoken|jose|JWT)\s*\.\s*verify\s*\(|\bjwtVerify\s*\(|\bverify(Id)?Token\s*\(|\b(req|request)\s*\.\s*(user|auth|userId)\s*=[^=]|\bctx\s*\.\s*state\s*\.\s*(user|auth)\s*=[^=]|\bc\s*\.\s*set\s*\(\s*['"`](user|jwtPayload|session|auth)['"`]|\bpassport\s*\.\s*authenticate\s*\(|\.isAuthenticated\s*\(\s*\)|\b(req|request|ctx)\s*\.\s*session\s*\.\s*user(Id)?\b|\bstatus\s*\(\s*401\s*\)|\bcode\s*\(\s*401\s*\)|\bstatus\s*=\s*401\b|\bthrow\s*\(\s*401\b|\bHTTPException\s*\(\s*401\b|['"`]Unauthorized['"`]|\bUnauthorizedError\b|\bawait\s+auth\s*\(\s*\)|\bgetServerSession\s*\(|\bawait\s+currentUser\s*\(\s*\)|\.auth\s*\.\s*getUser\s*\(/;

/** The fallback: a middleware named after authentication (never `author`, `authorName`). */
export function namedLikeAuth(name: string): boolean {
  if (/^author/i.test(name) && !/^authori[sz]/i.test(name)) return false;
  return /auth/i.test(name) || /^(protect|ensure(Logged|Signed)In|is(Logged|Signed)In|loggedIn|require(Login|User|Signin|Session)|verify(Token|Jwt|Session)|check(Jwt|Token|Session)|jwt|jwtCheck|bearer|mustBeLoggedIn)/i.test(name);
}

/** One middleware expression as a GuardRef: decided here when its package or inline body says, else left to linking. */
export function guardOf(expr: ts.Expression, ctx: FileContext, depth = 0): GuardRef[] {
  const node = unwrap(expr);
  const text = node.getText(ctx.sf).replace(/\s+/g, ' ').slice(0, 80);
  if (ts.isArrayLiteralExpression(node)) return node.elements.flatMap((e) => (ts.isSpreadElement(e) ? [{ text: e.getText(ctx.sf).slice(0, 80) }] : guardOf(e, ctx, depth)));
  if (isFunctionLike(node)) return [{ text, verdict: AUTHENTICATES.test(node.getText(ctx.sf)) ? 'auth' : 'other' }];
  if (ts.isCallExpression(node)) {
    const callee = unwrap(node.expression);
    // `jwt({ secret }).unless({ path })`, `auth.required()`: the receiver is the middleware.
    if (ts.isPropertyAccessExpression(callee) && /^(unless|authenticate|protect|required|optional)$/.test(callee.name.text)) {
      if (callee.name.text === 'authenticate' || callee.name.text === 'protect' || callee.name.text === 'required') return [{ text, verdict: 'auth' }];
      if (callee.name.text === 'optional') return [{ text, verdict: 'other' }];
      return guardOf(callee.expression, ctx, depth).map((g) => ({ ...g, text }));
    }
    const fromModule = moduleVerdict(callee, ctx);
    if (fromModule) return [{ text, verdict: fromModule }];
    if (ts.isIdentifier(callee)) return [{ text, name: callee.text, key: callee.text.toLowerCase() }];
    if (ts.isPropertyAccessExpression(callee)) return [{ text, name: callee.name.text, key: callee.getText(ctx.sf).toLowerCase() }];
    return [{ text }];
  }
  const fromModule = moduleVerdict(node, ctx);
  if (fromModule) return [{ text, verdict: fromModule }];
  if (ts.isIdentifier(node)) {
    // `const requireUser = passport.authenticate('jwt')`, `const validate = (schema) => …`: what the binding holds.
    const init = ctx.index.imports.has(node.text) ? undefined : ctx.index.consts.get(node.text);
    if (init && depth < 3 && !ts.isNewExpression(unwrap(init))) {
      const held = guardOf(init, ctx, depth + 1).map((g) => ({ ...g, text, name: g.name ?? node.text }));
      if (held.length === 1 && held[0]!.verdict !== undefined) return held;
      // `const limit = createRateLimitMiddleware(opts)`: the factory's body (through the function graph) decides.
      if (held.length === 1 && held[0]!.key !== undefined && ts.isCallExpression(unwrap(init))) return [{ ...held[0]!, ref: node.text }];
    }
    return [{ text, name: node.text, key: node.text.toLowerCase(), ref: node.text }];
  }
  // `fastify.authenticate`, `auth.jwt`, `authMiddleware.verify`: the member (or its holder) names it.
  if (ts.isPropertyAccessExpression(node)) {
    const holder = unwrap(node.expression);
    // The middleware apply mounts (`idempotency.createOrder`), on a route read again after apply: it authenticates nothing.
    if (ts.isIdentifier(holder) && holder.text === 'idempotency') return [{ text, verdict: 'other' }];
    const name = !namedLikeAuth(node.name.text) && ts.isIdentifier(holder) && namedLikeAuth(holder.text) ? holder.text : node.name.text;
    return [{ text, name, key: node.getText(ctx.sf).toLowerCase() }];
  }
  return [{ text }];
}

/** 'auth' / 'other' when the expression (or what it calls) comes from a package known either way. */
function moduleVerdict(expr: ts.Expression, ctx: FileContext): GuardRef['verdict'] | undefined {
  let root: ts.Expression = expr;
  while (ts.isPropertyAccessExpression(root) || ts.isCallExpression(root)) root = unwrap(root.expression);
  if (!ts.isIdentifier(root)) return undefined;
  const origin = ctx.originOf(root);
  if (!origin) return undefined;
  // passport.initialize() / passport.session() only restore a session; passport.authenticate(…) authenticates.
  if (origin.module === 'passport' || origin.module === 'koa-passport') return /\b(initialize|session)\b/.test(expr.getText(ctx.sf)) && !/\bauthenticate\b/.test(expr.getText(ctx.sf)) ? 'other' : 'auth';
  if (AUTH_MODULES.test(origin.module)) return 'auth';
  if (OTHER_MODULES.test(origin.module)) return 'other';
  return undefined;
}

/** Fastify route options that run before the handler. */
const FASTIFY_HOOKS = ['onRequest', 'preParsing', 'preValidation', 'preHandler'];

/** The middleware a route's own arguments put before its handler (the handler is the last one). */
export function routeArgumentGuards(args: readonly ts.Expression[], ctx: FileContext): GuardRef[] {
  const out: GuardRef[] = [];
  for (const [index, arg] of args.entries()) {
    const node = unwrap(arg);
    if (ts.isObjectLiteralExpression(node)) {
      for (const hook of FASTIFY_HOOKS) {
        const value = objectProperty(node, hook);
        if (value) out.push(...guardOf(value, ctx));
      }
      continue;
    }
    if (index < args.length - 1) out.push(...guardOf(arg, ctx));
  }
  return out;
}

/** `router.use(…)`, `app.addHook('onRequest', …)` on `receiver` before `pos` in this file whose path covers `path`. */
export function priorUses(receiver: string, pos: number, path: string | undefined, ctx: FileContext, isRouter: (expr: ts.Expression) => boolean): GuardRef[] {
  const out: GuardRef[] = [];
  for (const call of ctx.index.calls) {
    if (!ts.isPropertyAccessExpression(call.expression)) continue;
    const callee = call.expression;
    const base = unwrap(callee.expression);
    if (!ts.isIdentifier(base) || base.text !== receiver) continue;
    const name = callee.name.text;
    // A Fastify hook covers every route of its encapsulation context, those declared before it too.
    if (name === 'addHook') {
      const hook = stringValue(call.arguments[0], ctx.index.consts);
      if (hook && FASTIFY_HOOKS.includes(hook) && call.arguments[1]) out.push(...guardOf(call.arguments[1], ctx));
      continue;
    }
    if (name !== 'use' || call.arguments.length === 0 || call.pos >= pos) continue;
    const first = stringValue(call.arguments[0], ctx.index.consts);
    const hasPath = first !== undefined && (first.startsWith('/') || first === '*');
    // Where the route's (or mount's) own path is unknown, a use() scoped to some path may or may not cover it.
    if (hasPath && path === undefined && !covers(first, '')) {
      out.push({ text: call.getText(ctx.sf).replace(/\s+/g, ' ').slice(0, 80) });
      continue;
    }
    if (hasPath && !covers(first, path)) continue;
    for (const arg of hasPath ? call.arguments.slice(1) : call.arguments) if (!isRouter(arg)) out.push(...guardOf(arg, ctx));
  }
  return out;
}

/** Whether a use() path (`/admin`, `/api/*`, `*`) covers a route or mount path; an unknown path is not covered. */
function covers(usePath: string, path: string | undefined): boolean {
  const prefix = usePath.replace(/\/?\*+$/, '').replace(/\/$/, '');
  if (prefix === '') return true;
  if (path === undefined) return false;
  return path === prefix || path.startsWith(`${prefix}/`);
}
