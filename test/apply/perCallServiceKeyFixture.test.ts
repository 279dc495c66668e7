import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APPLY_RECORD_PATH } from '../../src/apply/applyRecord.js';
import { runApply } from '../../src/cli/apply.js';
import { snapshotFile, snapshotOf } from '../../src/emit/protectionSnapshot.js';
import { auditProject } from '../../src/findings/auditProject.js';
import { compile, copyFixture, type FixtureCopy } from './fixtureApp.js';

const SERVICE = 'src/payments.ts';
const RULE = 'per-attempt-provider-key';

/** What `inspect`/`audit` reports for the rule, as `file:line message`. */
async function perAttemptFindings(dir: string): Promise<string[]> {
  const { findings } = await auditProject(dir);
  return findings.filter((f) => f.ruleId === RULE).map((f) => `${f.file}:${f.line} ${f.message}`).sort();
}

/**
 * Issue #19 on a service shaped like stripe-commercetools-connect-app's: the Stripe call sends a key, but one made
 * anew on each call (`options?.idempotencyKey || randomUUID()`). apply threads the route's claim down and guards only
 * the random fallback; the service's other, unreached call keeps its key and its finding.
 */
describe('apply on a service whose Stripe key is new on every call', () => {
  let copy: FixtureCopy;
  let audit: Awaited<ReturnType<typeof auditProject>>;

  beforeAll(async () => {
    copy = await copyFixture('express-service-per-call-key');
    // What init records: the audit's findings in the snapshot apply reads.
    audit = await auditProject(copy.dir);
    for (const file of snapshotFile(snapshotOf({ inspection: { findings: [] }, codeFindings: audit.findings, actionFacts: audit.actionFacts }))) {
      await mkdir(path.dirname(path.join(copy.dir, file.path)), { recursive: true });
      await writeFile(path.join(copy.dir, file.path), file.contents);
    }
  }, 120_000);
  afterAll(async () => {
    await copy?.remove();
  });

  it('apply --yes guards the fallback with the derived key, compiles, the finding goes for that call only, and a second apply changes nothing', async () => {
    const before = await perAttemptFindings(copy.dir);
    expect(before).toEqual([
      expect.stringMatching(/^src\/payments\.ts:17 stripe paymentIntents\.create gets a key \(idempotencyKey\) from `idempotencyKey`/),
      expect.stringMatching(/^src\/payments\.ts:27 stripe subscriptions\.update gets a key \(idempotencyKey\) from `crypto\.randomUUID\(\)`/),
    ]);

    // The service call's finding belongs to the route's action (its span reaches chargeOrder): apply lists it while the rule sees it.
    const spans = audit.actionFacts.find((facts) => facts.action === 'createOrder')?.spans ?? [];
    expect(spans.some((span) => span.file === SERVICE && span.from <= 17 && span.to >= 17)).toBe(true);
    expect(spans.some((span) => span.file === SERVICE && span.from <= 27 && span.to >= 27)).toBe(false);

    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(first.written).toBe(true);
    const service = await readFile(path.join(copy.dir, SERVICE), 'utf8');
    // The caller's own key still comes first; a context-less caller (the nightly job) sends what it sent before.
    expect(service).toContain('const idempotencyKey = options?.idempotencyKey || (idempotencyContext ? stripeRequestOptions(idempotencyContext).idempotencyKey : randomUUID());');
    expect(service).toContain('options?: KeyOptions, idempotencyContext?: ProviderKeySource): Promise<string>');
    expect(service).toContain('{ idempotencyKey: crypto.randomUUID() }');
    expect(await readFile(path.join(copy.dir, 'src/routes/orders.ts'), 'utf8')).toContain('chargeOrder(price * quantity, undefined, undefined, idempotencyContext)');
    expect(first.edits.map((e) => e.summary)).toContainEqual(expect.stringMatching(/^replaces the per-call key of stripe\.paymentIntents\.create with the derived key when given a context/));
    expect(await readFile(path.join(copy.dir, APPLY_RECORD_PATH), 'utf8')).toContain('replaces the per-call key of stripe.paymentIntents.create with the derived key when given a context');

    // The keyed call is no longer listed (its rule re-run on the edited service), nor reported by a new audit; the
    // unreached call still is.
    expect(first.manual.filter((m) => m.reason.startsWith(`${RULE}:`))).toEqual([]);
    expect(await perAttemptFindings(copy.dir)).toEqual([expect.stringMatching(/^src\/payments\.ts:\d+ stripe subscriptions\.update gets a key/)]);

    expect(await compile(copy.dir)).toBe('');

    const again = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(again.changes).toEqual([]);
    expect(await readFile(path.join(copy.dir, SERVICE), 'utf8')).toBe(service);
  }, 300_000);
});
