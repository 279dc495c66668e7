import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ts } from 'ts-morph';
import { openCalls } from '../../src/apply/thread/chains.js';
import { KEYED_SDKS } from '../../src/apply/transforms/stableParams.js';
import { runApply } from '../../src/cli/apply.js';
import { snapshotFile, snapshotOf } from '../../src/emit/protectionSnapshot.js';
import { auditProject } from '../../src/findings/auditProject.js';
import { readSchemaFacts } from '../../src/findings/schemaFacts.js';
import { parseSource } from '../../src/inspect/parse/parseSource.js';
import { compile, copyFixture, type FixtureCopy } from './fixtureApp.js';

/**
 * Issue #19 on the fixtures of injectedServiceKeys.test.ts, each changed the way real codebases differ: the cases
 * apply leaves manual (the service keeps its signature and the step says why), and a handler passed by name. No
 * database needed.
 */
describe('apply threading the key into services: the shapes it refuses, and a named handler', { timeout: 300_000 }, () => {
  let copy: FixtureCopy | undefined;
  afterEach(async () => {
    await copy?.remove();
    copy = undefined;
  });

  const edit = async (file: string, change: (text: string) => string) => {
    const at = path.join(copy!.dir, file);
    await writeFile(at, change(await readFile(at, 'utf8')));
  };
  const apply = (action?: string) => runApply({ cwd: copy!.dir, yes: true, quiet: true, ...(action !== undefined ? { action } : {}) }, { interactive: false });
  const reasons = (result: Awaited<ReturnType<typeof apply>>) => result.manual.map((m) => m.reason);
  /** The route pass's generic step for a provider call it cannot see: gone wherever this pass keyed the call or said why not. */
  const generic = (result: Awaited<ReturnType<typeof apply>>) => reasons(result).filter((r) => /not made inside the route handler|calls from a NestJS handler need the claim/.test(r));
  const summaries = (result: Awaited<ReturnType<typeof apply>>) => result.edits.map((e) => e.summary);

  it('a function also passed as a value: a caller could put anything in the new parameter', async () => {
    copy = await copyFixture('express-service');
    await edit('src/jobs/retryDeclined.ts', (text) => `${text}\nexport const handlers = { charge: chargeOrder };\n`);
    const result = await apply();
    expect(reasons(result)).toContainEqual(expect.stringMatching(/^not keyed because chargeOrder is also used as a value at src\/jobs\/retryDeclined\.ts:\d+/));
    expect(result.changes.map((c) => c.path)).not.toContain('src/payments.ts');
    expect(await compile(copy.dir)).toBe('');
  });

  it("another module's function of the same name, imported by default, is not a caller of this one", async () => {
    // papermark: every Pages route hands the request to `handleRoute`, each imported from its own module.
    copy = await copyFixture('express-service');
    await writeFile(path.join(copy.dir, 'src/jobs/refundCharge.ts'), 'export default async function chargeOrder(amountCents: number): Promise<string> {\n  return String(-amountCents);\n}\n');
    await writeFile(path.join(copy.dir, 'src/jobs/refund.ts'), "import chargeOrder from './refundCharge';\n\nexport const refund = (amountCents: number) => chargeOrder(amountCents);\n");
    const result = await apply();
    expect(reasons(result).filter((r) => r.includes('src/jobs/refund.ts'))).toEqual([]);
    expect(result.changes.map((c) => c.path)).toContain('src/payments.ts');
  });

  it("a member of something else named like it (this.repo.chargeOrder, db.orders.chargeOrder) is not a caller of this one", async () => {
    // arthur-rosch/muve-api: the handler `create` beside `this.leadRepository.create(…)` and `prisma.lead.create(…)`.
    copy = await copyFixture('express-service');
    await writeFile(
      path.join(copy.dir, 'src/jobs/ledger.ts'),
      'type Repo = { chargeOrder(amountCents: number): Promise<string> };\ndeclare const db: { orders: Repo };\n\nexport class Ledger {\n  constructor(private readonly repo: Repo) {}\n  record(amountCents: number) {\n    return Promise.all([this.repo.chargeOrder(amountCents), db.orders.chargeOrder(amountCents)]);\n  }\n}\n',
    );
    const result = await apply();
    expect(reasons(result).filter((r) => r.includes('src/jobs/ledger.ts'))).toEqual([]);
    expect(result.changes.map((c) => c.path)).toContain('src/payments.ts');
  });

  it('a service written without semicolons gets its type import without one', async () => {
    copy = await copyFixture('express-service');
    await edit('src/payments.ts', (text) => text.replace(/;$/gm, ''));
    const result = await apply();
    expect(result.changes.map((c) => c.path)).toContain('src/payments.ts');
    const text = await readFile(path.join(copy.dir, 'src/payments.ts'), 'utf8');
    expect(text).toMatch(/^import type \{ ProviderKeySource \} from '\.\/idempotency\/providers\.js'$/m);
    expect(text).not.toMatch(/;$/m);
  });

  it('an overloaded function', async () => {
    copy = await copyFixture('express-service');
    await edit('src/payments.ts', (text) => text.replace('export async function chargeOrder', 'export function chargeOrder(amountCents: number): Promise<string>;\nexport function chargeOrder(amountCents: number, customer: string): Promise<string>;\nexport async function chargeOrder'));
    const result = await apply();
    expect(reasons(result)).toContainEqual(expect.stringContaining('not keyed because chargeOrder is overloaded'));
    expect(generic(result)).toEqual([]);
    expect(result.changes.map((c) => c.path)).not.toContain('src/payments.ts');
  });

  it('an overloaded function, with the findings init recorded: the unkeyed-call finding is not listed again beside the step at that call', async () => {
    copy = await copyFixture('express-service');
    await edit('src/payments.ts', (text) => text.replace('export async function chargeOrder', 'export function chargeOrder(amountCents: number): Promise<string>;\nexport function chargeOrder(amountCents: number, customer: string): Promise<string>;\nexport async function chargeOrder'));
    const audit = await auditProject(copy.dir);
    expect(audit.findings.filter((f) => f.ruleId === 'provider-call-without-key').map((f) => `${f.file}:${f.line}`)).toEqual(['src/payments.ts:7']);
    for (const file of snapshotFile(snapshotOf({ inspection: { findings: [] }, codeFindings: audit.findings, actionFacts: audit.actionFacts }))) {
      await mkdir(path.dirname(path.join(copy.dir, file.path)), { recursive: true });
      await writeFile(path.join(copy.dir, file.path), file.contents);
    }
    const result = await apply();
    expect(result.manual.filter((m) => m.file === 'src/payments.ts' && m.line === 7).map((m) => m.reason)).toEqual([expect.stringContaining('not keyed because chargeOrder is overloaded')]);
    expect(generic(result)).toEqual([]);
    // Findings elsewhere are listed as before.
    expect(reasons(result)).toContainEqual(expect.stringMatching(/^lease-shorter-than-worst-case: /));
  });

  it('a handler that calls one Stripe service twice: it runs twice in one execution, so it stays manual with the reason', async () => {
    copy = await copyFixture('express-service');
    await edit('src/routes/orders.ts', (text) => text.replace('    const paymentIntent = await chargeOrder(price * quantity);', '    const paymentIntent = await chargeOrder(price * quantity);\n    await chargeOrder(100);'));
    const result = await apply();
    expect(reasons(result)).toContainEqual(
      expect.stringMatching(/^the handler reaches chargeOrder \(src\/payments\.ts\) through more than one call \(src\/routes\/orders\.ts:(\d+), src\/routes\/orders\.ts:(?!\1)\d+\): it runs more than once in one execution, and keyed from one claim every run would send Stripe the same key with other parameters, which it refuses\. Give each run its own step, stripeRequestOptions\(context, n\)/),
    );
    expect(generic(result)).toEqual([]);
    expect(result.changes.map((c) => c.path)).not.toContain('src/payments.ts');
    expect(result.changes.find((c) => c.path === 'src/routes/orders.ts')?.after ?? '').not.toContain('chargeOrder(100, undefined, idempotencyContext)');
  });

  it('a handler that reaches Stripe in two service functions: each call keyed with its own step, in the order the handler reaches them', async () => {
    copy = await copyFixture('express-service');
    await edit('src/payments.ts', (text) => `${text}\n/** A refundable deposit held on the card. */\nexport async function holdDeposit(amountCents: number): Promise<string> {\n  const intent = await stripe.paymentIntents.create({ amount: amountCents, currency: 'eur', capture_method: 'manual' });\n  return intent.id;\n}\n`);
    await edit('src/routes/orders.ts', (text) =>
      text
        .replace("import { chargeOrder } from '../payments.js';", "import { chargeOrder, holdDeposit } from '../payments.js';")
        .replace('    const paymentIntent = await chargeOrder(price * quantity);', '    await holdDeposit(500);\n    const paymentIntent = await chargeOrder(price * quantity);'),
    );
    const result = await apply();
    const payments = result.changes.find((c) => c.path === 'src/payments.ts')?.after ?? '';
    // holdDeposit is called first: step 0; chargeOrder step 1, whatever order the file declares them in.
    expect(payments).toContain("capture_method: 'manual' }, idempotencyContext ? stripeRequestOptions(idempotencyContext, 0) : undefined);");
    expect(payments).toContain('...(customer ? { customer } : {}) }, idempotencyContext ? stripeRequestOptions(idempotencyContext, 1) : undefined);');
    const route = result.changes.find((c) => c.path === 'src/routes/orders.ts')?.after ?? '';
    expect(route).toContain('await holdDeposit(500, idempotencyContext);');
    expect(route).toContain('await chargeOrder(price * quantity, undefined, idempotencyContext);');
    expect(reasons(result).filter((r) => r.includes('more than one'))).toEqual([]);
    expect(summaries(result)).toContainEqual(expect.stringMatching(/^passes the derived Stripe idempotency key to stripe\.paymentIntents\.create \(line 11, step 0\) when given a context/));
    expect(summaries(result)).toContainEqual(expect.stringMatching(/^passes the derived Stripe idempotency key to stripe\.paymentIntents\.create \(line 5, step 1\) when given a context/));
    expect(summaries(result).filter((s) => s.startsWith('threads the claim of POST /orders down to'))).toEqual([
      expect.stringContaining('holdDeposit (src/payments.ts)'),
      expect.stringContaining('chargeOrder (src/payments.ts)'),
    ]);
    expect(await compile(copy.dir)).toBe('');
    expect((await apply()).changes).toEqual([]);
  });

  it('a service with a Stripe call of its own that calls a helper with another: the service step 0, the helper one further down step 1', async () => {
    copy = await copyFixture('express-service');
    await edit('src/payments.ts', (text) =>
      `${text.replace('  return intent.id;', '  await holdDeposit(500);\n  return intent.id;')}\nasync function holdDeposit(amountCents: number): Promise<string> {\n  const intent = await stripe.paymentIntents.create({ amount: amountCents, currency: 'eur', capture_method: 'manual' });\n  return intent.id;\n}\n`,
    );
    const result = await apply();
    const payments = result.changes.find((c) => c.path === 'src/payments.ts')?.after ?? '';
    expect(payments).toContain('...(customer ? { customer } : {}) }, idempotencyContext ? stripeRequestOptions(idempotencyContext, 0) : undefined);\n  await holdDeposit(500, idempotencyContext);');
    expect(payments).toContain("capture_method: 'manual' }, idempotencyContext ? stripeRequestOptions(idempotencyContext, 1) : undefined);");
    expect(payments).toContain('async function holdDeposit(amountCents: number, idempotencyContext?: ProviderKeySource): Promise<string> {');
    expect(summaries(result)).toContainEqual(expect.stringContaining('threads the claim of POST /orders down to chargeOrder (src/payments.ts) → holdDeposit (src/payments.ts)'));
    expect(await compile(copy.dir)).toBe('');
    expect((await apply()).changes).toEqual([]);
  });

  it('a second place the handler reaches after an earlier apply keyed the first: left manual, the steps would be numbered apart', async () => {
    copy = await copyFixture('express-service');
    await apply();
    await edit('src/payments.ts', (text) => `${text}\nexport async function holdDeposit(amountCents: number): Promise<string> {\n  const intent = await stripe.paymentIntents.create({ amount: amountCents, currency: 'eur', capture_method: 'manual' });\n  return intent.id;\n}\n`);
    await edit('src/routes/orders.ts', (text) => text.replace("import { chargeOrder } from '../payments.js';", "import { chargeOrder, holdDeposit } from '../payments.js';").replace('    const { rows } = await db.query', '    await holdDeposit(500);\n    const { rows } = await db.query'));
    const result = await apply();
    expect(reasons(result)).toContainEqual(expect.stringMatching(/^the handler's claim keys provider calls in src\/payments\.ts already \(an earlier apply, or by hand\), and the handler now also reaches unkeyed ones \(src\/payments\.ts:\d+ \(Stripe\)\)/));
    expect(result.changes).toEqual([]);
  });

  it('a service two actions number differently: a call site holds one step, so both actions stay manual', async () => {
    copy = await copyFixture('express-service', (text) => {
      const config = JSON.parse(text) as { actions: Array<Record<string, unknown>> };
      return JSON.stringify({ ...config, actions: [...config.actions, { ...config.actions[0], name: 'holdDeposit', route: 'POST /deposits', source: 'src/routes/orders.ts:35' }] }, null, 2);
    });
    await edit('src/payments.ts', (text) => `${text}\nexport async function holdDeposit(amountCents: number): Promise<string> {\n  const intent = await stripe.paymentIntents.create({ amount: amountCents, currency: 'eur', capture_method: 'manual' });\n  return intent.id;\n}\n`);
    await edit('src/routes/orders.ts', (text) =>
      `${text.replace("import { chargeOrder } from '../payments.js';", "import { chargeOrder, holdDeposit } from '../payments.js';").replace('    const paymentIntent = await chargeOrder(price * quantity);', '    const paymentIntent = await chargeOrder(price * quantity);\n    await holdDeposit(500);')}\nordersRouter.post('/deposits', async (req, res) => {\n  res.status(201).json({ deposit: await holdDeposit(500) });\n});\n`,
    );
    const result = await apply();
    expect(reasons(result)).toContainEqual(expect.stringMatching(/^not keyed because stripe\.paymentIntents\.create at src\/payments\.ts:\d+ would be step 1 of this action's claim and step 0 of holdDeposit's, and a call site can hold one number/));
    expect(reasons(result)).toContainEqual(expect.stringMatching(/^not keyed because stripe\.paymentIntents\.create at src\/payments\.ts:\d+ would be step 0 of this action's claim and step 1 of createOrder's/));
    expect(generic(result)).toEqual([]);
    expect(result.changes.map((c) => c.path)).not.toContain('src/payments.ts');
  });

  it('a service called in a loop: every iteration would send the same key', async () => {
    copy = await copyFixture('express-service');
    await edit('src/routes/orders.ts', (text) => text.replace('    const paymentIntent = await chargeOrder(price * quantity);', '    let paymentIntent = \'\';\n    for (let i = 0; i < quantity; i++) paymentIntent = await chargeOrder(price);'));
    const result = await apply();
    expect(reasons(result)).toContainEqual(expect.stringMatching(/^not keyed because the call at src\/routes\/orders\.ts:\d+ runs in a loop or a callback/));
    expect(generic(result)).toEqual([]);
    expect(result.changes.map((c) => c.path)).not.toContain('src/payments.ts');
  });

  it('a service reached through an abstract class: a subclass may override the method', async () => {
    copy = await copyFixture('nestjs-service');
    await edit('src/stripe/stripe.service.ts', (text) => text.replace('@Injectable()\nexport class StripeService {', '@Injectable()\nexport abstract class StripeService {'));
    await edit('src/app.module.ts', (text) => text.replace('providers: [StripeService, SubscriptionsService]', 'providers: [SubscriptionsService]'));
    const result = await apply();
    expect(reasons(result)).toContainEqual(expect.stringContaining('not keyed because createSubscription belongs to an abstract class'));
    expect(generic(result)).toEqual([]);
    expect(result.changes.map((c) => c.path).filter((p) => p.includes('service'))).toEqual([]);
  });

  it('a service reached through an interface: nothing to follow, the step to key the call where it is made stays', async () => {
    copy = await copyFixture('nestjs-service');
    await edit('src/subscriptions/subscriptions.service.ts', (text) =>
      text
        .replace("import { StripeService } from '../stripe/stripe.service.js';", "import type { SubscriptionPayload } from '../stripe/stripe.service.js';\n\nexport interface Billing {\n  createSubscription(payload: SubscriptionPayload): Promise<unknown>;\n}")
        .replace('private readonly stripeService: StripeService', "@Inject('Billing') private readonly stripeService: Billing")
        .replace("import { Injectable } from '@nestjs/common';", "import { Inject, Injectable } from '@nestjs/common';"),
    );
    const result = await apply();
    // Nothing followed, so no step of the thread pass names the call: the generic one stays, once.
    expect(generic(result)).toEqual([expect.stringContaining('the Stripe call is not made inside the route handler: read idempotencyOf() where it is made')]);
    expect(result.changes.map((c) => c.path).filter((p) => p.includes('service'))).toEqual([]);
  });

  /** express-service with a second protected route, POST /charges (the handler at line 35), whose body is `body`. */
  const withCharges = async (body: string) => {
    copy = await copyFixture('express-service', (text) => {
      const config = JSON.parse(text) as { actions: Array<Record<string, unknown>> };
      return JSON.stringify({ ...config, actions: [...config.actions, { ...config.actions[0], name: 'chargeAgain', route: 'POST /charges', source: 'src/routes/orders.ts:35' }] }, null, 2);
    });
    await edit('src/routes/orders.ts', (text) => `${text}\nordersRouter.post('/charges', async (req, res) => {\n${body}\n});\n`);
  };
  const KEYED_CHARGE = '}, idempotencyContext ? stripeRequestOptions(idempotencyContext) : undefined);';

  it('a route protected after an earlier apply keyed the service it calls for another: its claim goes to the parameter there, the service is left as it is', async () => {
    await withCharges('  res.status(201).json({ charge: await chargeOrder(500) });');
    const first = await apply('createOrder');
    const payments = first.changes.find((c) => c.path === 'src/payments.ts')?.after ?? '';
    expect(payments).toContain(KEYED_CHARGE);
    expect(reasons(first)).toContainEqual(expect.stringMatching(/^chargeOrder is also called at src\/jobs\/retryDeclined\.ts:5, src\/routes\/orders\.ts:\d+ without a context/));
    const result = await apply();
    expect(result.changes.map((c) => c.path)).toEqual(['src/routes/orders.ts']);
    const route = result.changes[0]!.after;
    expect(route).toContain("ordersRouter.post('/charges', idempotency.chargeAgain, async (req, res) => {\n  const idempotencyContext = idempotencyOf(req);");
    expect(route).toContain('charge: await chargeOrder(500, undefined, idempotencyContext)');
    expect(route).toContain('const paymentIntent = await chargeOrder(price * quantity, undefined, idempotencyContext);');
    expect(await readFile(path.join(copy!.dir, 'src/payments.ts'), 'utf8')).toBe(payments);
    expect(summaries(result)).toContainEqual('threads the claim of POST /charges down to chargeOrder (src/payments.ts): the idempotencyContext parameter it takes already, passed by each caller');
    expect(generic(result)).toEqual([]);
    // The order route passes its own claim: only the job is a caller without one, listed once, under the new action.
    expect(result.manual.filter((m) => m.reason.startsWith('chargeOrder is also called'))).toEqual([
      expect.objectContaining({ action: 'chargeAgain', reason: expect.stringMatching(/^chargeOrder is also called at src\/jobs\/retryDeclined\.ts:5 without a context/) as unknown }),
    ]);
    expect(await compile(copy!.dir)).toBe('');
    expect((await apply()).changes).toEqual([]);
  });

  it('two routes reaching a service keyed by hand already, in one run: each passes its own claim to the parameter there', async () => {
    await withCharges('  res.status(201).json({ charge: await chargeOrder(500) });');
    await edit('src/payments.ts', (text) =>
      `import { stripeRequestOptions, type ProviderKeySource } from './idempotency/providers.js';\n${text.replace('customer?: string)', 'customer?: string, idempotencyContext?: ProviderKeySource)').replace(' : {}) });', ` : {}) ${KEYED_CHARGE}`)}`,
    );
    const payments = await readFile(path.join(copy!.dir, 'src/payments.ts'), 'utf8');
    const result = await apply();
    expect(result.changes.map((c) => c.path)).not.toContain('src/payments.ts');
    const route = result.changes.find((c) => c.path === 'src/routes/orders.ts')?.after ?? '';
    expect(route).toContain('const paymentIntent = await chargeOrder(price * quantity, undefined, idempotencyContext);');
    expect(route).toContain('charge: await chargeOrder(500, undefined, idempotencyContext)');
    expect(generic(result)).toEqual([]);
    expect(reasons(result).filter((r) => r.startsWith('not keyed'))).toEqual([]);
    expect(await compile(copy!.dir)).toBe('');
    expect((await apply()).changes).toEqual([]);
    expect(await readFile(path.join(copy!.dir, 'src/payments.ts'), 'utf8')).toBe(payments);
  });

  it('a route reaching the keyed call as its second Stripe place (--action): the step written there is another number, so one step says why', async () => {
    await withCharges('  await holdDeposit(500);\n  res.status(201).json({ charge: await chargeOrder(500) });');
    await edit('src/payments.ts', (text) => `${text}\nexport async function holdDeposit(amountCents: number): Promise<string> {\n  const intent = await stripe.paymentIntents.create({ amount: amountCents, currency: 'eur', capture_method: 'manual' });\n  return intent.id;\n}\n`);
    await edit('src/routes/orders.ts', (text) => text.replace("import { chargeOrder } from '../payments.js';", "import { chargeOrder, holdDeposit } from '../payments.js';"));
    await apply('createOrder');
    const payments = await readFile(path.join(copy!.dir, 'src/payments.ts'), 'utf8');
    const result = await apply('chargeAgain');
    expect(result.manual.filter((m) => m.action === 'chargeAgain' && (m.reason.startsWith('not keyed') || generic(result).includes(m.reason)))).toEqual([
      expect.objectContaining({
        file: 'src/payments.ts',
        reason: expect.stringMatching(/^not keyed because stripe\.paymentIntents\.create at src\/payments\.ts:\d+ is keyed from the claim already as step 0 \(another action's numbering, or by hand\), and this action reaches it as step 1, and a call site can hold one number/) as unknown,
      }),
    ]);
    expect(result.changes.map((c) => c.path)).toEqual(['src/routes/orders.ts']);
    expect(result.changes[0]!.after).toContain('charge: await chargeOrder(500) }');
    expect(result.changes[0]!.after).toContain('  await holdDeposit(500);\n');
    expect(await readFile(path.join(copy!.dir, 'src/payments.ts'), 'utf8')).toBe(payments);
  });

  it('NestJS: a controller method protected after an earlier apply keyed the service for another is keyed by it already: only the method is marked', async () => {
    copy = await copyFixture('nestjs-service', (text) => {
      const config = JSON.parse(text) as { actions: Array<Record<string, unknown>> };
      return JSON.stringify({ ...config, actions: [...config.actions, { ...config.actions[0], name: 'subscribeYearly', route: 'POST /subscriptions/yearly', source: 'src/subscriptions/subscriptions.controller.ts:29' }] }, null, 2);
    });
    await edit('src/subscriptions/subscriptions.service.ts', (text) => text.replace('\n  }\n}\n', "\n  }\n\n  async subscribeYearly(customerId: string) {\n    return this.stripeService.createSubscription({ customerId, priceId: 'price_yearly' });\n  }\n}\n"));
    await edit('src/subscriptions/subscriptions.controller.ts', (text) => text.replace('\n  }\n}\n', "\n  }\n\n  @Post('yearly')\n  @HttpCode(201)\n  async subscribeYearly(@Body() body: SubscribeBody) {\n    return this.subscriptions.subscribeYearly(body.customerId);\n  }\n}\n"));
    await apply('subscribeMonthly');
    const stripeService = await readFile(path.join(copy.dir, 'src/stripe/stripe.service.ts'), 'utf8');
    expect(stripeService).toContain('const idempotencyContext = idempotencyOf();');
    expect(stripeService).toContain('idempotencyContext ? stripeRequestOptions(idempotencyContext) : undefined');
    const service = await readFile(path.join(copy.dir, 'src/subscriptions/subscriptions.service.ts'), 'utf8');
    const result = await apply();
    // The yearly route's claim reaches the call through the interceptor: its own action sends its own derived key.
    expect(result.changes.map((c) => c.path)).toEqual(['src/subscriptions/subscriptions.controller.ts']);
    expect(result.changes[0]!.after).toContain('  @Idempotent(ACTIONS.subscribeYearly)\n  @HttpCode(201)\n  async subscribeYearly(@Body() body: SubscribeBody) {\n    return this.subscriptions.subscribeYearly(body.customerId);');
    expect(generic(result)).toEqual([]);
    expect(await readFile(path.join(copy.dir, 'src/stripe/stripe.service.ts'), 'utf8')).toBe(stripeService);
    expect(await readFile(path.join(copy.dir, 'src/subscriptions/subscriptions.service.ts'), 'utf8')).toBe(service);
    expect(await compile(copy.dir)).toBe('');
    expect((await apply()).changes).toEqual([]);
  });

  it('NestJS: a service a second protected route reaches beside a Stripe call of its own is not keyed from idempotencyOf(): that route\u2019s claim would give both calls one key', async () => {
    copy = await copyFixture('nestjs-service', (text) => {
      const config = JSON.parse(text) as { actions: Array<Record<string, unknown>> };
      return JSON.stringify({ ...config, actions: [...config.actions, { ...config.actions[0], name: 'subscribeWithSetup', route: 'POST /subscriptions/monthly/setup', source: 'src/subscriptions/subscriptions.controller.ts:29' }] }, null, 2);
    });
    await edit('src/subscriptions/subscriptions.controller.ts', (text) =>
      text
        .replace("import { AuthGuard } from '../auth.guard.js';", "import Stripe from 'stripe'; import { AuthGuard } from '../auth.guard.js';")
        .replace('\n  }\n}\n', "\n  }\n\n  @Post('monthly/setup')\n  @HttpCode(201)\n  async subscribeWithSetup(@Body() body: SubscribeBody) {\n    await new Stripe('sk_test_placeholder').paymentIntents.create({ amount: 500, currency: 'eur', customer: body.customerId });\n    return this.subscriptions.subscribeMonthly(body.customerId);\n  }\n}\n"),
    );
    const stripeService = await readFile(path.join(copy.dir, 'src/stripe/stripe.service.ts'), 'utf8');
    const result = await apply();
    expect(reasons(result)).toContainEqual(expect.stringContaining('the handler reaches provider calls in more than one place'));
    expect(reasons(result)).toContainEqual(expect.stringMatching(/^not keyed because stripe\.subscriptions\.create at src\/stripe\/stripe\.service\.ts:\d+ is also reached by subscribeWithSetup, which stays manual/));
    expect(result.changes.map((c) => c.path).filter((p) => p.includes('stripe.service'))).toEqual([]);
    expect(await readFile(path.join(copy.dir, 'src/stripe/stripe.service.ts'), 'utf8')).toBe(stripeService);
  });

  it('a handler with a Stripe call of its own besides the services it reaches: the services\' calls are numbered after its own (stripe-samples/accept-a-payment calculate_tax)', async () => {
    copy = await copyFixture('express-service-two-places');
    await edit('src/routes/orders.ts', (text) =>
      text
        .replace("import { chargeOrder } from '../payments.js';", "import { chargeOrder } from '../payments.js'; import { stripe } from '../stripe.js';")
        .replace('    const deposit = await holdDeposit(DEPOSIT_CENTS);', "    const customer = await stripe.customers.create({ metadata: { sku } });\n    const deposit = await holdDeposit(DEPOSIT_CENTS);")
        .replace('await chargeOrder(price * quantity);', 'await chargeOrder(price * quantity, customer.id);'),
    );
    const result = await apply();
    expect(reasons(result).filter((r) => r.includes('more than one place'))).toEqual([]);
    const route = await readFile(path.join(copy.dir, 'src/routes/orders.ts'), 'utf8');
    // The handler's own call: the only one in it, so no step (the key of step 0).
    expect(route).toContain('await stripe.customers.create({ metadata: { sku } }, stripeRequestOptions(idempotencyContext));');
    expect(await readFile(path.join(copy.dir, 'src/deposits.ts'), 'utf8')).toContain('idempotencyContext ? stripeRequestOptions(idempotencyContext, 1) : undefined');
    expect(await readFile(path.join(copy.dir, 'src/payments.ts'), 'utf8')).toContain('idempotencyContext ? stripeRequestOptions(idempotencyContext, 2) : undefined');
    expect(await compile(copy.dir)).toBe('');
    expect((await apply()).changes).toEqual([]);
  });

  it('a handler passed by name is followed to its file, and keyed from its own request parameter', async () => {
    copy = await copyFixture('express-service');
    const handler = (await readFile(path.join(copy.dir, 'src/routes/orders.ts'), 'utf8'))
      .replace("import { Router } from 'express';", "import type { NextFunction, Request, Response } from 'express';")
      .replace('export const ordersRouter = Router();\n', '')
      .replace("ordersRouter.post('/orders', async (req, res, next) => {", 'export async function createOrder(req: Request, res: Response, next: NextFunction) {')
      .replace(/\n\}\);\n$/, '\n}\n');
    await writeFile(path.join(copy.dir, 'src/createOrder.ts'), handler.replace(/'\.\.\//g, "'./"));
    // Line 15 is still the registration the config points at.
    await writeFile(path.join(copy.dir, 'src/routes/orders.ts'), `import { Router } from 'express';\nimport { createOrder } from '../createOrder.js';\n\nexport const ordersRouter = Router();\n${'\n'.repeat(10)}ordersRouter.post('/orders', createOrder);\n`);
    const result = await apply();
    expect(result.stale).toEqual([]);
    const followed = await readFile(path.join(copy.dir, 'src/createOrder.ts'), 'utf8');
    expect(followed).toContain('    const idempotencyContext = idempotencyOf(req);');
    expect(followed).toContain('await chargeOrder(price * quantity, undefined, idempotencyContext);');
    expect(await readFile(path.join(copy.dir, 'src/payments.ts'), 'utf8')).toContain('idempotencyContext ? stripeRequestOptions(idempotencyContext) : undefined');
    expect(await compile(copy.dir)).toBe('');
    const again = await apply();
    expect(again.changes).toEqual([]);
  });

  it('a service two actions number alike (no step and step 0 make one key): keyed once, with the number written', async () => {
    copy = await copyFixture('express-service', (text) => {
      const config = JSON.parse(text) as { actions: Array<Record<string, unknown>> };
      return JSON.stringify({ ...config, actions: [...config.actions, { ...config.actions[0], name: 'chargeAgain', route: 'POST /charges', source: 'src/routes/orders.ts:35' }] }, null, 2);
    });
    await edit('src/payments.ts', (text) => `${text}\nexport async function holdDeposit(amountCents: number): Promise<string> {\n  const intent = await stripe.paymentIntents.create({ amount: amountCents, currency: 'eur', capture_method: 'manual' });\n  return intent.id;\n}\n`);
    await edit('src/routes/orders.ts', (text) =>
      `${text.replace("import { chargeOrder } from '../payments.js';", "import { chargeOrder, holdDeposit } from '../payments.js';").replace('    const paymentIntent = await chargeOrder(price * quantity);', '    const paymentIntent = await chargeOrder(price * quantity);\n    await holdDeposit(500);')}\nordersRouter.post('/charges', async (req, res) => {\n  res.status(201).json({ charge: await chargeOrder(500) });\n});\n`,
    );
    const result = await apply();
    expect(reasons(result).filter((r) => r.includes('step') || r.startsWith('chargeOrder is also called at src/routes'))).toEqual([]);
    const payments = result.changes.find((c) => c.path === 'src/payments.ts')?.after ?? '';
    expect(payments).toContain('...(customer ? { customer } : {}) }, idempotencyContext ? stripeRequestOptions(idempotencyContext, 0) : undefined);');
    expect(payments).toContain("capture_method: 'manual' }, idempotencyContext ? stripeRequestOptions(idempotencyContext, 1) : undefined);");
    expect(payments.match(/stripeRequestOptions\(idempotencyContext/g)).toHaveLength(2);
    const route = result.changes.find((c) => c.path === 'src/routes/orders.ts')?.after ?? '';
    expect(route).toContain('charge: await chargeOrder(500, undefined, idempotencyContext)');
    expect(route).toContain('await holdDeposit(500, idempotencyContext);');
    expect(await compile(copy.dir)).toBe('');
    expect((await apply()).changes).toEqual([]);
  });

  it('a handler reaching Adyen and PayPal in two places: each provider numbers its own steps, so both go step-less', async () => {
    copy = await copyFixture('express-service-providers');
    await edit('src/routes/checkout.ts', (text) => text.replace('    const psp = await payByCard(amountMinor, orderId);', '    const psp = await payByCard(amountMinor, orderId);\n    await openPaypalOrder((amountMinor / 100).toFixed(2));'));
    const result = await apply();
    expect(reasons(result).filter((r) => r.includes('more than one') || r.includes('step'))).toEqual([]);
    // Each route calls openPaypalOrder with its own claim: neither call is listed as one left without a context.
    expect(reasons(result).filter((r) => r.startsWith('openPaypalOrder is also called'))).toEqual([]);
    expect(reasons(result)).toContainEqual(expect.stringContaining('payByCard is also called at src/retryCard.ts:5 without a context'));
    const service = result.changes.find((c) => c.path === 'src/services/payments.ts')?.after ?? '';
    // One call per provider: no step (the same key as step 0), which also agrees with the PayPal route keying openPaypalOrder.
    expect(service).toContain('idempotencyContext ? { idempotencyKey: adyenIdempotency(idempotencyContext).idempotencyKey } : undefined');
    expect(service).toContain("...(idempotencyContext ? { 'PayPal-Request-Id': paypalRequestId(idempotencyContext) } : {})");
    expect(service.match(/paypalRequestId\(idempotencyContext/g)).toHaveLength(1);
    const route = result.changes.find((c) => c.path === 'src/routes/checkout.ts')?.after ?? '';
    expect(route).toContain('const psp = await payByCard(amountMinor, orderId, idempotencyContext);\n    await openPaypalOrder((amountMinor / 100).toFixed(2), idempotencyContext);');
    expect(summaries(result).filter((e) => e.startsWith('passes the derived'))).toEqual([
      expect.stringMatching(/^passes the derived Adyen idempotency key to payments \(line \d+\) when given a context/),
      expect.stringMatching(/^passes the derived PayPal idempotency key as the PayPal-Request-Id header of paypal v2\/checkout\/orders \(line \d+\) when given a context/),
      expect.stringMatching(/^passes the derived PayPal idempotency key as the PayPal-Request-Id header/),
    ]);
    expect(await compile(copy.dir)).toBe('');
    expect((await apply()).changes).toEqual([]);
  });

  it('a handler reaching Adyen in two services and PayPal in one: Adyen steps 0 and 1, PayPal none', async () => {
    copy = await copyFixture('express-service-providers', (text) => {
      const config = JSON.parse(text) as { actions: Array<{ name: string }> };
      return JSON.stringify({ ...config, actions: config.actions.filter((a) => a.name === 'payByCard') }, null, 2);
    });
    await edit('src/services/payments.ts', (text) =>
      text.replace(
        '/** Wallet payments',
        "/** A zero-value card check before the payment. */\nexport async function verifyCard(reference: string): Promise<void> {\n  await checkout.PaymentsApi.payments({ amount: { currency: 'EUR', value: 0 }, reference: `${reference}-verify`, merchantAccount: 'ShopECOM', paymentMethod: { type: Types.checkout.CardDetails.TypeEnum.Scheme }, returnUrl: 'https://shop.example/checkout/return' });\n}\n\n/** Wallet payments",
      ),
    );
    await edit('src/routes/checkout.ts', (text) =>
      text
        .replace('import { openPaypalOrder, payByCard }', 'import { openPaypalOrder, payByCard, verifyCard }')
        .replace('    const psp = await payByCard(amountMinor, orderId);', '    await openPaypalOrder((amountMinor / 100).toFixed(2));\n    await verifyCard(orderId);\n    const psp = await payByCard(amountMinor, orderId);'),
    );
    const result = await apply();
    const service = result.changes.find((c) => c.path === 'src/services/payments.ts')?.after ?? '';
    expect(service).toContain("returnUrl: 'https://shop.example/checkout/return' }, idempotencyContext ? { idempotencyKey: adyenIdempotency(idempotencyContext, 0).idempotencyKey } : undefined);");
    expect(service).toContain("    returnUrl: 'https://shop.example/checkout/return',\n  }, idempotencyContext ? { idempotencyKey: adyenIdempotency(idempotencyContext, 1).idempotencyKey } : undefined);");
    expect(service).toContain('paypalRequestId(idempotencyContext)');
    expect(await compile(copy.dir)).toBe('');
    expect((await apply()).changes).toEqual([]);
  });

  it('one service function calling Adyen twice: each call gets its own step of the claim', async () => {
    copy = await copyFixture('express-service-providers');
    await edit('src/services/payments.ts', (text) =>
      text.replace('  return result.pspReference ?? \'\';', "  await checkout.PaymentsApi.payments({ amount: { currency: 'EUR', value: 0 }, reference: `${reference}-verify`, merchantAccount: 'ShopECOM', paymentMethod: { type: Types.checkout.CardDetails.TypeEnum.Scheme }, returnUrl: 'https://shop.example/checkout/return' });\n  return result.pspReference ?? '';"),
    );
    const result = await apply();
    const service = result.changes.find((c) => c.path === 'src/services/payments.ts')?.after ?? '';
    expect(service).toContain('adyenIdempotency(idempotencyContext, 0).idempotencyKey');
    expect(service).toContain('adyenIdempotency(idempotencyContext, 1).idempotencyKey');
    expect(await compile(copy.dir)).toBe('');
  });

  it('an Adyen call in a loop of the service: the step says Adyen would see one key with other parameters', async () => {
    copy = await copyFixture('express-service-providers');
    await edit('src/services/payments.ts', (text) => text.replace('  const result = await checkout.PaymentsApi.payments({', '  let result = { pspReference: \'\' as string | undefined };\n  for (const value of [amountMinor]) result = await checkout.PaymentsApi.payments({').replace('    amount: { currency: \'EUR\', value: amountMinor },', '    amount: { currency: \'EUR\', value },'));
    const result = await apply();
    expect(reasons(result)).toContainEqual(expect.stringMatching(/^not keyed because the call at src\/services\/payments\.ts:\d+ runs in a loop or a callback: every run would send Adyen the same key with other parameters, which it refuses\. Key each run with its own step, adyenIdempotency\(context, n\)/));
    expect(result.changes.find((c) => c.path === 'src/services/payments.ts')?.after ?? '').not.toContain('adyenIdempotency');
  });

  it('a provider providers.ts has no helper for: the step says which provider to add to payments', async () => {
    copy = await copyFixture('express-service-providers', (text) => {
      const config = JSON.parse(text) as { actions: Array<{ name: string }>; payments: string[] };
      return JSON.stringify({ ...config, actions: config.actions.filter((a) => a.name === 'payByCard'), payments: ['adyen'] }, null, 2);
    });
    await edit('src/routes/checkout.ts', (text) => text.replace('    const psp = await payByCard(amountMinor, orderId);', '    const psp = await openPaypalOrder(String(amountMinor));'));
    const result = await apply();
    expect(reasons(result)).toContainEqual(expect.stringContaining('not keyed because providers.ts has no paypalRequestId for PayPal: add "paypal" to payments in the config, regenerate, then apply'));
    expect(result.changes.map((c) => c.path)).not.toContain('src/services/payments.ts');
  });

  // The Stripe call of express-service's payments.ts, inside a callback of the given shape.
  const CHARGE = "  const intent = await stripe.paymentIntents.create({ amount: amountCents, currency: 'eur', ...(customer ? { customer } : {}) });\n  return intent.id;";
  const inCallback = (open: string, close: string, body = CHARGE.replace(/\n {2}/g, '\n    ').replace(/^ {2}/, '    ')) => (text: string) => text.replace(CHARGE, `  return ${open}\n${body}\n  ${close};`);

  it.each([
    ['a knex / objection transaction', 'knex.transaction(async (trx) => {', '})'],
    ['a Prisma interactive transaction', 'prisma.$transaction(async (tx) => {', '}, { timeout: 10_000 })'],
    ['a TypeORM transaction with an isolation level', "dataSource.manager.transaction('SERIALIZABLE', async (manager) => {", '})'],
    ['a Sequelize managed transaction with options', "sequelize.transaction({ isolationLevel: 'SERIALIZABLE' }, async (t) => {", '})'],
    ['a Drizzle transaction', 'database.transaction(async (tx) => {', "}, { isolationLevel: 'serializable' })"],
  ])('a call in %s callback runs once per call: keyed', async (_shape, open, close) => {
    copy = await copyFixture('express-service');
    await edit('src/payments.ts', inCallback(open, close));
    const result = await apply();
    expect(reasons(result).filter((r) => r.includes('runs in'))).toEqual([]);
    const payments = result.changes.find((c) => c.path === 'src/payments.ts')?.after ?? '';
    expect(payments).toContain(open);
    expect(payments).toContain('idempotencyContext ? stripeRequestOptions(idempotencyContext) : undefined');
  });

  it('a call in a new Promise executor runs once per call: keyed', async () => {
    copy = await copyFixture('express-service');
    await edit('src/payments.ts', inCallback('new Promise<string>((resolve, reject) => {', '})', "    stripe.paymentIntents.create({ amount: amountCents, currency: 'eur', ...(customer ? { customer } : {}) }).then((intent) => resolve(intent.id), reject);"));
    const result = await apply();
    expect(result.changes.find((c) => c.path === 'src/payments.ts')?.after ?? '').toContain('idempotencyContext ? stripeRequestOptions(idempotencyContext) : undefined');
  });

  it('a service called inside a transaction of the handler: the hop runs once too', async () => {
    copy = await copyFixture('express-service');
    await edit('src/routes/orders.ts', (text) => text.replace('    const paymentIntent = await chargeOrder(price * quantity);', '    const paymentIntent = await knex.transaction(async (trx) => chargeOrder(price * quantity));'));
    const result = await apply();
    expect(result.changes.find((c) => c.path === 'src/routes/orders.ts')?.after ?? '').toContain('knex.transaction(async (trx) => chargeOrder(price * quantity, undefined, idempotencyContext))');
    expect(result.changes.find((c) => c.path === 'src/payments.ts')?.after ?? '').toContain('stripeRequestOptions(idempotencyContext)');
  });

  it.each([
    ['MongoDB withTransaction retries its callback', 'session.withTransaction(async () => {', undefined, /runs in a withTransaction callback, which the MongoDB driver runs again after a transient transaction error: every run would send Stripe the same key/],
    ['Mongoose transaction() wraps withTransaction', 'connection.transaction(async (session) => {', 'mongoose', /runs in a transaction callback, and in this Mongoose project transaction\(\) wraps MongoDB's withTransaction/],
    ['a callback of map may run many times', 'Promise.all([amountCents].map(async (amount) => {', undefined, /runs in a loop or a callback: every run would send Stripe the same key/],
  ])('refused: %s', async (_shape, open, dependency, reason) => {
    copy = await copyFixture('express-service');
    await edit('src/payments.ts', inCallback(open, open.startsWith('Promise.all') ? '})).then((ids) => ids[0]!)' : '})'));
    if (dependency) await edit('package.json', (text) => JSON.stringify({ ...(JSON.parse(text) as object), dependencies: { [dependency]: '^8.0.0' } }, null, 2));
    const result = await apply();
    expect(reasons(result)).toContainEqual(expect.stringMatching(reason));
    expect(result.changes.map((c) => c.path)).not.toContain('src/payments.ts');
  });

  // The shapes of stripe-commercetools-connect-app's services: a key the service sends already, but made anew on each call.
  const perCall = (options: string, before = '') => (text: string) =>
    `import crypto, { randomUUID } from 'node:crypto';\n${text.replace("import { stripe } from './stripe.js';\n", "import { stripe } from './stripe.js';\n").replace(CHARGE, `${before}${CHARGE.replace(' });', ` }, ${options});`)}`)}`;

  it('a per-call key made inline (crypto.randomUUID()): the derived key when given a context, the old value otherwise', async () => {
    copy = await copyFixture('express-service');
    await edit('src/payments.ts', perCall('{ idempotencyKey: crypto.randomUUID() }'));
    const result = await apply();
    const payments = result.changes.find((c) => c.path === 'src/payments.ts')?.after ?? '';
    expect(payments).toContain('{ idempotencyKey: idempotencyContext ? stripeRequestOptions(idempotencyContext).idempotencyKey : crypto.randomUUID() }');
    expect(payments).toContain('customer?: string, idempotencyContext?: ProviderKeySource)');
    expect(reasons(result)).toContainEqual(expect.stringContaining('chargeOrder is also called at src/jobs/retryDeclined.ts:5 without a context: those calls still send Stripe the key they made anew on each call before'));
    expect(summaries(result)).toContainEqual(expect.stringMatching(/^replaces the per-call key of stripe\.paymentIntents\.create with the derived key when given a context \(line \d+\)/));
    expect(await compile(copy.dir)).toBe('');
    expect((await apply()).changes).toEqual([]);
  });

  it("a shorthand key bound to a local with the caller's key first: only the random fallback is guarded", async () => {
    copy = await copyFixture('express-service');
    await edit('src/payments.ts', (text) =>
      perCall('{ idempotencyKey }', '  const idempotencyKey = options?.idempotencyKey || randomUUID();\n')(text).replace('customer?: string)', 'customer?: string, options?: { idempotencyKey?: string })'),
    );
    const result = await apply();
    const payments = result.changes.find((c) => c.path === 'src/payments.ts')?.after ?? '';
    expect(payments).toContain('const idempotencyKey = options?.idempotencyKey || (idempotencyContext ? stripeRequestOptions(idempotencyContext).idempotencyKey : randomUUID());');
    expect(payments).toContain('}, { idempotencyKey });');
    expect(result.changes.find((c) => c.path === 'src/routes/orders.ts')?.after ?? '').toContain('chargeOrder(price * quantity, undefined, undefined, idempotencyContext)');
    expect(await compile(copy.dir)).toBe('');
    expect((await apply()).changes).toEqual([]);
  });

  it('a per-call key in a local that also feeds something else: left manual with the reason', async () => {
    copy = await copyFixture('express-service');
    await edit('src/payments.ts', perCall('{ idempotencyKey: requestId }', "  const requestId = randomUUID();\n  console.info('charging', requestId);\n"));
    const result = await apply();
    expect(reasons(result)).toContainEqual(expect.stringMatching(/^not keyed because stripe\.paymentIntents\.create sends a key that is new on every call, and its key `requestId` \(`randomUUID\(\)`\) also feeds 1 other place in the function/));
    expect(result.changes.map((c) => c.path)).not.toContain('src/payments.ts');
  });

  it('the refusal rules hold for a per-call key: a service called in a loop', async () => {
    copy = await copyFixture('express-service');
    await edit('src/payments.ts', perCall('{ idempotencyKey: randomUUID() }'));
    await edit('src/routes/orders.ts', (text) => text.replace('    const paymentIntent = await chargeOrder(price * quantity);', "    let paymentIntent = '';\n    for (let i = 0; i < quantity; i++) paymentIntent = await chargeOrder(price);"));
    const result = await apply();
    expect(reasons(result)).toContainEqual(expect.stringMatching(/^not keyed because the call at src\/routes\/orders\.ts:\d+ runs in a loop or a callback/));
    expect(result.changes.map((c) => c.path)).not.toContain('src/payments.ts');
  });

  it('per-call keys of Adyen (request options) and PayPal over raw HTTP (PayPal-Request-Id header) are guarded the same way', async () => {
    copy = await copyFixture('express-service-providers');
    await edit('src/services/payments.ts', (text) =>
      `import { randomUUID } from 'node:crypto';\n${text}`
        .replace("    returnUrl: 'https://shop.example/checkout/return',\n  });", "    returnUrl: 'https://shop.example/checkout/return',\n  }, { idempotencyKey: `card-${Date.now()}` });")
        .replace("{ headers: { authorization:", "{ headers: { 'PayPal-Request-Id': randomUUID(), authorization:"),
    );
    const result = await apply();
    const service = result.changes.find((c) => c.path === 'src/services/payments.ts')?.after ?? '';
    expect(service).toContain('idempotencyKey: idempotencyContext ? adyenIdempotency(idempotencyContext).idempotencyKey : `card-${Date.now()}`');
    expect(service).toContain("'PayPal-Request-Id': idempotencyContext ? paypalRequestId(idempotencyContext) : randomUUID()");
    expect(summaries(result)).toContainEqual(expect.stringContaining('replaces the per-call key of Adyen payments with the derived key when given a context'));
    expect(summaries(result)).toContainEqual(expect.stringContaining('replaces the per-call key of the PayPal-Request-Id header of paypal v2/checkout/orders with the derived key when given a context'));
    expect(await compile(copy.dir)).toBe('');
    expect((await apply()).changes).toEqual([]);
  });

  it('a raw-HTTP call whose Headers object another call sends too is a step with that reason, not passed over', async () => {
    copy = await copyFixture('express-service-providers');
    await edit('src/services/payments.ts', (text) =>
      text.replace(
        / {2}const \{ data \} = await axios\.post<\{ id: string \}>\([\s\S]*?\n {2}\);\n/,
        `  const headers = new Headers({ authorization: 'Bearer t' });
  await fetch(\`\${PAYPAL_API}/v1/notifications/webhooks\`, { headers });
  const response = await fetch(\`\${PAYPAL_API}/v2/checkout/orders\`, { method: 'POST', headers, body: '{}' });
  const data = (await response.json()) as { id: string };
`,
      ),
    );
    // The card route also opens a PayPal order: its Adyen call is still keyed, the PayPal one is its own step.
    await edit('src/routes/checkout.ts', (text) => text.replace('    const psp = await payByCard(amountMinor, orderId);', "    const psp = await payByCard(amountMinor, orderId);\n    await openPaypalOrder('0.00');"));
    const result = await apply();
    expect(summaries(result)).toContainEqual(expect.stringContaining('passes the derived Adyen idempotency key to payments'));
    expect(result.manual.filter((m) => m.reason.startsWith('not keyed because apply cannot add')).map((m) => m.action).sort()).toEqual(['payByCard', 'payWithPaypal']);
    expect(result.manual).toContainEqual(expect.objectContaining({
      action: 'payWithPaypal',
      file: 'src/services/payments.ts',
      reason: 'not keyed because apply cannot add the PayPal-Request-Id header of paypal v2/checkout/orders: its headers `headers` are sent by another call too, which would then send the same key. Pass idempotencyOf(request) down and send the PayPal-Request-Id header set to paypalRequestId(context) from providers.ts by hand',
    }));
    expect(result.changes.find((c) => c.path === 'src/services/payments.ts')?.after ?? '').not.toContain('paypalRequestId');
    expect(await compile(copy.dir)).toBe('');
  });

  it('a raw-HTTP call sending a Headers object gets headers.set, only when given a context', async () => {
    copy = await copyFixture('express-service-providers');
    await edit('src/services/payments.ts', (text) =>
      text.replace(
        / {2}const \{ data \} = await axios\.post<\{ id: string \}>\([\s\S]*?\n {2}\);\n/,
        `  const headers = new Headers({ authorization: \`Bearer \${process.env['PAYPAL_ACCESS_TOKEN'] ?? ''}\` });
  headers.set('Content-Type', 'application/json');
  const response = await fetch(\`\${PAYPAL_API}/v2/checkout/orders\`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ intent: 'CAPTURE', purchase_units: [{ amount: { currency_code: 'EUR', value: amount } }] }),
  });
  const data = (await response.json()) as { id: string };
`,
      ),
    );
    const result = await apply();
    const service = result.changes.find((c) => c.path === 'src/services/payments.ts')?.after ?? '';
    expect(service).toContain("  headers.set('Content-Type', 'application/json');\n  if (idempotencyContext) headers.set('PayPal-Request-Id', paypalRequestId(idempotencyContext));\n  const response = await fetch(");
    expect(await compile(copy.dir)).toBe('');
    expect((await apply()).changes).toEqual([]);
  });
});

/** The calls openCalls takes in a service function of an inline file, with the part of a per-call key it would guard. */
function perCallParts(text: string): Array<{ operation: string; via: string; part?: string; refused?: string }> {
  const { sf } = parseSource('src/services/payments.ts', text);
  const source = { rel: 'src/services/payments.ts', text, sf, schema: readSchemaFacts(new Map()), dependencies: KEYED_SDKS };
  const fn = sf.statements.find((s): s is ts.FunctionDeclaration => ts.isFunctionDeclaration(s) && s.name?.text === 'pay')!;
  return openCalls(fn, source).map((c) => ({ operation: c.operation, via: c.how.via, ...(c.perCall ? { part: c.perCall.part.getText(sf), ...(c.perCall.refused ? { refused: c.perCall.refused } : {}) } : {}) }));
}

describe('which keys the thread pass takes as made anew on each call', () => {
  const stripeService = (call: string, before = '') => `import crypto, { randomUUID } from 'node:crypto';
import Stripe from 'stripe';
const stripeApi = () => new Stripe('sk_test');
export async function pay(id: string, options?: { idempotencyKey?: string }) {
${before}  return ${call};
}
`;

  it.each([
    ['an inline key on a client made by a function (stripeApi())', stripeService("stripeApi().paymentIntents.create({ amount: 100, currency: 'eur' }, { idempotencyKey: crypto.randomUUID() })"), 'crypto.randomUUID()'],
    ["the caller's key first: only the fallback", stripeService("stripeApi().subscriptions.update(id, { metadata: { id } }, { idempotencyKey: options?.idempotencyKey ?? randomUUID() })"), 'randomUUID()'],
    ['a shorthand key: the initializer of its local', stripeService("stripeApi().refunds.create({ payment_intent: id }, { idempotencyKey })", '  const idempotencyKey = `refund-${Date.now()}`;\n'), '`refund-${Date.now()}`'],
  ])('Stripe, %s', (_shape, text, part) => {
    expect(perCallParts(text)).toEqual([expect.objectContaining({ via: 'stripe', part })]);
  });

  it('unkeyed, with its parameters in a local (async-labs/saas@4b27b6a: `const params = { … }; …create(params)`): a candidate', () => {
    const text = stripeService('stripeApi().checkout.sessions.create(params)', "  const params: Stripe.Checkout.SessionCreateParams = { mode: 'payment', success_url: id };\n  params.metadata = { id };\n");
    expect(perCallParts(text)).toEqual([{ operation: 'checkout.sessions.create', via: 'stripe' }]);
  });

  it('a stable key, or one keyed from the context already, is no candidate', () => {
    expect(perCallParts(stripeService("stripeApi().refunds.create({ payment_intent: id }, { idempotencyKey: `refund:${id}` })"))).toEqual([]);
    expect(perCallParts(stripeService("stripeApi().refunds.create({ payment_intent: id }, { idempotencyKey: idempotencyContext ? stripeRequestOptions(idempotencyContext).idempotencyKey : randomUUID() })"))).toEqual([]);
  });

  it('a local key that also feeds a log line is refused with the reason', () => {
    const [call] = perCallParts(stripeService("stripeApi().refunds.create({ payment_intent: id }, { idempotencyKey: key })", "  const key = randomUUID();\n  console.info('refund', key);\n"));
    expect(call?.refused).toBe("its key `key` (`randomUUID()`) also feeds 1 other place in the function, which would change with it");
  });

  it("PayPal's server SDK: a paypalRequestId made anew on each call", () => {
    const text = `import { randomUUID } from 'node:crypto';
import { Client, OrdersController } from '@paypal/paypal-server-sdk';
const ordersController = new OrdersController(new Client({}));
export async function pay(id: string) {
  return ordersController.captureOrder({ id, paypalRequestId: randomUUID() });
}
`;
    expect(perCallParts(text)).toEqual([expect.objectContaining({ via: 'sdk', part: 'randomUUID()' })]);
  });

  it('raw HTTP through a Headers object: a key set anew on each call, a key set already, and no key', () => {
    const paypal = (headers: string) => `import { randomUUID } from 'node:crypto';
export async function pay(id: string) {
  const headers = new Headers({ Authorization: 'Bearer t' });
${headers}  return fetch(\`https://api-m.paypal.com/v2/checkout/orders/\${id}/capture\`, { method: 'POST', headers });
}
`;
    expect(perCallParts(paypal("  headers.set('PayPal-Request-Id', randomUUID());\n"))).toEqual([{ operation: 'v2/checkout/orders/{id}/capture', via: 'http', part: 'randomUUID()' }]);
    expect(perCallParts(paypal("  headers.append('PayPal-Request-Id', `capture-${id}`);\n"))).toEqual([]);
    expect(perCallParts(paypal(''))).toEqual([{ operation: 'v2/checkout/orders/{id}/capture', via: 'http' }]);
  });
});
