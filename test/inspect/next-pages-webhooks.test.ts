import { describe, expect, it } from 'vitest';
import { inspectProject } from '../../src/inspect/index.js';
import { tempProjectSync } from '../helpers/tempProject.js';

const project = (files: Record<string, string>) => tempProjectSync(files, 'ib-next-pages-');

const methodSwitch = (cases: string) => `export default async function handler(req: NextApiRequest, res: NextApiResponse) {
  switch (req.method) {
${cases}
    default:
      res.status(405).end();
  }
}
`;

// The shapes of boxyhq/saas-starter-kit (Next.js Pages Router): API routes that switch on the method and hand the
// request to handlePOST, a body validated by a function given the schema, the team's own webhook settings under
// /webhooks, and a directory-sync receiver checking its HMAC in a local verifyWebhookSignature.
const files = {
  'package.json': JSON.stringify({ name: 'kit', dependencies: { next: '15.5.0', stripe: '^17.0.0', zod: '^3.0.0' } }),
  'lib/zod.ts': `import { z } from 'zod';
export const checkoutSessionSchema = z.object({ price: z.string(), quantity: z.number() });
export function validateWithSchema<S extends z.ZodTypeAny>(schema: S, data: unknown): z.infer<S> {
  return schema.parse(data);
}
`,
  'lib/stripe.ts': "import Stripe from 'stripe';\nexport const stripe = new Stripe(process.env.STRIPE_SECRET_KEY ?? '');\n",
  'pages/api/teams/[slug]/payments/create-checkout-session.ts': `import type { NextApiRequest, NextApiResponse } from 'next';
import { stripe } from '@/lib/stripe';
import { checkoutSessionSchema, validateWithSchema } from '@/lib/zod';
${methodSwitch("    case 'POST':\n      await handlePOST(req, res);\n      break;")}
const handlePOST = async (req: NextApiRequest, res: NextApiResponse) => {
  const { price, quantity } = validateWithSchema(checkoutSessionSchema, req.body) as { price: string; quantity: number };
  const session = await stripe.checkout.sessions.create({ mode: 'subscription', line_items: [{ price, quantity }] });
  res.json({ data: session });
};
`,
  'pages/api/teams/[slug]/webhooks/index.ts': `import type { NextApiRequest, NextApiResponse } from 'next';
import { createWebhook, deleteWebhook, listWebhooks } from '@/lib/svix';
${methodSwitch("    case 'POST':\n      res.json(await createWebhook(req.query.slug as string, req.body.url));\n      break;\n    case 'GET':\n      res.json(await listWebhooks(req.query.slug as string));\n      break;\n    case 'DELETE':\n      res.json(await deleteWebhook(req.query.slug as string, req.query.webhookId as string));\n      break;")}`,
  'pages/api/webhooks/dsync.ts': `import type { NextApiRequest, NextApiResponse } from 'next';
import crypto from 'crypto';
export default async function handler(req: NextApiRequest, res: NextApiResponse) {
  if (req.method !== 'POST') return res.status(405).end();
  if (!verifyWebhookSignature(req)) return res.end();
  await handleEvents(req.body);
  res.end();
}
const verifyWebhookSignature = (req: NextApiRequest) => {
  const [t, s] = String(req.headers['boxyhq-signature']).split(',');
  const expected = crypto.createHmac('sha256', 'secret').update(t + JSON.stringify(req.body)).digest('hex');
  return s === expected;
};
async function handleEvents(body: unknown) {
  return body;
}
`,
};

describe('Next.js Pages Router API routes (boxyhq/saas-starter-kit)', () => {
  it('reads the body fields a validation function returns, from the handler the method switch calls', async () => {
    const inspection = await inspectProject(project(files));
    const checkout = inspection.findings.find((f) => f.kind === 'endpoint' && f.path.endsWith('/create-checkout-session'));
    expect(checkout).toMatchObject({ method: 'POST', touchesPayment: true, bodyFields: ['price', 'quantity'] });
  });

  it("takes the team's own webhook settings for CRUD, and a local verifyWebhookSignature for no PayPal check", async () => {
    const inspection = await inspectProject(project(files));
    const webhooks = inspection.findings.filter((f) => f.kind === 'webhook').map((f) => ({ route: 'route' in f ? f.route : undefined, provider: 'provider' in f ? f.provider : undefined }));
    expect(webhooks).toEqual([{ route: 'POST /api/webhooks/dsync', provider: undefined }]);
  });
});

describe('what authenticates a Next.js route handler', () => {
  const session = `import type { NextApiRequest, NextApiResponse } from 'next';
import { getServerSession } from 'next-auth/next';
export async function throwIfNoAccess(req: NextApiRequest, res: NextApiResponse) {
  const session = await getServerSession(req, res, {});
  if (!session) throw new Error('Unauthorized');
  return session;
}
`;
  const pages = {
    'package.json': JSON.stringify({ name: 'kit', dependencies: { next: '15.5.0', 'next-auth': '4.24.0' } }),
    'lib/access.ts': session,
    'pages/api/teams/invite.ts': `import type { NextApiRequest, NextApiResponse } from 'next';
import { throwIfNoAccess } from '@/lib/access';
${methodSwitch("    case 'POST':\n      await handlePOST(req, res);\n      break;")}
const handlePOST = async (req: NextApiRequest, res: NextApiResponse) => {
  await throwIfNoAccess(req, res);
  res.json({ invited: req.body.email });
};
`,
    'pages/api/auth/resend.ts': `import type { NextApiRequest, NextApiResponse } from 'next';
${methodSwitch("    case 'POST':\n      await handlePOST(req, res);\n      break;")}
const handlePOST = async (req: NextApiRequest, res: NextApiResponse) => {
  res.json({ sent: req.body.email });
};
`,
    'app/api/contact/route.ts': "export async function POST(request: Request) {\n  return Response.json(await request.json());\n}\n",
  };
  const routesOf = async (files: Record<string, string>) => Object.fromEntries(((await inspectProject(project(files))).routeAuthentication ?? []).map((r) => [`${r.method} ${r.path}`, r.by]));

  it('by the session check in the function the method switch calls; public without it when no middleware.ts could check', async () => {
    expect(await routesOf(pages)).toEqual({ 'POST /api/teams/invite': ['throwIfNoAccess() in handler'], 'POST /api/auth/resend': [], 'POST /api/contact': [] });
  });

  it('leaves a route that does not check undecided when a middleware.ts reads the session token', async () => {
    const middleware = "import { getToken } from 'next-auth/jwt';\nimport { NextResponse, type NextRequest } from 'next/server';\nexport default async function middleware(req: NextRequest) {\n  return (await getToken({ req })) ? NextResponse.next() : NextResponse.redirect(new URL('/login', req.url));\n}\n";
    expect(await routesOf({ ...pages, 'middleware.ts': middleware })).toEqual({ 'POST /api/teams/invite': ['throwIfNoAccess() in handler'] });
    // A matcher that leaves the API out: the middleware never runs for those routes, so they are public again.
    const pagesOnly = `${middleware}export const config = { matcher: ['/dashboard/:path*', '/((?!api|_next/static|favicon.ico).*)'] };\n`;
    expect(await routesOf({ ...pages, 'middleware.ts': pagesOnly })).toEqual({ 'POST /api/teams/invite': ['throwIfNoAccess() in handler'], 'POST /api/auth/resend': [], 'POST /api/contact': [] });
  });
});
