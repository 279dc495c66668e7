import type { Manifest } from './readManifest.js';

/**
 * Packages that authenticate callers (or verify their tokens and sessions): any one of them declared means requests
 * can carry a principal to scope idempotency keys to. Prefix entries end in '/'.
 */
const AUTH_PACKAGES = [
  'passport', 'jsonwebtoken', 'jose', 'express-jwt', 'express-session', 'cookie-session', 'express-openid-connect',
  '@fastify/jwt', 'fastify-jwt', '@fastify/session', '@fastify/secure-session', '@fastify/passport', '@fastify/auth',
  '@nestjs/passport', '@nestjs/jwt', 'koa-jwt', 'koa-passport', 'koa-session', '@hono/clerk-auth', '@hono/auth-js',
  'next-auth', 'lucia', 'better-auth', 'iron-session', 'supertokens-node', 'keycloak-connect', 'graphql-shield',
  'firebase-admin', '@supabase/ssr', 'express-oauth2-jwt-bearer', 'jwks-rsa', 'oidc-provider', 'openid-client',
  '@clerk/', '@auth/', '@auth0/', '@supabase/auth-helpers-', '@kinde-oss/', '@workos-inc/', '@okta/', '@lucia-auth/', 'passport-',
  '@shopify/shopify-app-',
];

/** The project's declared authentication packages (the package's manifest and the repository root's). */
export function authenticationPackages(manifests: ReadonlyArray<Manifest | undefined>): string[] {
  const found = new Set<string>();
  for (const manifest of manifests) {
    for (const dep of manifest?.dependencies ?? []) {
      if (AUTH_PACKAGES.some((name) => (name.endsWith('/') || name.endsWith('-') ? dep.startsWith(name) : dep === name))) found.add(dep);
    }
  }
  return [...found].sort();
}

/**
 * Authentication written in the code itself: something sets the request's user, a Nest guard, routing-controllers'
 * authorizationChecker / currentUserChecker, Hono's own JWT and auth middleware, a Next.js session read, a tRPC
 * middleware that answers UNAUTHORIZED.
 */
const AUTH_CODE: ReadonlyArray<[RegExp, string]> = [
  [/\b(req|request)\.user\s*=[^=]/, 'sets req.user'],
  [/\bctx\.state\.user\s*=[^=]/, 'sets ctx.state.user'],
  [/interface\s+(FastifyRequest|Request)\b[^}]*\buser\??\s*:/, 'declares request.user'],
  [/decorateRequest\(\s*['"]user['"]/, 'decorates request.user'],
  [/@UseGuards\s*\(|implements\s+CanActivate\b/, 'a Nest guard'],
  [/\b(authorizationChecker|currentUserChecker)\s*[:=(]/, 'a routing-controllers authorizationChecker'],
  [/from\s+['"]hono\/(jwt|basic-auth|bearer-auth)['"]/, "Hono's auth middleware"],
  [/\bgetServerSession\s*\(/, 'a NextAuth session read'],
  [/new\s+TRPCError\s*\(\s*\{\s*code\s*:\s*['"]UNAUTHORIZED['"]/, 'a tRPC procedure that refuses unauthenticated callers'],
];

/** Any of them, in one scan: most files have none, which this tells for the cost of one expression instead of nine. */
const ANY_AUTH_CODE = new RegExp(AUTH_CODE.map(([pattern]) => `(?:${pattern.source})`).join('|'));

/** What in one source file authenticates callers, as `file (what)`; undefined when nothing does. */
export function authenticationInCode(rel: string, text: string): string | undefined {
  if (!ANY_AUTH_CODE.test(text)) return undefined;
  const hit = AUTH_CODE.find(([pattern]) => pattern.test(text));
  return hit ? `${rel} (${hit[1]})` : undefined;
}
