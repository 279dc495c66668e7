import { describe, expect, it } from 'vitest';
import { nextPrincipalOf, renderNextInstance } from '../../src/apply/transforms/nextInstance.js';

const route = { path: 'app/api/notes/route.ts', text: "export async function POST(request: Request) {\n  return Response.json({ ok: true });\n}\n" };

describe('the Next.js principal follows the app\'s recognisable auth', () => {
  it('Clerk: auth() from @clerk/nextjs/server', () => {
    const clerk = { path: 'app/api/me/route.ts', text: "import { auth } from '@clerk/nextjs/server';\nexport async function GET() {\n  const { userId } = await auth();\n  return Response.json({ userId });\n}\n" };
    const principal = nextPrincipalOf([route, clerk], 'lib/idempotency', '')!;
    expect(principal.label).toBe('Clerk');
    const instance = renderNextInstance(true, 'postgres', principal);
    expect(instance.startsWith("import { auth } from '@clerk/nextjs/server';\nimport { createIdempotency, createMemoryStore, createPool, POLICY } from './index.js';\n")).toBe(true);
    expect(instance).toContain('  principal: async () => (await auth()).userId ?? undefined,');
    expect(instance).not.toContain('principal: async () => undefined');
  });

  it('Auth.js (next-auth v5): the module that exports auth from NextAuth(), imported relative to the scaffold', () => {
    const authJs = { path: 'auth.ts', text: "import NextAuth from 'next-auth';\nimport GitHub from 'next-auth/providers/github';\nexport const { handlers, auth, signIn, signOut } = NextAuth({ providers: [GitHub] });\n" };
    const principal = nextPrincipalOf([route, authJs], 'lib/idempotency', '')!;
    expect(principal.imports).toEqual(["import { auth } from '../../auth';"]);
    expect(renderNextInstance(true, undefined, principal)).toContain('  principal: async () => (await auth())?.user?.id ?? undefined,');
    expect(nextPrincipalOf([authJs], 'src/lib/idempotency', '.js')!.imports).toEqual(["import { auth } from '../../../auth.js';"]);
  });

  it("the app's own session: one exported getUser() that verifies the session cookie (nextjs/saas-starter)", () => {
    const queries = { path: 'lib/db/queries.ts', text: "import { cookies } from 'next/headers';\nimport { verifyToken } from '@/lib/auth/session';\nexport async function getUser() {\n  const cookie = (await cookies()).get('session');\n  if (!cookie) return null;\n  const session = await verifyToken(cookie.value);\n  return { id: session.user.id };\n}\n" };
    const principal = nextPrincipalOf([route, queries], 'lib/idempotency', '')!;
    expect(principal.label).toBe("the app's own session (getUser() in lib/db/queries.ts)");
    expect(principal.imports).toEqual(["import { getUser } from '../db/queries';"]);
    expect(renderNextInstance(true, 'postgres', principal)).toContain('  principal: async () => (await getUser())?.id ?? undefined,');
    // Two such readers: which one the actions use cannot be told, so the principal stays manual.
    expect(nextPrincipalOf([route, queries, { ...queries, path: 'lib/auth.ts' }], 'lib/idempotency', '')).toBeUndefined();
    // A getUser() that reads no cookie (a database lookup by id) is not a session reader.
    expect(nextPrincipalOf([route, { path: 'lib/users.ts', text: 'export async function getUser() {\n  return db.user.findFirst();\n}\n' }], 'lib/idempotency', '')).toBeUndefined();
  });

  it('next-auth v4: getServerSession(authOptions) with the exported options', () => {
    const options = { path: 'lib/auth.ts', text: "import type { NextAuthOptions } from 'next-auth';\nexport const authOptions: NextAuthOptions = { providers: [] };\n" };
    const page = { path: 'app/page.tsx', text: "import { getServerSession } from 'next-auth';\nimport { authOptions } from '@/lib/auth';\nexport default async function Page() {\n  const session = await getServerSession(authOptions);\n  return null;\n}\n" };
    const principal = nextPrincipalOf([options, page], 'lib/idempotency', '')!;
    expect(principal.imports).toEqual(["import { getServerSession } from 'next-auth';", "import { authOptions } from '../auth';"]);
    expect(renderNextInstance(true, 'postgres', principal)).toContain('principal: async () => ((await getServerSession(authOptions))?.user as { id?: string } | undefined)?.id,');
    // Pages API routes among the protected ones: there the session is read from the req and res they pass.
    const pages = nextPrincipalOf([options, page], 'lib/idempotency', '', true)!;
    expect(renderNextInstance(true, 'postgres', pages)).toContain('principal: async (request, _scope, response) =>\n    ((response ? await getServerSession(request as never, response as never, authOptions) : await getServerSession(authOptions))?.user as { id?: string } | undefined)?.id,');
  });

  it('Supabase: the server client factory (createServerClient with next/headers cookies), sync or async', () => {
    // The shape of vercel/nextjs-subscription-payments' utils/supabase/server.ts (Next 14: cookies() is sync).
    const server = { path: 'utils/supabase/server.ts', text: "import { createServerClient } from '@supabase/ssr';\nimport { cookies } from 'next/headers';\nexport const createClient = () => {\n  const cookieStore = cookies();\n  return createServerClient(url, key, { cookies: {} });\n};\n" };
    const middleware = { path: 'utils/supabase/middleware.ts', text: "import { createServerClient } from '@supabase/ssr';\nimport { type NextRequest } from 'next/server';\nexport const updateSession = async (request: NextRequest) => createServerClient(url, key, { cookies: {} });\n" };
    const principal = nextPrincipalOf([route, server, middleware], 'lib/idempotency', '')!;
    expect(principal.label).toBe('Supabase Auth (getUser)');
    expect(principal.imports).toEqual(["import { createClient } from '../../utils/supabase/server';"]);
    expect(renderNextInstance(true, 'postgres', principal)).toContain('principal: async () => (await createClient().auth.getUser()).data.user?.id ?? undefined,');
    // Next 15: `export async function createClient()` awaits cookies().
    const async = { ...server, text: server.text.replace('export const createClient = () => {', 'export async function createClient() {').replace('cookies();', 'await cookies();') };
    expect(nextPrincipalOf([async], 'lib/idempotency', '')!.principal).toBe('async () => (await (await createClient()).auth.getUser()).data.user?.id ?? undefined');
    // Two exported factories in the module: which one the app's actions use is not known, so the step stays manual.
    const two = { ...server, text: `${server.text}export const createAdminClient = () => createServerClient(url, serviceKey, { cookies: {} });\n` };
    expect(nextPrincipalOf([two], 'lib/idempotency', '')).toBeUndefined();
  });

  it('no recognisable auth (or only global actions): the principal stays as before', () => {
    expect(nextPrincipalOf([route], 'lib/idempotency', '')).toBeUndefined();
    const supabase = { path: 'lib/supabase.ts', text: "export async function user(client: { auth: { getUser(): Promise<unknown> } }) {\n  return client.auth.getUser();\n}\n" };
    expect(nextPrincipalOf([supabase], 'lib/idempotency', '')).toBeUndefined();
    expect(renderNextInstance(true, 'postgres')).toContain('principal: async () => undefined,');
    const clerk = nextPrincipalOf([{ path: 'middleware.ts', text: "import { auth } from '@clerk/nextjs/server';\n" }], 'lib/idempotency', '');
    expect(renderNextInstance(false, 'postgres', clerk)).toContain('principal: () => undefined,');
    expect(renderNextInstance(false, 'postgres', clerk)).not.toContain('@clerk');
  });
});
