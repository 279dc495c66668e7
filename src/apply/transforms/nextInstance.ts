import { posix } from 'node:path';
import { quote } from '../../scaffold/tsLiteral.js';
import type { StoreConnection } from '../../inspect/types.js';
import { instanceImport, instancePool, instanceStore } from '../renderInstance.js';

/** How the app reads its signed-in user, when apply recognised it: the instance's principal reads the same. */
export interface NextPrincipal {
  /** Which auth library, for the edit summary. */
  label: string;
  /** Import lines the principal needs (specifiers printed as string literals). */
  imports: string[];
  principal: string;
}

/**
 * The app's auth, from its own files: Clerk (`auth()` from @clerk/nextjs/server), Auth.js / next-auth v5 (a module
 * exporting `auth` from `NextAuth(...)`), next-auth v4 (`getServerSession(authOptions)` with an exported
 * authOptions). Undefined when none is recognisable (Supabase, a cookie of its own): the principal stays manual.
 */
export function nextPrincipalOf(files: ReadonlyArray<{ path: string; text: string }>, scaffoldDir: string, extension: string): NextPrincipal | undefined {
  const specifier = (file: string) => {
    const relative = posix.relative(scaffoldDir, file.replace(/\.[cm]?[jt]sx?$/, ''));
    return quote(`${relative.startsWith('.') ? '' : './'}${relative}${extension}`);
  };
  if (files.some((f) => /from\s+['"]@clerk\/nextjs\/server['"]/.test(f.text) && /\bauth\b/.test(f.text))) {
    return { label: 'Clerk', imports: ["import { auth } from '@clerk/nextjs/server';"], principal: 'async () => (await auth()).userId ?? undefined' };
  }
  const authJs = files.find((f) => /export\s+const\s*\{[^}]*\bauth\b[^}]*\}\s*=\s*NextAuth\(/.test(f.text));
  if (authJs) return { label: 'Auth.js (next-auth v5)', imports: [`import { auth } from ${specifier(authJs.path)};`], principal: 'async () => (await auth())?.user?.id ?? undefined' };
  const options = files.find((f) => /export\s+const\s+authOptions\b/.test(f.text));
  if (options && files.some((f) => /\bgetServerSession\s*\(/.test(f.text))) {
    return {
      label: 'next-auth (getServerSession)',
      imports: ["import { getServerSession } from 'next-auth';", `import { authOptions } from ${specifier(options.path)};`],
      // next-auth v4's Session type has no user id unless the app declares one: read it without assuming.
      principal: 'async () => ((await getServerSession(authOptions))?.user as { id?: string } | undefined)?.id',
    };
  }
  return undefined;
}

/**
 * `<scaffold>/instance.ts` for a Next.js app: the one createIdempotency() the wrapped route handlers, Pages API
 * routes and Server Actions import. Next has no request-scoped user: when the app's auth is recognisable
 * (nextPrincipalOf) the principal reads the signed-in user's id through it; otherwise scoped actions get a principal
 * that answers "nobody" until the user fills it in: refused (401 / PrincipalMissingError), never stored under a
 * wrong owner, and planApply lists that as a manual step.
 */
export function renderNextInstance(scoped: boolean, storeId?: string, auth?: NextPrincipal, memory = true, connection?: StoreConnection): string {
  const principal = scoped && auth
    ? `  // Keys are scoped to the caller: the signed-in user's id, read through ${auth.label} as the app does.
  principal: ${auth.principal},`
    : scoped
    ? `  // Keys are scoped to the caller: return the signed-in user / account / tenant id, read from your session the way
  // your app does (e.g. \`async () => (await auth())?.user?.id\`). Until then scoped actions are refused, never stored.
  principal: async () => undefined,`
    : `  // Every protected action is global (keys are not per user); a scoped action would read the session here.
  principal: () => undefined,`;
  const imports = scoped && auth ? auth.imports.map((line) => `${line}\n`).join('') : '';
  return `${imports}${instanceImport(memory)}

// Written once by \`idempotency-builder apply\`; yours to edit. The wrapped route handlers, Pages API routes and
// Server Actions import \`idempotency\` from here (server-side only: it holds the store's connection).
${instancePool(storeId, memory, connection)}

export const idempotency = createIdempotency({
  pool,
${instanceStore(memory)}${principal}
});
`;
}
