import Ajv from 'ajv';
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../e2e/cli.js';

/** A Next.js + Stripe app with one refund bug (error) and one webhook that answers 400 to unknown events (warning). */
const REFUND = `import Stripe from 'stripe';
const stripe = new Stripe(process.env.STRIPE_SECRET_KEY!);
export async function POST(req: Request) {
  const { orderId } = await req.json();
  const refund = await stripe.refunds.create({ payment_intent: await intentOf(orderId) });
  return Response.json(refund);
}
declare function intentOf(id: string): Promise<string>;
`;
const WEBHOOK = `import Stripe from 'stripe';
const stripe = new Stripe(process.env.STRIPE_SECRET_KEY!);
export async function POST(req: Request) {
  const event = stripe.webhooks.constructEvent(await req.text(), req.headers.get('stripe-signature')!, 'whsec');
  const fresh = await db.query('INSERT INTO stripe_events (id) VALUES ($1) ON CONFLICT DO NOTHING', [event.id]);
  if (!fresh.rowCount) return new Response('duplicate');
  switch (event.type) {
    case 'invoice.paid': break;
    default: return new Response('unsupported', { status: 400 });
  }
  return new Response('ok');
}
declare const db: any;
`;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ib-audit-'));
  await mkdir(path.join(dir, 'app/api/refund'), { recursive: true });
  await mkdir(path.join(dir, 'app/api/webhooks'), { recursive: true });
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'shop', dependencies: { next: '15.0.0', stripe: '17.0.0' } }));
  await writeFile(path.join(dir, 'app/api/refund/route.ts'), REFUND);
  await writeFile(path.join(dir, 'app/api/webhooks/route.ts'), WEBHOOK);
});

async function listing(root: string): Promise<string[]> {
  return (await readdir(root, { recursive: true })).sort();
}

describe('idempotency-builder audit', () => {
  it('reports findings with file:line, fix and rule, writes nothing, exits 1', async () => {
    const before = await listing(dir);
    const run = await runCli(['audit', dir]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('app/api/refund/route.ts:5:24  error  stripe refunds.create is called without an idempotencyKey');
    expect(run.stdout).toContain('app/api/webhooks/route.ts:9:');
    expect(run.stdout).toMatch(/fix: Pass `\{ idempotencyKey \}`/);
    expect(run.stderr).toMatch(/2 findings at or above warning/);
    expect(await listing(dir)).toEqual(before);
  });

  it('--severity error ignores the warning but still fails on the error; a fixed twin passes', async () => {
    expect((await runCli(['audit', dir, '--severity', 'error'])).code).toBe(1);
    await writeFile(path.join(dir, 'app/api/refund/route.ts'), REFUND.replace('await intentOf(orderId) }', 'await intentOf(orderId) }, { idempotencyKey: `refund:${orderId}` }'));
    const run = await runCli(['audit', dir, '--severity', 'error']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/1 finding \(0 error, 1 warning, 0 note\)/);
  });

  it('an inline suppression needs a reason', async () => {
    const noReason = REFUND.replace('  const refund', '  // idempotency-builder-ignore provider-call-without-key\n  const refund');
    await writeFile(path.join(dir, 'app/api/refund/route.ts'), noReason);
    expect((await runCli(['audit', dir, '--severity', 'error'])).code).toBe(1);
    const withReason = REFUND.replace('  const refund', '  // idempotency-builder-ignore provider-call-without-key: refunds go through the nightly reconciled batch\n  const refund');
    await writeFile(path.join(dir, 'app/api/refund/route.ts'), withReason);
    const run = await runCli(['audit', dir, '--severity', 'error', '--format', 'json']);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as { findings: Array<{ ruleId: string; suppressed?: { reason: string } }> };
    expect(report.findings.find((f) => f.ruleId === 'provider-call-without-key')?.suppressed?.reason).toBe('refunds go through the nightly reconciled batch');
  });

  it('a JSON report is a baseline: accepted findings pass, a new one fails alone', async () => {
    const first = await runCli(['audit', dir, '--format', 'json']);
    await mkdir(path.join(dir, '.idempotency-builder'));
    await writeFile(path.join(dir, '.idempotency-builder/audit-baseline.json'), first.stdout);
    // Lines move; the fingerprint does not depend on them.
    await writeFile(path.join(dir, 'app/api/refund/route.ts'), `// refunds\n\n${REFUND}`);
    expect((await runCli(['audit', dir])).code).toBe(0);
    await writeFile(path.join(dir, 'app/api/refund/route.ts'), REFUND.replace('  return Response.json(refund);', '  await stripe.payouts.create({ amount: 100, currency: "eur" });\n  return Response.json(refund);'));
    const run = await runCli(['audit', dir]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('payouts.create');
    expect(run.stdout).not.toContain('refunds.create is called');
    expect(run.stdout).toMatch(/2 accepted in the baseline/);
  });

  it('SARIF output validates against the SARIF 2.1.0 schema and carries locations, levels and rules', async () => {
    const run = await runCli(['audit', dir, '--format', 'sarif']);
    const log = JSON.parse(run.stdout) as { version: string; runs: Array<{ tool: { driver: { rules: Array<{ id: string }> } }; results: Array<{ ruleId: string; level: string; locations: Array<{ physicalLocation: { artifactLocation: { uri: string }; region: { startLine: number } } }> }> }> };
    const require = createRequire(import.meta.url);
    const schemaPath = path.join(path.dirname(require.resolve('@microsoft/jest-sarif/package.json')), 'lib/schemas/sarif-2.1.0-rtm.5.json');
    const schema = JSON.parse(await readFile(schemaPath, 'utf8')) as object;
    const ajv = new Ajv({ schemaId: 'auto', validateSchema: false, allErrors: true });
    const valid = ajv.validate(schema, log);
    expect(ajv.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
    const results = log.runs[0]?.results ?? [];
    expect(results.map((r) => [r.ruleId, r.level, r.locations[0]?.physicalLocation.artifactLocation.uri, r.locations[0]?.physicalLocation.region.startLine])).toEqual([
      ['provider-call-without-key', 'error', 'app/api/refund/route.ts', 5],
      ['webhook-rejects-unhandled-events', 'warning', 'app/api/webhooks/route.ts', 9],
    ]);
    expect(log.runs[0]?.tool.driver.rules.map((r) => r.id)).toContain('blind-event-upsert');
  });

  it('usage errors exit 2 with the fix', async () => {
    const missing = await runCli(['audit', path.join(dir, 'nope')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/is not a directory/);
    expect((await runCli(['audit', dir, '--format', 'xml'])).code).toBe(2);
    const baseline = await runCli(['audit', dir, '--baseline', 'missing.json']);
    expect(baseline.code).toBe(2);
    expect(baseline.stderr).toMatch(/audit --format json > missing\.json/);
  });
});
