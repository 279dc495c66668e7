import { appendFile, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { FindingsError, UserError } from '../../src/errors.js';
import type { Prompter } from '../../src/questions/prompter.js';
import { createScriptedPrompter } from '../../src/questions/scriptedPrompter.js';
import { copyFixture, type FixtureCopy } from './fixtureApp.js';

const ROUTES = 'src/routes/orders.ts';
let copy: FixtureCopy | undefined;
afterEach(async () => {
  await copy?.remove();
  copy = undefined;
});

const read = (relative: string) => readFile(path.join(copy!.dir, relative), 'utf8').catch(() => undefined);
const quiet = { quiet: true };

describe('apply never edits silently', () => {
  it('--dry-run and --diff show the plan and write nothing', async () => {
    copy = await copyFixture('express');
    const before = await read(ROUTES);
    for (const flag of [{ dryRun: true }, { diff: true }]) {
      const result = await runApply({ cwd: copy.dir, ...flag, ...quiet }, { interactive: false });
      expect(result.written).toBe(false);
      expect(result.changes.map((c) => c.path)).toContain(ROUTES);
    }
    expect(await read(ROUTES)).toBe(before);
    expect(await read('.idempotency-builder/apply.json')).toBeUndefined();
  });

  it('without a terminal and without --yes, it writes nothing and exits 2 naming --yes', async () => {
    copy = await copyFixture('express');
    const before = await read(ROUTES);
    const error = await runApply({ cwd: copy.dir, ...quiet }, { interactive: false }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).exitCode).toBe(2);
    expect((error as UserError).fix).toContain('--yes');
    expect(await read(ROUTES)).toBe(before);
  });

  it('asks through the prompter and honours the answer', async () => {
    copy = await copyFixture('express');
    const before = await read(ROUTES);
    const no = createScriptedPrompter([{ id: 'apply', answer: false }]);
    expect((await runApply({ cwd: copy.dir, ...quiet }, { interactive: true, prompter: no })).written).toBe(false);
    no.assertDone();
    expect(await read(ROUTES)).toBe(before);
    const yes = createScriptedPrompter([{ id: 'apply', answer: true }]);
    expect((await runApply({ cwd: copy.dir, ...quiet }, { interactive: true, prompter: yes })).written).toBe(true);
    expect(await read(ROUTES)).toContain('idempotency.createOrder');
  });

  it('refuses (exit 1) when the file changed since inspection, and names the fix', async () => {
    copy = await copyFixture('express');
    const text = (await read(ROUTES))!;
    await writeFile(path.join(copy.dir, ROUTES), `// reviewed\n${text}`);
    const error = await runApply({ cwd: copy.dir, yes: true, ...quiet }, { interactive: false }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FindingsError);
    expect((error as FindingsError).exitCode).toBe(1);
    expect((error as FindingsError).message).toContain('init');
    expect((error as FindingsError).findings).toEqual([`${ROUTES} changed since inspection: POST /orders is registered at line 16, not 15`]);
    expect(await read(ROUTES)).toBe(`// reviewed\n${text}`);
  });

  it('refuses to write when a file changes while the diff is on screen', async () => {
    copy = await copyFixture('express');
    const sneaky: Prompter = {
      ...createScriptedPrompter([]),
      confirm: async () => {
        await appendFile(path.join(copy!.dir, ROUTES), '// edited in another window\n');
        return true;
      },
    };
    const error = await runApply({ cwd: copy.dir, ...quiet }, { interactive: true, prompter: sneaky }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).message).toContain('changed while the diff was shown');
    expect(await read('src/idempotency/instance.ts')).toBeUndefined();
  });

  it('lists the open findings in the action file with the fix of each rule, and does not edit them', async () => {
    copy = await copyFixture('express');
    const finding = (ruleId: string, fix: string, line = 24) => ({ ruleId, title: ruleId, severity: 'error', file: ROUTES, line, column: 5, message: 'm', evidence: 'e', fix, docsAnchor: ruleId, fingerprint: `fp-${ruleId}` });
    // The Stripe call is on line 23: the rule, run again on the edited file, finds it keyed.
    // A missing key in a helper the handler reaches (its code facts' spans) is listed: no transform edits that file.
    const helperCall = { ...finding('provider-call-without-key', 'pass it down from the handler', 5), file: 'src/stripe.ts', fingerprint: 'fp-helper' };
    const spans = [{ file: ROUTES, from: 15, to: 32 }, { file: 'src/stripe.ts', from: 1, to: 11 }];
    const snapshot = {
      findings: [],
      codeFindings: [finding('per-attempt-provider-key', 'derive the key from the request key'), finding('provider-call-without-key', 'pass idempotencyKey', 23), helperCall],
      actionFacts: [{ action: 'createOrder', handler: { file: ROUTES, line: 15 }, calls: [], writes: [], budgets: [], spans }],
    };
    await writeFile(path.join(copy.dir, '.idempotency-builder/existing-protection.json'), JSON.stringify(snapshot)).catch(async () => {
      const { mkdir } = await import('node:fs/promises');
      await mkdir(path.join(copy!.dir, '.idempotency-builder'));
      await writeFile(path.join(copy!.dir, '.idempotency-builder/existing-protection.json'), JSON.stringify(snapshot));
    });
    const result = await runApply({ cwd: copy.dir, dryRun: true, ...quiet }, { interactive: false });
    const reasons = result.manual.map((m) => m.reason);
    expect(reasons).toContain('per-attempt-provider-key: derive the key from the request key');
    // The missing Stripe key is one the transforms add, so it is not left to the user (a call they cannot reach is).
    expect(result.manual.filter((m) => m.reason.startsWith('provider-call-without-key')).map((m) => `${m.file}:${m.line} ${m.reason}`)).toEqual([
      'src/stripe.ts:5 provider-call-without-key: pass it down from the handler',
    ]);
  });

  it('--action with an unknown name is a usage error listing the actions', async () => {
    copy = await copyFixture('express');
    const error = await runApply({ cwd: copy.dir, action: 'createOrdr', yes: true, ...quiet }, { interactive: false }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).fix).toContain('createOrder');
  });
});
