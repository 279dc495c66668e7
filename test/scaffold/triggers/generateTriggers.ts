import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { DesignModel } from '../../../src/model/types.js';
import { generateScaffold } from '../../../src/scaffold/index.js';
import { readTemplate } from '../../../src/scaffold/readTemplate.js';
import { modelFor, ROOT, type Generated } from '../generateInto.js';

const run = promisify(execFile);

/** The consumer's lease in the acceptance tests: short, so a redelivery after a crash waits ~3 s, not the design's lease. */
export const CONSUMER_LEASE_MS = 3_000;

/**
 * The checkout design (HTTP + Stripe webhook) plus a consumer and a scheduled job, so every trigger is generated.
 * The consumer runs in lease mode (as one calling another service would) with a short lease, so the tests meet
 * the busy path: a redelivery that arrives while a dead consumer's lease is still live is redelivered later.
 */
export async function triggersModel(broker: 'bullmq' | 'bull' | 'rabbitmq' | 'nats' | 'kafka' | 'sqs' = 'rabbitmq'): Promise<DesignModel> {
  const model = await modelFor('express-stripe-payments', (raw) => {
    (raw.stack as Record<string, unknown>).broker = broker;
    // All three providers' helpers exist, and the refund goes through PayPal, so every reconciliation lookup and
    // both shapes of the job compile.
    raw.payments = ['stripe', 'adyen', 'paypal'];
    (raw.actions as Array<Record<string, unknown>>).find((action) => action.name === 'refundPayment')!.provider = 'paypal';
    (raw.actions as unknown[]).push(
      {
        name: 'fulfilOrder',
        trigger: 'consumer',
        route: 'orders.paid',
        significantFields: ['orderId'],
        expectedDurationMs: 400,
        source: 'src/workers/fulfil.ts:10',
        key: { source: 'derived', from: ['messageId'] },
        mode: 'lease',
      },
      {
        name: 'closeLedgerDay',
        trigger: 'cron',
        route: '0 0 * * *',
        significantFields: ['day'],
        expectedDurationMs: 2000,
        source: 'src/jobs/ledger.ts:5',
        scope: 'global',
      },
    );
    raw.retrySources = [...(raw.retrySources as string[]), 'queue-redelivery', 'cron-overlap'];
  });
  for (const action of model.actions) {
    if (action.trigger !== 'consumer') continue;
    action.lockTimeoutMs = CONSUMER_LEASE_MS;
    action.heartbeatMs = undefined;
  }
  return model;
}

/** Every consumer adapter (whichever broker the design names), both web wirings and every provider lookup, so all are type-checked. */
export const ALL_ADAPTERS = ['consumers/bullmq.ts', 'consumers/bull.ts', 'consumers/amqplib.ts', 'consumers/nats.ts', 'consumers/kafka.ts', 'consumers/sqs.ts', 'webhooks/fastify.ts', 'reconcile/adyen.ts'];

/**
 * Like generateAndCompile, plus extra template files copied in before tsc runs. Compiled once per vitest run and
 * content: test files that generate the same scaffold share one folder (tsc is the slow part on a loaded machine).
 * The folder is named after the vitest process (our parent), so folders of finished runs are removed here.
 * Callers must not delete it; what they add to it (worker scripts) does not change the compiled output.
 */
export async function generateTriggersAndCompile(
  model: DesignModel,
  extraTemplates: readonly string[] = ALL_ADAPTERS,
  /** What a framework asks of the user's tsconfig (NestJS: experimentalDecorators, emitDecoratorMetadata). */
  compilerOptions: Record<string, unknown> = {},
): Promise<Generated> {
  const tmp = path.join(ROOT, '.tmp');
  await mkdir(tmp, { recursive: true });
  await removeFinishedRuns(tmp);
  const files = generateScaffold(model, { dir: 'src/idempotency' });
  const contents = new Map(files.map((file) => [file.path, file.contents]));
  for (const template of extraTemplates) {
    const target = `src/idempotency/${template}`;
    if (!contents.has(target)) contents.set(target, readTemplate(`typescript/${template}`));
  }
  const hash = createHash('sha256');
  for (const [file, text] of [...contents].sort(([a], [b]) => (a < b ? -1 : 1))) hash.update(`${file}\0${text}\0`);
  hash.update(JSON.stringify(compilerOptions));
  const dir = path.join(tmp, `triggers-${process.ppid}-${hash.digest('hex').slice(0, 16)}`);
  const result = (tscOutput: string) => ({ dir, outDir: path.join(dir, 'dist/idempotency'), files, tscOutput });
  if (existsSync(path.join(dir, 'compiled'))) return result('');

  const build = await mkdtemp(path.join(tmp, 'triggers-build-'));
  for (const [file, text] of contents) {
    await mkdir(path.dirname(path.join(build, file)), { recursive: true });
    await writeFile(path.join(build, file), text);
  }
  await writeFile(path.join(build, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  const tsconfig = {
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      noUncheckedIndexedAccess: true,
      esModuleInterop: true,
      skipLibCheck: true,
      types: ['node'],
      typeRoots: [path.join(ROOT, 'node_modules/@types')],
      outDir: 'dist',
      rootDir: 'src',
      ...compilerOptions,
    },
    include: ['src'],
  };
  await writeFile(path.join(build, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
  await writeFile(path.join(build, 'vitest.config.mjs'), "export default { test: { include: ['src/**/*.test.ts'], testTimeout: 30000 } };\n");
  try {
    await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', build], { cwd: build });
  } catch (error) {
    const tscOutput = String((error as { stdout?: string }).stdout ?? error);
    return { dir: build, outDir: path.join(build, 'dist/idempotency'), files, tscOutput };
  }
  await writeFile(path.join(build, 'compiled'), '');
  try {
    await rename(build, dir);
  } catch {
    // Another test file compiled the same scaffold first: use its folder.
    await rm(build, { recursive: true, force: true });
  }
  return result('');
}

/** Folders of vitest runs that have ended (their process is gone). */
async function removeFinishedRuns(tmp: string): Promise<void> {
  for (const name of await readdir(tmp)) {
    const pid = Number(/^triggers-(\d+)-/.exec(name)?.[1]);
    if (!pid || pid === process.ppid || alive(pid)) continue;
    await rm(path.join(tmp, name), { recursive: true, force: true }).catch(() => undefined);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
