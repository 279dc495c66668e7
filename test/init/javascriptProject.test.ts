import { describe, expect, it } from 'vitest';
import { ACCEPT } from '../../src/questions/scriptedPrompter.js';
import { projectFrom, readConfig, runWizard } from './wizardHarness.js';
import { CLI_TEST_TIMEOUT } from '../e2e/cli.js';

describe('init on a JavaScript Express + BullMQ project', { timeout: CLI_TEST_TIMEOUT }, () => {
  it('detects the JavaScript stack, asks the consumer its fingerprint fields, and offers the JavaScript scaffolding', async () => {
    const cwd = await projectFrom('js-worker');
    const run = await runWizard(cwd, [
      { id: 'format', answer: ACCEPT },
      { id: 'output', answer: ACCEPT },
      { id: 'actions', answer: ACCEPT },
      { id: 'fields:consumeNotifications', answer: 'userId, template' },
      { id: 'stack:confirm', answer: true },
      { id: 'retrySources', answer: ACCEPT },
      { id: 'payments', answer: ACCEPT },
      { id: 'concurrency', answer: 'single-server' },
      { id: 'retention', answer: '24h' },
      { id: 'detectionLatency', answer: '100ms' },
      { id: 'scaffold', answer: ACCEPT },
    ]);
    expect(run.error).toBeUndefined();
    run.prompter.assertDone();
    expect(run.prompter.asked.find((q) => q.id === 'stack:confirm')?.message).toContain('language JavaScript · framework Express · database PostgreSQL · broker BullMQ · tests Jest');

    const config = await readConfig(cwd);
    expect(config['actions']).toEqual([
      { name: 'consumeNotifications', trigger: 'consumer', route: 'notifications', significantFields: ['userId', 'template'], source: 'src/worker.js:6' },
      { name: 'createNotification', trigger: 'http', route: 'POST /notifications', significantFields: ['userId', 'template', 'channel'], source: 'src/server.js:8', scope: 'global' },
    ]);
    expect(config['stack']).toEqual({ language: 'javascript', framework: 'express', database: 'postgres', broker: 'bullmq', testFramework: 'jest' });
    expect(config['retrySources']).toEqual(['client-retry', 'double-click', 'load-balancer-replay', 'queue-redelivery']);
    expect(config['payments']).toEqual([]);
    expect(config['scaffold']).toEqual({ dir: 'src/idempotency' });
    expect(run.prompter.notes.join('\n')).not.toContain('No scaffolding target for this stack');
  });
});
