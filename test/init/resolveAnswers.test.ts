import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import type { Inspection } from '../../src/inspect/types.js';
import { resolveAnswers } from '../../src/questions/resolveAnswers.js';
import { ACCEPT, createScriptedPrompter } from '../../src/questions/scriptedPrompter.js';

const NOTHING: Inspection = {
  root: '/project',
  stack: { language: 'unknown', frameworks: [], databases: [], orms: [], brokers: [], testFramework: 'unknown', packageManager: 'unknown', payments: [] },
  findings: [],
  warnings: [],
};

const CONFIG = {
  format: 'html',
  actions: [{ name: 'submitOrder', trigger: 'http', route: 'POST /orders', significantFields: ['customerId', 'items'] }],
  stack: { language: 'typescript', framework: 'express', database: 'postgres', broker: 'none', testFramework: 'vitest' },
  retrySources: ['client-retry'],
  payments: [],
  concurrency: 'global',
  retention: '7d',
  detectionLatency: '10ms',
  scaffold: false,
};

describe('resolveAnswers: flag → config → prompt → default', () => {
  it('a flag beats the config, the config beats the default, and a flag pins one part of the stack', async () => {
    const { answers, sources } = await resolveAnswers({
      flags: { concurrency: 'single-server', database: 'mysql', format: 'md' },
      config: CONFIG,
      inspection: NOTHING,
      cwd: '/project',
      interactive: false,
      yes: false,
    });
    expect(answers.concurrency).toBe('single-server');
    expect(sources.concurrency).toBe('flag');
    expect(answers.retention).toBe('7d');
    expect(sources.retention).toBe('config');
    expect(answers.stack).toMatchObject({ framework: 'express', database: 'mysql' });
    expect(answers.output).toBe('docs/idempotency-design.md');
  });

  it('interactive: a flag-answered question is never asked, a configured one is asked with its value as the default', async () => {
    const prompter = createScriptedPrompter([
      { id: 'output', answer: ACCEPT },
      { id: 'actions', answer: ACCEPT },
      { id: 'stack:confirm', answer: true },
      { id: 'retrySources', answer: ACCEPT },
      { id: 'payments', answer: ACCEPT },
      { id: 'retention', answer: ACCEPT },
      { id: 'detectionLatency', answer: ACCEPT },
    ]);
    const { answers } = await resolveAnswers({
      flags: { format: 'html', concurrency: 'multi-instance', scaffold: false },
      config: CONFIG,
      inspection: NOTHING,
      cwd: '/project',
      interactive: true,
      yes: false,
      prompter,
    });
    prompter.assertDone();
    expect(answers).toMatchObject({ concurrency: 'multi-instance', retention: '7d', detectionLatency: '10ms', retrySources: ['client-retry'] });
    expect(answers.actions.map((a) => a.name)).toEqual(['submitOrder']);
  });

  it('without a terminal, lists every missing answer at once with the flag to pass', async () => {
    const run = resolveAnswers({ flags: {}, config: {}, inspection: NOTHING, cwd: '/project', interactive: false, yes: false, reason: 'CI is set' });
    await expect(run).rejects.toBeInstanceOf(UserError);
    await expect(run).rejects.toThrow(/Q1 actions to protect: --actions[\s\S]*Q2 tech stack: --language[\s\S]*Q7 detection latency: --detection-latency 50ms/);
  });

  it('--yes fills every gap and says so in assumptions', async () => {
    const { answers, assumptions } = await resolveAnswers({ flags: {}, config: {}, inspection: NOTHING, cwd: '/project', interactive: false, yes: true });
    expect(answers.actions[0]?.name).toBe('genericProtectedAction');
    expect(answers.retrySources).toEqual(['client-retry', 'double-click', 'load-balancer-replay']);
    expect(assumptions.map((a) => a.split(':')[0])).toEqual([
      'No action to protect was found in the code or named during init',
      'The language, framework, database could not be determined from the code or answers',
      'Retry sources were inferred from the triggers of the protected actions',
      'No payment provider SDK or provider call was found, so no payment provider is involved.',
      'Concurrency was not given',
      'Key retention was not given',
      'Detection latency was not given',
    ]);
  });

  it('rejects a bad flag value naming the flag and the allowed values', async () => {
    const run = resolveAnswers({ flags: { retention: 'three days' }, config: CONFIG, inspection: NOTHING, cwd: '/project', interactive: false, yes: false });
    await expect(run).rejects.toThrow('--retention "three days" is not a duration.');
  });
});
