import { mkdtempSync, rmSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { buildFigures } from '../../src/diagrams/buildFigures.js';
import { readSnapshot, snapshotFile, snapshotOf, SNAPSHOT_PATH } from '../../src/emit/protectionSnapshot.js';
import { actionBrokers } from '../../src/model/actionBrokers.js';
import { buildDesign, type DesignModel } from '../../src/model/index.js';
import { renderReadme } from '../../src/scaffold/renderReadme.js';
import { buildScaffoldView } from '../../src/scaffold/scaffoldView.js';
import { NOW, rawFixture } from '../helpers/fixtures.js';

/**
 * Issue 15: a project whose actions are all queue consumers and cron jobs gets idempotentHandler and CronGuard, which
 * acknowledge, leave for redelivery, dead-letter or skip a slot. Nothing there answers HTTP, so no sentence of its
 * design may promise a status, a header or a body.
 */
const HTTP_CLAIMS = [
  /\b(400|401|403|409|422|429|503)\b/,
  /\b5xx\b/,
  /problem\+json/,
  /Retry-After/,
  /Idempotent-Replayed/,
  /exact body bytes/,
  /[Pp]asses through untouched/,
  /response-not-replayable/,
];

function workerConfig(actions?: Array<Record<string, unknown>>, broker = 'rabbitmq') {
  const raw = rawFixture('worker-cron-no-payments') as { stack: Record<string, unknown>; actions: unknown[] };
  return parseConfig(JSON.stringify({ ...raw, ...(actions ? { actions } : {}), stack: { ...raw.stack, broker } }));
}

const CONSUMER = { name: 'sendWelcomeEmail', trigger: 'consumer', route: 'user.signed-up', significantFields: ['userId'], source: 'src/workers/welcome.ts:4' };
const RECEIPT = { ...CONSUMER, name: 'sendReceipt', route: 'order.paid', source: 'src/workers/receipt.ts:4' };
const CRON = { name: 'closeBooks', trigger: 'cron', route: '0 2 * * *', significantFields: ['day'] };

/** Every sentence of the model that says what a caller, a consumer or a job gets. */
function claims(model: DesignModel): string[] {
  return [
    ...model.responses.rules.flatMap((r) => [r.situation, r.response]),
    ...model.detection.failures.map((f) => f.answer),
    ...model.keys.validation,
    model.keys.generation,
    model.fingerprint.mismatchBody,
    model.lock.contested,
    ...model.tests.flatMap((t) => [t.name, t.input, t.expected]),
    ...model.runbook.flatMap((r) => [r.symptom, ...r.steps]),
    ...model.metrics.flatMap((m) => [m.meaning, m.alert]),
    ...model.security.map((s) => s.decision),
    ...model.buildOrder.flatMap((b) => [b.title, b.detail]),
    ...model.actions.map((a) => a.lockJustification),
    ...buildFigures(model).flatMap((f) => [f.caption, f.mermaid]),
  ];
}

describe('design of a worker: consumers and cron jobs only', () => {
  it.each([
    ['consumers and cron jobs', undefined],
    ['consumers only', [CONSUMER, RECEIPT]],
    ['cron jobs only', [CRON, { ...CRON, name: 'sendDigest', route: '0 8 * * *' }]],
  ])('%s: no sentence promises an HTTP status, header or body', (_name, actions) => {
    const model = buildDesign(workerConfig(actions), undefined, { now: NOW });
    expect(model.stack.worker).toBe(true);
    expect(model.stack.plain).toBeUndefined();
    expect(buildFigures(model)).toHaveLength(1);
    for (const text of claims(model)) for (const pattern of HTTP_CLAIMS) expect(text, String(pattern)).not.toMatch(pattern);
    // The spec's constraint still holds: a concurrent-duplicate scenario with its expected outcome.
    expect(model.constraints.filter((c) => !c.satisfied)).toEqual([]);
  });

  it('says what the consumer does instead: acknowledge, leave for redelivery, dead-letter, in the broker adapter\'s terms', () => {
    const model = buildDesign(workerConfig([CONSUMER, RECEIPT]), undefined, { now: NOW });
    const rule = (situation: string) => model.responses.rules.find((r) => r.situation === situation)?.response;
    expect(rule('Same message id or slot, still running')).toContain("outcome 'busy'");
    expect(rule('Same message id or slot, still running')).toContain('RabbitMQ: the message is nacked back to the queue');
    expect(rule('Same message id, different content')).toContain('treated as a duplicate');
    expect(rule('A message that keeps failing (poison)')).toContain('dead-letter exchange');
    expect(rule('Store unavailable or slow before the work')).toContain('StoreUnavailableError');
    expect(model.tests.find((t) => t.concurrent)?.expected).toContain("'busy'");
    expect(buildFigures(model)[0]?.title).toBe('Message handling');
  });

  it('names a cron run\'s outcomes: ran, duplicate, overlap', () => {
    const model = buildDesign(workerConfig([CRON]), undefined, { now: NOW });
    expect(model.lock.contested).toContain("'overlap'");
    expect(model.tests.map((t) => t.id)).toContain('concurrent');
    expect(model.tests.find((t) => t.concurrent)?.expected).toContain("'overlap'");
    // A job has no message: no poison row, no message-id step in the build order.
    expect(model.responses.rules.some((r) => r.situation.includes('poison'))).toBe(false);
    expect(model.buildOrder.some((b) => b.title.includes('stable id'))).toBe(false);
  });

  it('keeps the HTTP answers when one action is a route', () => {
    const model = buildDesign(workerConfig([CONSUMER, { name: 'createOrder', trigger: 'http', route: 'POST /orders', significantFields: ['sku'] }]), undefined, { now: NOW });
    expect(model.stack.worker).toBeUndefined();
    expect(model.responses.rules.find((r) => r.situation === 'Same key, still in flight')?.response).toContain('409');
  });

  it("the scaffold README's Behaviour speaks of outcomes, never of statuses", () => {
    const readme = renderReadme(buildScaffoldView(buildDesign(workerConfig(), undefined, { now: NOW })), []);
    const behaviour = readme.slice(readme.indexOf('## Behaviour'), readme.indexOf('## Files'));
    for (const pattern of HTTP_CLAIMS) expect(behaviour, String(pattern)).not.toMatch(pattern);
    expect(behaviour).toContain('`busy`: not acknowledged');
    expect(behaviour).toContain('`overlap` when another run holds it');
  });
});

describe("a consumer's key source names its own broker", () => {
  const consumers = ['bullmq', 'rabbitmq', 'kafka', 'sqs', 'nats'].map((broker, i) => ({ ...CONSUMER, name: `consume${broker}`, source: `src/workers/${broker}.ts:${i + 3}` }));
  const findings = [
    ...['bullmq', 'rabbitmq', 'kafka', 'sqs', 'nats'].map((broker, i) => ({ kind: 'consumer', file: `src/workers/${broker}.ts`, line: i + 3, broker })),
    // A consumer elsewhere in the same file, and a broker the design does not know, change nothing.
    { kind: 'consumer', file: 'src/workers/kafka.ts', line: 40, broker: 'rabbitmq' },
    { kind: 'consumer', file: 'src/workers/sqs.ts', line: 6, broker: 'inngest' },
  ];

  it('finds each action\'s broker where inspection found its consumer', () => {
    expect(actionBrokers(parseConfig(JSON.stringify({ ...rawFixture('worker-cron-no-payments'), actions: consumers })).actions, findings)).toEqual({
      consumebullmq: 'bullmq',
      consumerabbitmq: 'rabbitmq',
      consumekafka: 'kafka',
      consumesqs: 'sqs',
      consumenats: 'nats',
    });
  });

  it("uses the action's broker, and the stack's where none was found", () => {
    const config = workerConfig(consumers, 'bullmq');
    const brokers = actionBrokers(config.actions, findings);
    delete brokers.consumenats;
    const carrier = (name: string) => buildDesign(config, undefined, { now: NOW, brokers }).actions.find((a) => a.name === name)!.key.carrier;
    expect(carrier('consumebullmq')).toContain('the BullMQ job id');
    expect(carrier('consumerabbitmq')).toContain('the `messageId` property the producer sets (RabbitMQ assigns none)');
    expect(carrier('consumekafka')).toContain('Kafka assigns none');
    expect(carrier('consumesqs')).toContain('the SQS MessageId');
    expect(carrier('consumenats')).toContain('the BullMQ job id');
  });

  it('keeps the brokers in the snapshot, so generate renders what init did', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'workerdoc-snapshot-'));
    try {
      const [file] = snapshotFile(snapshotOf({ inspection: { findings: [] }, codeFindings: [], actionFacts: [], brokers: { consumekafka: 'kafka', consumeother: 'inngest' } }));
      mkdirSync(path.join(root, path.dirname(SNAPSHOT_PATH)), { recursive: true });
      writeFileSync(path.join(root, SNAPSHOT_PATH), file!.contents);
      expect((await readSnapshot(root)).brokers).toEqual({ consumekafka: 'kafka' });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
