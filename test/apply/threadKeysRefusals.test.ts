import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { compile, copyFixture, type FixtureCopy } from './fixtureApp.js';

/**
 * Issue #19, the cases apply leaves manual: the service keeps its signature and the step says why. The fixtures of
 * injectedServiceKeys.test.ts, each changed the way a real codebase would make threading unsafe. No database needed.
 */
describe('apply leaves the key threading manual where a new parameter is not safe', { timeout: 300_000 }, () => {
  let copy: FixtureCopy | undefined;
  afterEach(async () => {
    await copy?.remove();
    copy = undefined;
  });

  const edit = async (file: string, change: (text: string) => string) => {
    const at = path.join(copy!.dir, file);
    await writeFile(at, change(await readFile(at, 'utf8')));
  };
  const apply = () => runApply({ cwd: copy!.dir, yes: true, quiet: true }, { interactive: false });
  const reasons = (result: Awaited<ReturnType<typeof apply>>) => result.manual.map((m) => m.reason);

  it('a function also passed as a value: a caller could put anything in the new parameter', async () => {
    copy = await copyFixture('express-service');
    await edit('src/jobs/retryDeclined.ts', (text) => `${text}\nexport const handlers = { charge: chargeOrder };\n`);
    const result = await apply();
    expect(reasons(result)).toContainEqual(expect.stringMatching(/^not keyed because chargeOrder is also used as a value at src\/jobs\/retryDeclined\.ts:\d+/));
    expect(result.changes.map((c) => c.path)).not.toContain('src/payments.ts');
    expect(await compile(copy.dir)).toBe('');
  });

  it('an overloaded function', async () => {
    copy = await copyFixture('express-service');
    await edit('src/payments.ts', (text) => text.replace('export async function chargeOrder', 'export function chargeOrder(amountCents: number): Promise<string>;\nexport function chargeOrder(amountCents: number, customer: string): Promise<string>;\nexport async function chargeOrder'));
    const result = await apply();
    expect(reasons(result)).toContainEqual(expect.stringContaining('not keyed because chargeOrder is overloaded'));
    expect(result.changes.map((c) => c.path)).not.toContain('src/payments.ts');
  });

  it('a handler that reaches Stripe in two places: one claim would give both the same key', async () => {
    copy = await copyFixture('express-service');
    await edit('src/routes/orders.ts', (text) => text.replace('    const paymentIntent = await chargeOrder(price * quantity);', '    const paymentIntent = await chargeOrder(price * quantity);\n    await chargeOrder(100);'));
    const result = await apply();
    expect(reasons(result)).toContainEqual(expect.stringContaining('the handler reaches provider calls in more than one place'));
    expect(result.changes.map((c) => c.path)).not.toContain('src/payments.ts');
  });

  it('a service reached through an abstract class: a subclass may override the method', async () => {
    copy = await copyFixture('nestjs-service');
    await edit('src/stripe/stripe.service.ts', (text) => text.replace('@Injectable()\nexport class StripeService {', '@Injectable()\nexport abstract class StripeService {'));
    await edit('src/app.module.ts', (text) => text.replace('providers: [StripeService, SubscriptionsService]', 'providers: [SubscriptionsService]'));
    const result = await apply();
    expect(reasons(result)).toContainEqual(expect.stringContaining('not keyed because createSubscription belongs to an abstract class'));
    expect(result.changes.map((c) => c.path).filter((p) => p.includes('service'))).toEqual([]);
  });

  it('a service reached through an interface: nothing to follow, the step to pass the claim stays', async () => {
    copy = await copyFixture('nestjs-service');
    await edit('src/subscriptions/subscriptions.service.ts', (text) =>
      text
        .replace("import { StripeService } from '../stripe/stripe.service.js';", "import type { SubscriptionPayload } from '../stripe/stripe.service.js';\n\nexport interface Billing {\n  createSubscription(payload: SubscriptionPayload): Promise<unknown>;\n}")
        .replace('private readonly stripeService: StripeService', "@Inject('Billing') private readonly stripeService: Billing")
        .replace("import { Injectable } from '@nestjs/common';", "import { Inject, Injectable } from '@nestjs/common';"),
    );
    const result = await apply();
    expect(reasons(result)).toContainEqual(expect.stringContaining('calls from a NestJS handler need the claim'));
    expect(result.changes.map((c) => c.path).filter((p) => p.includes('service'))).toEqual([]);
  });
});
