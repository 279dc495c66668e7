import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { snapshotFile, snapshotOf } from '../../src/emit/protectionSnapshot.js';
import { auditProject } from '../../src/findings/auditProject.js';
import { compile, copyFixture, type FixtureCopy } from './fixtureApp.js';

const ROUTE = 'src/routes/checkout.ts';
const PER_ATTEMPT = ['per-attempt-provider-key', 'provider-params-change-between-retries'];

/** What `inspect`/`audit` reports today for the two rules, as `rule line message`. */
async function inspectFindings(dir: string): Promise<string[]> {
  const { findings } = await auditProject(dir);
  return findings.filter((f) => PER_ATTEMPT.includes(f.ruleId)).map((f) => `${f.ruleId} ${f.file}:${f.line} ${f.message}`).sort();
}

describe('apply on a route whose Stripe key and labels change per attempt', () => {
  let copy: FixtureCopy;

  beforeAll(async () => {
    copy = await copyFixture('per-attempt-key');
    // What init records: the audit's findings in the snapshot apply reads.
    const audit = await auditProject(copy.dir);
    for (const file of snapshotFile(snapshotOf({ inspection: { findings: [] }, codeFindings: audit.findings, actionFacts: audit.actionFacts }))) {
      await mkdir(path.dirname(path.join(copy.dir, file.path)), { recursive: true });
      await writeFile(path.join(copy.dir, file.path), file.contents);
    }
  }, 120_000);
  afterAll(async () => {
    await copy?.remove();
  });

  it('apply --yes derives the key and the label, takes the expiry from startedAt, compiles, and re-inspection finds nothing left', async () => {
    const before = await inspectFindings(copy.dir);
    expect(before).toEqual([
      `per-attempt-provider-key ${ROUTE}:20 stripe checkout.sessions.create gets a key (idempotencyKey) from \`randomUUID()\`, which is new on every attempt.`,
      `provider-params-change-between-retries ${ROUTE}:16 stripe checkout.sessions.create parameter \`expires_at\` comes from \`now\`, so every retry sends a different value.`,
      `provider-params-change-between-retries ${ROUTE}:17 stripe checkout.sessions.create parameter \`metadata\` comes from \`randomUUID()\`, so every retry sends a different value.`,
    ]);

    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(first.written).toBe(true);
    const route = await readFile(path.join(copy.dir, ROUTE), 'utf8');
    expect(route).not.toContain('randomUUID');
    expect(route).toContain('metadata: { attempt: providerKey(idempotencyContext) },');
    // The expiry counts from the key's start time, the same on every attempt, through the local that only fed it.
    expect(route).toContain('const now = Math.floor(idempotencyContext.startedAt / 1000);');
    expect(route).toContain('expires_at: now + 3600,');
    expect(route).toMatch(/},\s*stripeRequestOptions\(idempotencyContext\),?\s*\);/);
    expect(first.edits.map((e) => e.summary).join('\n')).toContain(
      'takes stripe checkout.sessions.create parameter `expires_at` from the key\'s start time (startedAt) instead of `now`',
    );

    // Every finding is fixed: none is left to the user, and the re-run rules (relocated onto the edited text) agree.
    const listed = first.manual.filter((m) => PER_ATTEMPT.some((rule) => m.reason.startsWith(`${rule}:`)));
    expect(listed).toEqual([]);

    expect(await compile(copy.dir)).toBe('');
    expect(await inspectFindings(copy.dir)).toEqual([]);

    const again = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(again.changes).toEqual([]);
    // The snapshot still holds init's findings on the text before apply: the ones apply fixed stay fixed.
    expect(again.manual.filter((m) => PER_ATTEMPT.some((rule) => m.reason.startsWith(`${rule}:`)))).toEqual(listed);
    expect(await readFile(path.join(copy.dir, ROUTE), 'utf8')).toBe(route);
  }, 300_000);
});
