import { mkdir, readFile, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Express } from 'express';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APPLY_RECORD_PATH } from '../../src/apply/applyRecord.js';
import { runApply } from '../../src/cli/apply.js';
import { snapshotFile, snapshotOf } from '../../src/emit/protectionSnapshot.js';
import { auditProject } from '../../src/findings/auditProject.js';
import { postgresSkipReason } from '../scaffold/harness.js';
import { createAppSchema, fakeStripe, settled, type AppSchema } from './blackBox.js';
import { compile, copyFixture, snapshotTree, type FixtureCopy } from './fixtureApp.js';

const RULE = 'provider-call-without-key';
const HEX_KEY = /^[0-9a-f]{64}$/;

/** What `audit` reports for the rule, as `file:line`. */
async function unkeyed(dir: string): Promise<string[]> {
  const { findings } = await auditProject(dir);
  return findings.filter((f) => f.ruleId === RULE).map((f) => `${f.file}:${f.line}`).sort();
}

const skip = await postgresSkipReason();
if (skip) console.warn(`skipped the requests against PostgreSQL: ${skip}`);

/**
 * Issue #19 with two places: the order route holds a deposit (deposits.ts) and then charges the card (payments.ts),
 * both through Stripe. apply threads the claim down to both and keys each call with its own step (0 for the deposit
 * the handler reaches first, 1 for the charge), so the two calls never share a key and a retry sends each the same
 * key again.
 */
describe('apply keys a handler reaching Stripe in two services, each with its own step', { timeout: 300_000 }, () => {
  let copy: FixtureCopy;
  let schema: AppSchema | undefined;
  beforeAll(async () => {
    copy = await copyFixture('express-service-two-places');
    // What init records: the audit's findings in the snapshot apply reads, so apply lists (and re-runs) them.
    const audit = await auditProject(copy.dir);
    for (const file of snapshotFile(snapshotOf({ inspection: { findings: [] }, codeFindings: audit.findings, actionFacts: audit.actionFacts }))) {
      await mkdir(path.dirname(path.join(copy.dir, file.path)), { recursive: true });
      await writeFile(path.join(copy.dir, file.path), file.contents);
    }
  }, 120_000);
  afterAll(async () => {
    await schema?.drop();
    await copy?.remove();
  });

  it('keys the deposit with step 0 and the charge with step 1, lists neither call, type-checks, and changes nothing the second time', async () => {
    expect(await unkeyed(copy.dir)).toEqual(['src/deposits.ts:5', 'src/payments.ts:5']);
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(first.stale).toEqual([]);
    const deposits = await readFile(path.join(copy.dir, 'src/deposits.ts'), 'utf8');
    expect(deposits).toContain('export async function holdDeposit(amountCents: number, idempotencyContext?: ProviderKeySource): Promise<string> {');
    expect(deposits).toContain("capture_method: 'manual' }, idempotencyContext ? stripeRequestOptions(idempotencyContext, 0) : undefined);");
    const payments = await readFile(path.join(copy.dir, 'src/payments.ts'), 'utf8');
    expect(payments).toContain('idempotencyContext ? stripeRequestOptions(idempotencyContext, 1) : undefined);');
    const route = await readFile(path.join(copy.dir, 'src/routes/orders.ts'), 'utf8');
    expect(route).toContain('const deposit = await holdDeposit(DEPOSIT_CENTS, idempotencyContext);');
    expect(route).toContain('const paymentIntent = await chargeOrder(price * quantity, undefined, idempotencyContext);');
    // Both keyed calls leave the list (the rule re-run on each holder), and a new audit no longer reports them.
    expect(first.manual.filter((m) => m.reason.startsWith(`${RULE}:`))).toEqual([]);
    expect(first.manual.filter((m) => /more than one|not made inside the route handler/.test(m.reason))).toEqual([]);
    expect(await unkeyed(copy.dir)).toEqual([]);
    // The record the document reads: each place, each call with its step.
    const record = JSON.parse(await readFile(path.join(copy.dir, APPLY_RECORD_PATH), 'utf8')) as { actions: Array<{ action: string; applied: Array<{ file: string; summary: string }> }> };
    const applied = record.actions.find((a) => a.action === 'createOrder')?.applied ?? [];
    expect(applied.filter((a) => a.summary.startsWith('passes the derived')).map((a) => [a.file, a.summary.replace(/ when given.*$/, '')])).toEqual([
      ['src/deposits.ts', 'passes the derived Stripe idempotency key to stripe.paymentIntents.create (line 5, step 0)'],
      ['src/payments.ts', 'passes the derived Stripe idempotency key to stripe.paymentIntents.create (line 5, step 1)'],
    ]);
    expect(await compile(copy.dir)).toBe('');

    const tree = await snapshotTree(copy.dir);
    const again = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(again.changes).toEqual([]);
    expect(again.written).toBe(false);
    expect(again.manual).toEqual(first.manual);
    expect(await snapshotTree(copy.dir)).toEqual(tree);
  });

  it.skipIf(skip !== undefined)('sends the two calls two different keys, and the same two again when a failed request is retried with its key', async () => {
    // The orders table lacks the deposit column at first: the first request fails after both Stripe calls.
    schema = await createAppSchema('steps19_two_places', copy.migration, 'CREATE TABLE orders (id serial PRIMARY KEY, sku text NOT NULL, quantity int NOT NULL, payment_intent text NOT NULL)');
    const stripe = await fakeStripe();
    Object.assign(process.env, { DATABASE_URL: schema.url, STRIPE_API_BASE: stripe.base });
    const { createApp } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/app.js')).href)) as { createApp: () => Express };
    const { db } = (await import(pathToFileURL(path.join(copy.dir, 'dist/src/db.js')).href)) as { db: Pool };
    const server = createApp().listen(0);
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/orders`;
      const request = { key: 'order-steps-a', user: 'user-1', body: { sku: 'sku-mug', quantity: 1 } };
      const failed = await settled(url, request);
      expect(failed.status).toBe(500);
      expect(stripe.keys).toHaveLength(2);
      const [deposit, charge] = stripe.keys;
      expect(deposit).toMatch(HEX_KEY);
      expect(charge).toMatch(HEX_KEY);
      expect(charge).not.toBe(deposit);

      // The 500 released the claim: the retry runs the action again and Stripe sees the same two keys.
      await schema.pool.query('ALTER TABLE orders ADD COLUMN deposit text');
      const retried = await settled(url, request);
      expect(retried.status, retried.body).toBe(201);
      expect(stripe.keys).toEqual([deposit, charge, deposit, charge]);

      const other = await settled(url, { ...request, key: 'order-steps-b' });
      expect(other.status).toBe(201);
      expect(stripe.keys).toHaveLength(6);
      expect(new Set(stripe.keys).size).toBe(4);
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await db.end();
      await stripe.close();
    }
  });
});
