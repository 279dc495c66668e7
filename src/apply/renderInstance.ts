/** The frameworks apply can wire, with how their principal is read in the app's instance module. */
export type WiredFramework = 'express' | 'fastify' | 'nestjs';

const PRINCIPAL: Record<WiredFramework, string> = {
  express: '(req) => (req as typeof req & AuthenticatedUser).user?.id',
  fastify: '(request) => (request as typeof request & AuthenticatedUser).user?.id',
  nestjs: '(request) => request.user?.id',
};

/**
 * `<scaffold>/instance.ts`: the one createIdempotency() of the app, which the routes apply wired import. Written once
 * (then it is the user's): the pool's URL and the principal are decisions the user reviews in the diff. Its text
 * holds no value from the config or the code, so a fixed template is safe here.
 */
export function renderInstance(framework: WiredFramework): string {
  const userType = framework === 'nestjs' ? '' : `\n/** What your authentication attaches to the request; adjust to your auth middleware. */\ntype AuthenticatedUser = { user?: { id?: string | number } };\n`;
  return `import { createIdempotency, createPool, POLICY } from './index.js';

// Written once by \`idempotency-builder apply\`; yours to edit. Routes that apply wired import \`idempotency\` from here.
// With DATABASE_URL unset, pg falls back to its PGHOST/PGUSER/PGDATABASE environment variables.
const pool = createPool(process.env['DATABASE_URL'] ?? '', POLICY);
${userType}
export const idempotency = createIdempotency({
  pool,
  // Keys are scoped to the caller: return the authenticated user / account / tenant id (undefined answers 401).
  principal: ${PRINCIPAL[framework]},
});
`;
}
