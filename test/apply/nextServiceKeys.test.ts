import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { generate } from '../../src/generate.js';
import { inspectProject } from '../../src/inspect/index.js';
import { copyFixture, type FixtureCopy } from './fixtureApp.js';

/** The Next fixture with Stripe among its payments and one more action in its config. */
const withStripeAction = (action: Record<string, unknown>): Promise<FixtureCopy> =>
  copyFixture('next', (text) => {
    const config = JSON.parse(text) as { actions: unknown[]; payments?: string[] };
    config.payments = ['stripe'];
    config.actions.push(action);
    return JSON.stringify(config, null, 2);
  });

/**
 * A Server Action built by a call whose Stripe call sits in a service module (the shape of nextjs/saas-starter's
 * checkoutAction → createCheckoutSession): the action is wrapped, and the service reads the claim the wrapper holds for
 * the call chain with idempotencyOf(), as under NestJS's interceptor. No database or Stripe needed: text only.
 */
describe('apply on a Next.js Server Action whose provider call is in a service', { timeout: 300_000 }, () => {
  let copy: FixtureCopy | undefined;
  afterAll(async () => {
    await copy?.remove();
  });

  it('wraps the built action, keys the service call from idempotencyOf(), and changes nothing the second time', async () => {
    copy = await withStripeAction({ name: 'payInvoice', trigger: 'http', route: 'POST /payInvoice', transport: 'server-action', significantFields: ['invoiceId'], provider: 'stripe', scope: 'global', source: 'app/pay.ts:5' });
    const write = async (file: string, text: string) => {
      await mkdir(path.dirname(path.join(copy!.dir, file)), { recursive: true });
      await writeFile(path.join(copy!.dir, file), text);
    };
    await write('lib/billing.ts', "import Stripe from 'stripe';\n\nconst stripe = new Stripe(process.env.STRIPE_KEY ?? '');\n\nexport async function chargeInvoice(invoiceId: string) {\n  const intent = await stripe.paymentIntents.create({ amount: 500, currency: 'eur', metadata: { invoiceId } });\n  return intent.id;\n}\n");
    await write('lib/withForm.ts', 'export function withForm<T>(action: (formData: FormData) => Promise<T>) {\n  return async (_previous: unknown, formData: FormData) => action(formData);\n}\n');
    await write('app/pay.ts', "'use server';\n\nimport { chargeInvoice } from '@/lib/billing';\nimport { withForm } from '@/lib/withForm';\nexport const payInvoice = withForm(async (formData) => {\n  return { paid: await chargeInvoice(String(formData.get('invoiceId'))) };\n});\n");
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true, action: 'payInvoice' }, { interactive: false });
    expect(first.stale).toEqual([]);
    const pay = await readFile(path.join(copy.dir, 'app/pay.ts'), 'utf8');
    expect(pay).toContain('const payInvoiceOnce = withForm(async (formData) => {');
    expect(pay).toContain("export const payInvoice = idempotency.idempotentAction(\n  'payInvoice',\n  (_idempotencyKey: string, ...args: Parameters<typeof payInvoiceOnce>) => payInvoiceOnce(...args),\n);\n");
    const billing = await readFile(path.join(copy.dir, 'lib/billing.ts'), 'utf8');
    expect(billing).toContain('export async function chargeInvoice(invoiceId: string) {\n  const idempotencyContext = idempotencyOf();\n');
    expect(billing).toContain('idempotencyContext ? stripeRequestOptions(idempotencyContext) : undefined');
    expect(first.manual.map((m) => m.reason)).not.toContainEqual(expect.stringContaining('not made inside the route handler'));
    const again = await runApply({ cwd: copy.dir, yes: true, quiet: true, action: 'payInvoice' }, { interactive: false });
    expect(again.changes).toEqual([]);
  });
});

/**
 * boxyhq/saas-starter-kit's Pages API routes: the default export switches on the method and hands the request to
 * handlePOST, which makes the Stripe call. The Pages wrapper holds the claim for the call chain as well.
 */
