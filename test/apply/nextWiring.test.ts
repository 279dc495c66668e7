import { describe, expect, it } from 'vitest';
import { wireSource, type WireSourceOptions } from '../../src/apply/planApply.js';
import { wireClients } from '../../src/apply/transforms/clientWiring.js';
import type { WiringTarget } from '../../src/apply/types.js';

const imports = { aliases: [{ prefix: '@/', dir: '' }], defaultExtension: '' as const };
const options: WireSourceOptions = { framework: 'nextjs', scaffoldDir: 'lib/idempotency', imports, scaffoldModules: new Set(['index', 'next']) };
const target = (file: string, line: number, extra: Partial<WiringTarget> = {}): WiringTarget => ({ action: 'createCheckout', codeName: 'createCheckout', trigger: 'http', method: 'POST', path: '/api/checkout', file, line, keySource: 'client', scope: 'global', ...extra });

function wireTwice(file: string, text: string, t: WiringTarget) {
  const out = wireSource(file, text, [t], options);
  const again = wireSource(file, out.text, [t], { ...options, anyLine: true });
  expect(again.text).toBe(out.text);
  expect(again.edits).toEqual([]);
  return out;
}

describe('Next.js route handlers, Pages API routes and Server Actions', () => {
  it('wraps `export const POST = async (…) => …` in place', () => {
    const file = 'app/api/checkout/route.ts';
    const text = "import { NextResponse } from 'next/server';\n\nexport const POST = async (req: Request) => {\n  return NextResponse.json({ ok: true });\n};\n";
    const out = wireTwice(file, text, target(file, 3));
    expect(out.text).toContain("import { idempotency } from '../../../lib/idempotency/instance';\n");
    expect(out.text).toContain("export const POST = idempotency.withIdempotency('createCheckout', async (req: Request) => {\n  return NextResponse.json({ ok: true });\n});\n");
  });

  it('keeps a GET handler of the same file as it is', () => {
    const file = 'app/api/checkout/route.ts';
    const text = "export async function GET() {\n  return Response.json([]);\n}\n\nexport async function POST(request: Request) {\n  return Response.json(await request.json(), { status: 201 });\n}\n";
    const out = wireTwice(file, text, target(file, 5));
    expect(out.text).toContain('export async function GET() {');
    expect(out.text).toContain("async function createCheckoutHandler(request: Request) {\n  return Response.json(await request.json(), { status: 201 });\n}\nexport const POST = idempotency.withIdempotency('createCheckout', createCheckoutHandler);\n");
  });

  it('wraps a Pages API route: named default function, anonymous one, and `export default handler`', () => {
    const file = 'pages/api/checkout.ts';
    const named = "import type { NextApiRequest, NextApiResponse } from 'next';\n\nexport default async function handler(req: NextApiRequest, res: NextApiResponse) {\n  res.status(201).json({ ok: true });\n}\n";
    expect(wireTwice(file, named, target(file, 3)).text).toContain("async function handler(req: NextApiRequest, res: NextApiResponse) {\n  res.status(201).json({ ok: true });\n}\nexport default idempotency.withPagesIdempotency('createCheckout', handler);\n");
    const anonymous = named.replace('function handler(', 'function (');
    expect(wireTwice(file, anonymous, target(file, 3)).text).toContain("export default idempotency.withPagesIdempotency('createCheckout', async function (req: NextApiRequest, res: NextApiResponse) {");
    const assigned = "const handler = async (req: unknown, res: { end(): void }) => res.end();\nexport default handler;\n";
    expect(wireTwice(file, assigned, target(file, 1)).text).toContain("export default idempotency.withPagesIdempotency('createCheckout', handler);");
  });

  it('turns an arrow Server Action into idempotentAction taking the key first', () => {
    const file = 'app/actions.ts';
    const text = "'use server';\n\nexport const saveNote = async (formData: FormData) => {\n  return { saved: String(formData.get('title')) };\n};\n";
    const out = wireTwice(file, text, target(file, 3, { action: 'saveNote', codeName: 'saveNote', path: '/saveNote' }));
    expect(out.text).toContain("export const saveNote = idempotency.idempotentAction('saveNote', async (_idempotencyKey: string, formData: FormData) => {");
  });

  it('gives the key its own line when the parameters sit one per line', () => {
    const file = 'utils/stripe/server.ts';
    const text = "'use server';\n\nexport async function checkout(\n  priceId: string,\n  path = '/account'\n): Promise<string> {\n  return priceId + path;\n}\n";
    const out = wireTwice(file, text, target(file, 3, { action: 'checkout', codeName: 'checkout', path: '/checkout' }));
    expect(out.text).toContain("async function checkoutOnce(\n  _idempotencyKey: string,\n  priceId: string,\n  path = '/account'\n): Promise<string> {");
    expect(out.text).toContain("export const checkout = idempotency.idempotentAction('checkout', checkoutOnce);");
  });

  it('leaves a webhook route to the event-id dedupe: a scoped request wrapper would refuse every delivery', () => {
    const file = 'app/api/webhooks/stripe/route.ts';
    const text = 'export async function POST(req: Request) {\n  return new Response(await req.text());\n}\n';
    const out = wireSource(file, text, [target(file, 1, { trigger: 'webhook', keySource: 'derived' })], options);
    expect(out.text).toBe(text);
    expect(out.manual[0]?.reason).toContain('a webhook is deduplicated by its verified event id inside the handler');
  });

  it('keeps a Server Action built by a call: the built one is renamed, the export takes the key first and hands the rest on', () => {
    const file = 'app/actions.ts';
    const text = "'use server';\nimport { client } from './safe';\n\nexport const saveNote = client.action(async () => ({ ok: true }));\n";
    const out = wireTwice(file, text, target(file, 4, { action: 'saveNote', codeName: 'saveNote', path: '/saveNote' }));
    expect(out.manual).toEqual([]);
    expect(out.text).toContain("const saveNoteOnce = client.action(async () => ({ ok: true }));\n");
    expect(out.text).toContain("export const saveNote = idempotency.idempotentAction(\n  'saveNote',\n  (_idempotencyKey: string, ...args: Parameters<typeof saveNoteOnce>) => saveNoteOnce(...args),\n);\n");
    // nextjs/saas-starter's shape: a long export is written one argument per line.
    const built = "'use server';\nimport { validatedActionWithUser } from '@/lib/auth/middleware';\n\nexport const inviteTeamMember = validatedActionWithUser(\n  schema,\n  async (data, _, user) => {\n    return { success: 'Invitation sent' };\n  }\n);\n";
    const invite = wireTwice(file, built, target(file, 4, { action: 'inviteTeamMember', codeName: 'inviteTeamMember', path: '/inviteTeamMember' }));
    expect(invite.text).toContain('const inviteTeamMemberOnce = validatedActionWithUser(\n  schema,\n');
    expect(invite.text).toContain("\n);\nexport const inviteTeamMember = idempotency.idempotentAction(\n  'inviteTeamMember',\n  (_idempotencyKey: string, ...args: Parameters<typeof inviteTeamMemberOnce>) => inviteTeamMemberOnce(...args),\n);\n");
  });

  it('leaves a built Server Action that the file uses itself as a manual step', () => {
    const file = 'app/actions.ts';
    const text = "'use server';\nimport { client } from './safe';\n\nexport const saveNote = client.action(async () => ({ ok: true }));\nexport const saveTwice = async () => saveNote();\n";
    const out = wireSource(file, text, [target(file, 4, { action: 'saveNote', codeName: 'saveNote', path: '/saveNote' })], options);
    expect(out.text).toBe(text);
    expect(out.manual[0]?.reason).toContain('saveNote is also used elsewhere in the file');
  });
});

