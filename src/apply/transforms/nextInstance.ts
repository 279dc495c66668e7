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
 * exporting `auth` from `NextAuth(...)`, also beside `handlers: { GET, POST }`), next-auth v4 (`getServerSession(authOptions)` with an exported
 * authOptions), Supabase (the app's server client factory: a module calling `createServerClient` from @supabase/ssr
 * with next/headers cookies, exporting one function). Undefined when none is recognisable (a cookie of its own): the
 * principal stays manual.
 */
export function nextPrincipalOf(files: ReadonlyArray<{ path: string; text: string }>, scaffoldDir: string, extension: string, pages = false): NextPrincipal | undefined {
  const specifier = (file: string) => {
    const relative = posix.relative(scaffoldDir, file.replace(/\.[cm]?[jt]sx?$/, ''));
    return quote(`${relative.startsWith('.') ? '' : './'}${relative}${extension}`);
  };
  if (files.some((f) => /from\s+['"]@clerk\/nextjs\/server['"]/.test(f.text) && /\bauth\b/.test(f.text))) {
    return { label: 'Clerk', imports: ["import { auth } from '@clerk/nextjs/server';"], principal: 'async () => (await auth()).userId ?? undefined' };
  }
  const authJs = files.find((f) => /export\s+const\s*\{(?:[^{}]|\{[^{}]*\})*\bauth\b(?:[^{}]|\{[^{}]*\})*\}\s*=\s*NextAuth\(/.test(f.text));
  if (authJs) return { label: 'Auth.js (next-auth v5)', imports: [`import { auth } from ${specifier(authJs.path)};`], principal: 'async () => (await auth())?.user?.id ?? undefined' };
  const options = files.find((f) => /export\s+const\s+authOptions\b/.test(f.text));
  if (options && files.some((f) => /\bgetServerSession\s*\(/.test(f.text))) {
    return {
      label: 'next-auth (getServerSession)',
      imports: ["import { getServerSession } from 'next-auth';", `import { authOptions } from ${specifier(options.path)};`],
      // next-auth v4's Session type has no user id unless the app declares one: read it without assuming. A Pages API
      // route passes its req and res: there getServerSession needs them (the one-argument form reads App Router headers).
      principal: pages
        ? 'async (request, _scope, response) =>\n    ((response ? await getServerSession(request as never, response as never, authOptions) : await getServerSession(authOptions))?.user as { id?: string } | undefined)?.id'
        : 'async () => ((await getServerSession(authOptions))?.user as { id?: string } | undefined)?.id',
    };
  }
  const pagesReader = pages ? pagesSessionReader(files) : undefined;
  if (pagesReader) {
    return {
      label: `the app's own session (${pagesReader.name}(req, res) in ${pagesReader.path})`,
      imports: [`import { ${pagesReader.name} } from ${specifier(pagesReader.path)};`],
      // Only a Pages API route has the req and res it reads the session from; elsewhere there is no caller to read.
      principal: `async (request, _scope, response) =>\n    response ? ((await ${pagesReader.name}(request as never, response as never))?.user as { id?: string } | undefined)?.id : undefined`,
    };
  }
  const own = ownUserReader(files);
  if (own) {
    return {
      label: `the app's own session (${own.name}() in ${own.path})`,
      imports: [`import { ${own.name} } from ${specifier(own.path)};`],
      // The signed-in user's record, as the app's own actions read it; its id owns the keys.
      principal: `async () => (await ${own.name}())?.id ?? undefined`,
    };
  }
  const supabase = supabaseServerClient(files);
  if (supabase) {
    // getUser() asks Supabase Auth to verify the session (getSession() would trust the cookie as sent).
    const client = supabase.async ? `(await ${supabase.name}())` : `${supabase.name}()`;
    return {
      label: 'Supabase Auth (getUser)',
      imports: [`import { ${supabase.name} } from ${specifier(supabase.path)};`],
      principal: `async () => (await ${client}.auth.getUser()).data.user?.id ?? undefined`,
    };
  }
  return undefined;
}

/**
 * An app that keeps its own session (nextjs/saas-starter): the one module exporting an async, parameterless
 * `getUser()` / `getCurrentUser()` / `currentUser()` that reads the request's cookies (next/headers) and verifies the
 * session token in them. It returns the signed-in user's record or nothing; the principal is that record's id. Several
 * such modules, or none: undefined, the principal stays manual.
 */
function ownUserReader(files: ReadonlyArray<{ path: string; text: string }>): { path: string; name: string } | undefined {
  const found = files.flatMap((f) => {
    if (!/from\s+['"]next\/headers['"]/.test(f.text) || !/\bcookies\s*\(\s*\)/.test(f.text)) return [];
    if (!/\bverify(?:Id)?Token\s*\(|\bjwtVerify\s*\(|\b(?:jwt|jsonwebtoken)\s*\.\s*verify\s*\(|\bunseal\w*\s*\(|\bgetIronSession\s*\(/.test(f.text)) return [];
    const names = [...f.text.matchAll(/export\s+async\s+function\s+(getUser|getCurrentUser|currentUser)\s*\(\s*\)/g)].map((m) => m[1]!);
    return names.length === 1 ? [{ path: f.path, name: names[0]! }] : [];
  });
  return found.length === 1 ? found[0] : undefined;
}

/**
 * A Pages Router app's own session reader (boxyhq/saas-starter-kit's lib/session.ts): the one exported function taking
 * the route's req and res that hands them to next-auth's getServerSession. Several or none: undefined.
 */
function pagesSessionReader(files: ReadonlyArray<{ path: string; text: string }>): { path: string; name: string } | undefined {
  const found = files.flatMap((f) => {
    if (!/\bgetServerSession\s*\(\s*req\s*,\s*res\b/.test(f.text)) return [];
    // Its first parameter is req, and its own text (up to the next export) makes the call.
    const names = [...f.text.matchAll(/export\s+(?:const\s+(\w+)\s*=\s*async\s*\(|async\s+function\s+(\w+)\s*\()\s*req\b/g)]
      .filter((m) => {
        const next = f.text.indexOf('export', m.index + 'export'.length);
        return /\bgetServerSession\s*\(\s*req\s*,\s*res\b/.test(f.text.slice(m.index, next < 0 ? undefined : next));
      })
      .map((m) => (m[1] ?? m[2])!);
    return names.length === 1 ? [{ path: f.path, name: names[0]! }] : [];
  });
  return found.length === 1 ? found[0] : undefined;
}

/**
 * The app's server-side Supabase client factory: the one module that calls createServerClient from @supabase/ssr
 * with next/headers cookies and exports exactly one function (`export const createClient = () => …`, `export async
 * function createClient()`), and whether that function is async (the cookies() of Next 15 are). Several such
 * modules, or several exported functions: undefined, the principal stays manual.
 */
function supabaseServerClient(files: ReadonlyArray<{ path: string; text: string }>): { path: string; name: string; async: boolean } | undefined {
  const modules = files.filter((f) => /from\s+['"]@supabase\/ssr['"]/.test(f.text) && /\bcreateServerClient\s*[<(]/.test(f.text) && /from\s+['"]next\/headers['"]/.test(f.text));
  if (modules.length !== 1) return undefined;
  const [file] = modules as [{ path: string; text: string }];
  const exported = [...file.text.matchAll(/export\s+(?:(async\s+)?function\s+([A-Za-z_$][\w$]*)|const\s+([A-Za-z_$][\w$]*)\s*=\s*(async\s*)?(?:\(|function\b))/g)];
  if (exported.length !== 1) return undefined;
  const m = exported[0]!;
  const fn = m[2] ?? m[3];
  return fn ? { path: file.path, name: fn, async: m[1] !== undefined || m[4] !== undefined } : undefined;
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
