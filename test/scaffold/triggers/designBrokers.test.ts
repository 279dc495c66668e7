import { cp, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { buildDesign, type DesignModel } from '../../../src/model/index.js';
import { workerKinds } from '../../../src/model/workerOutcomes.js';
import { generateScaffold } from '../../../src/scaffold/index.js';
import { installCommands, missingDependencies } from '../../../src/scaffold/placement/installCommands.js';
import { planTriggers } from '../../../src/scaffold/triggers/index.js';
import { CLI_TEST_TIMEOUT, runCli } from '../../e2e/cli.js';
import { NOW, rawFixture } from '../../helpers/fixtures.js';
import { ROOT } from '../generateInto.js';
import { generateTriggersAndCompile } from './generateTriggers.js';

/**
 * Issue 15: the scaffold ships a consumer adapter for every broker the design names, each consumer's own (found by
 * inspection at its source) before the stack's, so a worker reading BullMQ and Kafka at once, or one whose stack
 * broker is unknown, gets the adapter its document describes.
 */
const WELCOME = { name: 'sendWelcomeEmail', trigger: 'consumer', route: 'user.signed-up', significantFields: ['userId'], source: 'src/workers/welcome.ts:4', key: { source: 'derived', from: ['messageId'] } };
const LEDGER = { ...WELCOME, name: 'settleLedger', route: 'payments.settled', source: 'src/workers/ledger.ts:9' };
const CRON = { name: 'closeBooks', trigger: 'cron', route: '0 2 * * *', significantFields: ['day'], scope: 'global' };

/** A worker on PostgreSQL; `brokers` is what inspection found at each consumer's source (the snapshot's brokers). */
function workerModel(stackBroker: string, brokers: Record<string, string>, actions: unknown[] = [WELCOME, LEDGER, CRON]): DesignModel {
  const raw = rawFixture('worker-cron-no-payments') as { stack: Record<string, unknown> };
  const config = parseConfig(JSON.stringify({ ...raw, actions, stack: { ...raw.stack, database: 'postgres', broker: stackBroker } }));
  return buildDesign(config, undefined, { now: NOW, brokers });
}

const fileOf = (model: DesignModel, name: string) => generateScaffold(model, { dir: 'src/idempotency' }).find((file) => file.path === `src/idempotency/${name}`)?.contents ?? '';
const adapters = (model: DesignModel) =>
  generateScaffold(model, { dir: 'src/idempotency' })
    .map((file) => /^src\/idempotency\/consumers\/(\w+)\.ts$/.exec(file.path)?.[1])
    .filter((name) => name !== undefined && !['handler', 'metrics', 'consumers'].includes(name))
    .sort();

describe('a consumer adapter for every broker the design names', () => {
  it('BullMQ (the stack) and Kafka (one consumer of its own): both adapters, compiled with the rest under tsc --strict', async () => {
    const model = workerModel('bullmq', { settleLedger: 'kafka' });
    // The document and the scaffold name the same brokers.
    expect(workerKinds(model.actions, model.stack.broker).brokers).toEqual(['bullmq', 'kafka']);
    expect(planTriggers(model).brokers).toEqual(['bullmq', 'kafka']);
    const busy = model.responses.rules.map((rule) => rule.response).join('\n');
    expect(busy).toContain('BullMQ: the processor throws JobBusyError');
    expect(busy).toContain('Kafka: eachMessage throws');
    expect(busy).not.toContain('no adapter in the scaffold');
    expect(adapters(model)).toEqual(['bullmq', 'kafka']);

    // Only the templates the scaffold itself wrote (no extra adapters copied in): the adapters compile as generated.
    const generated = await generateTriggersAndCompile(model, []);
    expect(generated.tscOutput).toBe('');
    const emitted = await readdir(path.join(generated.outDir, 'consumers'));
    expect(emitted).toEqual(expect.arrayContaining(['bullmq.js', 'kafka.js']));

    // Their client libraries reach the install line (imported for their types: needed to compile).
    const dependencies = missingDependencies(generated.files, new Set(), true);
    expect(dependencies.dev).toEqual(expect.arrayContaining(['bullmq', 'kafkajs']));
    expect(installCommands('npm', { packageDir: '' }, dependencies).join('\n')).toMatch(/^npm i -D .*\bbullmq\b.*\bkafkajs\b/m);
    const declared = missingDependencies(generated.files, new Set(['bullmq', 'kafkajs']), true);
    expect([...declared.runtime, ...declared.dev]).not.toEqual(expect.arrayContaining(['bullmq']));
    expect([...declared.runtime, ...declared.dev]).not.toEqual(expect.arrayContaining(['kafkajs']));
  });

  it('TRIGGERS.md wires each adapter with a consumer that broker delivers', async () => {
    const triggers = fileOf(workerModel('bullmq', { settleLedger: 'kafka' }), 'TRIGGERS.md');
    expect(triggers).toContain('// BullMQ\n');
    expect(triggers).toContain('bullmqProcessor({ core: idempotency.core, action: ACTIONS.sendWelcomeEmail, handle })');
    expect(triggers).toContain('// Kafka (kafkajs)\n');
    expect(triggers).toContain('kafkaEachMessage(consumer, { core: idempotency.core, action: ACTIONS.settleLedger, handle })');
    expect(triggers).not.toContain('idempotentHandler({ core');
  });

  it("a worker's README shows its brokers' consumer wrappers and its cron guard, nothing of tRPC or a request", async () => {
    const readme = fileOf(workerModel('bullmq', { settleLedger: 'kafka' }), 'README.md');
    const wiring = readme.slice(readme.indexOf('## Wiring'), readme.indexOf('## Behaviour'));
    expect(wiring).toContain("import { bullmqProcessor } from './idempotency/consumers/bullmq.js';");
    expect(wiring).toContain("import { kafkaEachMessage } from './idempotency/consumers/kafka.js';");
    expect(wiring).toContain('bullmqProcessor({ core: idempotency.core, action: ACTIONS.sendWelcomeEmail, handle })');
    expect(wiring).toContain('kafkaEachMessage(consumer, { core: idempotency.core, action: ACTIONS.settleLedger, handle })');
    expect(wiring).toContain("schedule.scheduleJob('0 2 * * *', nodeScheduleTask(guard, ACTIONS.closeBooks, 'closeBooks', work));");
    // The consumer side only: producers are in TRIGGERS.md.
    expect(wiring).not.toContain('queue.add(');
    expect(wiring).not.toMatch(/tRPC|ctx\.user|input\.idempotencyKey|idempotency\.idempotent\(/);

    // A cron-only worker: the guard, no consumer.
    const cronOnly = fileOf(workerModel('none', {}, [CRON]), 'README.md');
    expect(cronOnly).toContain('give its `core` to the cron guard');
    expect(cronOnly).not.toMatch(/consumers\/|tRPC/);
    // A project with an HTTP route keeps its framework's example.
    const http = fileOf(workerModel('bullmq', {}, [WELCOME, { ...CRON, name: 'createOrder', trigger: 'http', route: 'POST /orders' }]), 'README.md');
    expect(http).not.toContain('give its `core` to');
  });

  it("a stack broker 'unknown' or 'none' with a consumer inspection found on Kafka: the Kafka adapter", () => {
    for (const stackBroker of ['unknown', 'none']) {
      const model = workerModel(stackBroker, { settleLedger: 'kafka' }, [LEDGER, CRON]);
      expect(planTriggers(model).brokers).toEqual(['kafka']);
      expect(adapters(model)).toEqual(['kafka']);
      expect(fileOf(model, 'TRIGGERS.md')).toContain('kafkaEachMessage(consumer, { core: idempotency.core, action: ACTIONS.settleLedger, handle })');
      expect(fileOf(model, 'README.md')).toContain("import { kafkaEachMessage } from './idempotency/consumers/kafka.js';");
    }
    // Nobody knows the broker: no adapter, the generic handler.
    const unknown = workerModel('unknown', {}, [LEDGER, CRON]);
    expect(planTriggers(unknown).brokers).toEqual([]);
    expect(adapters(unknown)).toEqual([]);
    expect(fileOf(unknown, 'TRIGGERS.md')).toContain('idempotentHandler({ core: idempotency.core, action: ACTIONS.settleLedger');
    expect(fileOf(unknown, 'README.md')).toContain("import { idempotentHandler } from './idempotency/consumers/handler.js';");
  });

  it('a consumer on a broker nobody named beside one on Kafka: the adapter and the generic handler, each titled', () => {
    const model = workerModel('unknown', { settleLedger: 'kafka' });
    expect(planTriggers(model).brokers).toEqual(['kafka']);
    const triggers = fileOf(model, 'TRIGGERS.md');
    expect(triggers).toContain('// Kafka (kafkajs)\n');
    expect(triggers).toContain('// Any other broker: the generic handler, acknowledging on its outcome\nconst onMessage = idempotentHandler({ core: idempotency.core, action: ACTIONS.sendWelcomeEmail');
  });

  it('SQS (the stack) and Kafka: both adapters, compiled as generated', async () => {
    const model = workerModel('sqs', { settleLedger: 'kafka' });
    expect(planTriggers(model).brokers).toEqual(['kafka', 'sqs']);
    expect(fileOf(model, 'README.md')).toContain("import { pollIdempotently } from './idempotency/consumers/sqs.js';");
    const generated = await generateTriggersAndCompile(model, []);
    expect(generated.tscOutput).toBe('');
    // The SQS adapter sends the client's commands (a runtime dependency); the Kafka one only needs kafkajs' types.
    const dependencies = missingDependencies(generated.files, new Set(), true);
    expect(dependencies.runtime).toContain('@aws-sdk/client-sqs');
    expect(dependencies.dev).toContain('kafkajs');
    expect(installCommands('npm', { packageDir: '' }, dependencies)[0]).toMatch(/^npm i .*@aws-sdk\/client-sqs/);
  });

  it(
    'worker-service, inspected by init: an adapter for each of its brokers, as its design document names them',
    async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'ib-brokers-'));
      try {
        await cp(path.join(ROOT, 'fixtures/projects/worker-service'), dir, { recursive: true });
        const run = await runCli(['init', '--yes', '--cwd', dir]);
        expect(run.code, run.stderr).toBe(0);
        const config = JSON.parse(await readFile(path.join(dir, 'idempotency.config.json'), 'utf8')) as { stack: { broker: string } };
        // The stack names one broker; the consumers are on five.
        expect(config.stack.broker).toBe('bullmq');
        const written = (await readdir(path.join(dir, 'src/idempotency/consumers'))).sort();
        expect(written).toEqual(['amqplib.ts', 'bullmq.ts', 'handler.ts', 'kafka.ts', 'metrics.ts', 'nats.ts', 'sqs.ts']);
        const readme = await readFile(path.join(dir, 'src/idempotency/README.md'), 'utf8');
        for (const wrapper of ['bullmqProcessor', 'kafkaEachMessage', 'natsHandler', 'consumeIdempotently', 'pollIdempotently']) expect(readme).toContain(`import { ${wrapper} }`);
        expect(readme).not.toContain('tRPC');
        // The document describes those adapters.
        const pages = await readdir(path.join(dir, 'docs/idempotency-design'));
        const document = (await Promise.all(pages.filter((page) => page.endsWith('.html')).map((page) => readFile(path.join(dir, 'docs/idempotency-design', page), 'utf8')))).join('\n');
        expect(document).toContain('Kafka: eachMessage throws and kafkajs resumes from the last committed offset');
        expect(document).toContain('NATS: the message is nak');
        expect(document).toContain('RabbitMQ: the message is nacked back to the queue');
        expect(document).toContain('Amazon SQS: the message is made visible again');
        expect(document).not.toContain('no adapter in the scaffold');
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
    CLI_TEST_TIMEOUT,
  );
});