describe('client wiring', () => {
  const route = target('app/api/checkout/route.ts', 1);
  const action = target('app/actions.ts', 5, { action: 'saveNote', codeName: 'saveNote', path: '/saveNote' });
  const clientOptions = { scaffoldDir: 'lib/idempotency', imports, keyHeader: 'Idempotency-Key' };

  it('adds the header to a one-line fetch inside an arrow component, with a template URL', () => {
    const file = 'components/Buy.tsx';
    const text = "'use client';\nexport const Buy = ({ id }: { id: string }) => {\n  const go = () => fetch(`/api/checkout?id=${id}`, { method: 'POST' });\n  return <button onClick={go}>Buy</button>;\n};\n";
    const out = wireClients([{ path: file, text }], { routes: [route], actions: [] }, clientOptions);
    expect(out.manual).toEqual([]);
    expect(out.texts.get(file)).toBe("'use client';\n\nimport { useIdempotencyKey } from '@/lib/idempotency/useIdempotencyKey';\n\nexport const Buy = ({ id }: { id: string }) => {\n  const createCheckoutIntent = useIdempotencyKey();\n  const go = () => fetch(`/api/checkout?id=${id}`, { method: 'POST', headers: { 'Idempotency-Key': createCheckoutIntent.key() } }).then(createCheckoutIntent.settle);\n  return <button onClick={go}>Buy</button>;\n};\n");
    const again = wireClients([{ path: file, text: out.texts.get(file)! }], { routes: [route], actions: [] }, clientOptions);
    expect(again.texts.size).toBe(0);
    expect(again.edits).toEqual([]);
  });

  it('spreads shared headers that are a plain object (boxyhq/saas-starter-kit), and leaves a Headers instance to the user', () => {
    const common = { path: 'lib/common.ts', text: "export const defaultHeaders = {\n  'Content-Type': 'application/json',\n};\nexport const made = new Headers();\n" };
    const file = 'components/Portal.tsx';
    const text = "import { defaultHeaders, made } from '@/lib/common';\nexport const Portal = () => {\n  const open = () => fetch('/api/checkout', {\n    method: 'POST',\n    headers: defaultHeaders,\n  });\n  const other = () => fetch('/api/checkout', { method: 'POST', headers: made });\n  return <button onClick={() => open().then(other)}>Go</button>;\n};\n";
    const out = wireClients([common, { path: file, text }], { routes: [route], actions: [] }, clientOptions);
    expect(out.texts.get(file)).toContain("    headers: { ...defaultHeaders, 'Idempotency-Key': createCheckoutIntent.key() },\n  }).then(createCheckoutIntent.settle);");
    expect(out.texts.get(file)).toContain("headers: made });");
    expect(out.manual.map((m) => `${m.line} ${m.reason}`)).toEqual([expect.stringMatching(/^7 .*its headers are not an object literal/)]);
  });

  it('keys a fetch helper through an optional parameter, and lists a module-level fetch and a Server Component form as manual with the reason', () => {
    const wrapper = { path: 'lib/api.ts', text: "export function checkout(priceId: string) {\n  return fetch('/api/checkout', { method: 'POST', body: JSON.stringify({ priceId }) });\n}\nexport const warm = fetch('/api/checkout', { method: 'POST' });\n" };
    const page = { path: 'app/notes/page.tsx', text: "import { saveNote } from '@/app/actions';\nexport default function Page() {\n  return <form action={saveNote}><button>Save</button></form>;\n}\n" };
    const out = wireClients([wrapper, page], { routes: [route], actions: [action] }, clientOptions);
    expect(out.texts.get('lib/api.ts')).toContain("export function checkout(priceId: string, idempotencyKey?: string) {\n  return fetch('/api/checkout', { method: 'POST', body: JSON.stringify({ priceId }), headers: { ...(idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {}) } });\n}\n");
    expect(out.manual.map((m) => `${m.file}:${m.line} ${m.reason}`)).toEqual([
      expect.stringMatching(/^lib\/api\.ts:4 POST \/api\/checkout here cannot get a key mechanically: it is outside a React component/),
      expect.stringMatching(/^app\/notes\/page\.tsx:3 POST \/saveNote here cannot get a key mechanically: it is not in a client component/),
      expect.stringMatching(/^lib\/api\.ts:2 no React component calls checkout, which now sends the Idempotency-Key header only when given a key/),
    ]);
  });

  it('puts the key before a first argument that sits on its own line', () => {
    const file = 'components/Pricing.tsx';
    const text = "'use client';\nimport { checkout } from '@/app/actions';\nexport default function Pricing() {\n  const go = async () => {\n    const url = await checkout(\n      'price_1',\n      '/account'\n    );\n    return url;\n  };\n  return <button onClick={go}>Buy</button>;\n}\n";
    const checkout = target('app/actions.ts', 3, { action: 'checkout', codeName: 'checkout', path: '/checkout' });
    const out = wireClients([{ path: file, text }], { routes: [], actions: [checkout] }, clientOptions);
    expect(out.texts.get(file)).toContain("  const checkoutIntent = useIdempotencyKey();\n");
    expect(out.texts.get(file)).toContain("await checkout(\n      checkoutIntent.key(),\n      'price_1',\n      '/account'\n    ).then(checkoutIntent.settle);");
    expect(out.edits.map((e) => e.summary)).toEqual(['Pricing passes a key from useIdempotencyKey() to the Server Action checkout (line 5)']);
  });

  it('hands useActionState the action with the key put first, also in a conditional (nextjs/saas-starter login form)', () => {
    const file = 'app/(login)/login.tsx';
    const text = "'use client';\nimport { useActionState } from 'react';\nimport { signIn, signUp } from './actions';\nexport function Login({ mode }: { mode: 'signin' | 'signup' }) {\n  const [state, formAction] = useActionState(\n    mode === 'signin' ? signIn : signUp,\n    { error: '' }\n  );\n  return <form action={formAction}>{state.error}</form>;\n}\n";
    const signIn = target('app/(login)/actions.ts', 3, { action: 'signIn', codeName: 'signIn', path: '/signIn' });
    const signUp = target('app/(login)/actions.ts', 9, { action: 'signUp', codeName: 'signUp', path: '/signUp' });
    const out = wireClients([{ path: file, text }], { routes: [], actions: [signIn, signUp] }, clientOptions);
    expect(out.manual).toEqual([]);
    const wired = out.texts.get(file)!;
    expect(wired).toContain("import { useIdempotencyKey, keyedAction } from '../../lib/idempotency/useIdempotencyKey';");
    expect(wired).toContain('  const signInIntent = useIdempotencyKey();\n  const signUpIntent = useIdempotencyKey();\n');
    expect(wired).toContain("    mode === 'signin' ? keyedAction(signInIntent, signIn) : keyedAction(signUpIntent, signUp),\n");
    const again = wireClients([{ path: file, text: wired }], { routes: [], actions: [signIn, signUp] }, clientOptions);
    expect(again.texts.size).toBe(0);
    expect(again.manual).toEqual([]);
  });

  it('says so when no caller of a client-keyed route is in the project', () => {
    const out = wireClients([], { routes: [route], actions: [] }, clientOptions);
    expect(out.manual.map((m) => m.reason)).toEqual([expect.stringContaining('no caller found in the project')]);
  });
});
