import { instancePool } from '../renderInstance.js';

/**
 * `<scaffold>/instance.ts` for a Next.js app: the one createIdempotency() the wrapped route handlers, Pages API
 * routes and Server Actions import. Next has no request-scoped user apply could read (each app reads its session
 * its own way: auth(), getServerSession(), a cookie), so scoped actions get a principal that answers "nobody"
 * until the user fills it in: refused (401 / PrincipalMissingError), never stored under a wrong owner. planApply
 * lists that as a manual step whenever an action is scoped.
 */
export function renderNextInstance(scoped: boolean, storeId?: string): string {
  const principal = scoped
    ? `  // Keys are scoped to the caller: return the signed-in user / account / tenant id, read from your session the way
  // your app does (e.g. \`async () => (await auth())?.user?.id\`). Until then scoped actions are refused, never stored.
  principal: async () => undefined,`
    : `  // Every protected action is global (keys are not per user); a scoped action would read the session here.
  principal: () => undefined,`;
  return `import { createIdempotency, createPool, POLICY } from './index.js';

// Written once by \`idempotency-builder apply\`; yours to edit. The wrapped route handlers, Pages API routes and
// Server Actions import \`idempotency\` from here (server-side only: it holds the store's connection).
${instancePool(storeId)}

export const idempotency = createIdempotency({
  pool,
${principal}
});
`;
}