describe('apply on a Next.js Pages API route that hands the request to handlePOST', { timeout: 300_000 }, () => {
  let copy: FixtureCopy | undefined;
  afterAll(async () => {
    await copy?.remove();
  });

  it('wraps the default export and keys the Stripe call in handlePOST from idempotencyOf()', async () => {
    copy = await withStripeAction({ name: 'createPortal', trigger: 'http', route: 'POST /api/portal', significantFields: ['customer'], provider: 'stripe', scope: 'global', source: 'pages/api/portal.ts:5' });
    await mkdir(path.join(copy.dir, 'pages/api'), { recursive: true });
    await writeFile(
      path.join(copy.dir, 'pages/api/portal.ts'),
      "import type { NextApiRequest, NextApiResponse } from 'next';\nimport Stripe from 'stripe';\n\nconst stripe = new Stripe(process.env.STRIPE_KEY ?? '');\nexport default async function handler(req: NextApiRequest, res: NextApiResponse) {\n  switch (req.method) {\n    case 'POST':\n      return handlePOST(req, res);\n    default:\n      res.status(405).end();\n  }\n}\n\nconst handlePOST = async (req: NextApiRequest, res: NextApiResponse) => {\n  const session = await stripe.billingPortal.sessions.create({ customer: String(req.body.customer) });\n  res.json({ url: session.url });\n};\n",
    );
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true, action: 'createPortal' }, { interactive: false });
    expect(first.stale).toEqual([]);
    const route = await readFile(path.join(copy.dir, 'pages/api/portal.ts'), 'utf8');
    expect(route).toContain("export default idempotency.withPagesIdempotency('createPortal', handler);");
    expect(route).toContain('const handlePOST = async (req: NextApiRequest, res: NextApiResponse) => {\n  const idempotencyContext = idempotencyOf();\n');
    expect(route).toContain('idempotencyContext ? stripeRequestOptions(idempotencyContext) : undefined');
    expect(first.manual.map((m) => m.reason)).not.toContainEqual(expect.stringContaining('not made inside the route handler'));
    const again = await runApply({ cwd: copy.dir, yes: true, quiet: true, action: 'createPortal' }, { interactive: false });
    expect(again.changes).toEqual([]);
  });
});

/**
 * gitroomhq/postiz-app's cancelSubscription: the handler reaches only `stripe.subscriptions.cancel(id)`, a call whose
 * repeat leaves the same state and that takes no request options apply could key. No step asks to key it.
 */
describe('apply on a route whose only provider call repeats safely', { timeout: 300_000 }, () => {
  let copy: FixtureCopy | undefined;
  afterAll(async () => {
    await copy?.remove();
  });

  it('lists no step to key it', async () => {
    copy = await withStripeAction({ name: 'cancelPlan', trigger: 'http', route: 'POST /api/cancel', significantFields: ['subscriptionId'], provider: 'stripe', scope: 'global', source: 'app/api/cancel/route.ts:3' });
    await mkdir(path.join(copy.dir, 'app/api/cancel'), { recursive: true });
    await writeFile(path.join(copy.dir, 'lib/plans.ts'), "import Stripe from 'stripe';\n\nconst stripe = new Stripe(process.env.STRIPE_KEY ?? '');\n\nexport async function cancelPlan(subscriptionId: string) {\n  await stripe.subscriptions.cancel(subscriptionId);\n  return { cancelled: true };\n}\n");
    await writeFile(path.join(copy.dir, 'app/api/cancel/route.ts'), "import { cancelPlan } from '@/lib/plans';\n\nexport async function POST(request: Request) {\n  const { subscriptionId } = (await request.json()) as { subscriptionId: string };\n  return Response.json(await cancelPlan(subscriptionId));\n}\n");
    // As init leaves it: the code read, what each action's code does recorded (the calls it reaches, which repeat safely).
    await generate({ cwd: copy.dir, inspection: await inspectProject(copy.dir), date: '2026-01-15' });
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true, action: 'cancelPlan' }, { interactive: false });
    expect(first.stale).toEqual([]);
    expect(await readFile(path.join(copy.dir, 'app/api/cancel/route.ts'), 'utf8')).toContain("export const POST = idempotency.withIdempotency('cancelPlan', ");
    expect(first.manual.filter((m) => m.action === 'cancelPlan').map((m) => m.reason)).not.toContainEqual(expect.stringContaining('not made inside the route handler'));
  });
});
