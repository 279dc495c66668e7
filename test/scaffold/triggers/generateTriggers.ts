import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { DesignModel } from '../../../src/model/types.js';
import { generateScaffold } from '../../../src/scaffold/index.js';
import { readTemplate } from '../../../src/scaffold/readTemplate.js';
import { modelFor, ROOT, type Generated } from '../generateInto.js';

const run = promisify(execFile);

/**
 * The checkout design (HTTP + Stripe webhook) plus a consumer and a scheduled job, so every trigger is generated.
 * `broker` picks the consumer adapter the generator adds.
 */
export function triggersModel(broker: 'bullmq' | 'rabbitmq' | 'nats' | 'kafka' = 'rabbitmq', patch: (raw: Record<string, unknown>) => void = () => {}): Promise<DesignModel> {
  return modelFor('express-stripe-payments', (raw) => {
    (raw.stack as Record<string, unknown>).broker = broker;
    (raw.actions as unknown[]).push(
      {
        name: 'fulfilOrder',
        trigger: 'consumer',
        route: 'orders.paid',
        significantFields: ['orderId'],
        expectedDurationMs: 400,
        source: 'src/workers/fulfil.ts:10',
        key: { source: 'derived', from: ['messageId'] },
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
    patch(raw);
  });
}

/** Every consumer adapter, whichever broker the design names: compiled together so all four are type-checked. */
export const ALL_ADAPTERS = ['consumers/bullmq.ts', 'consumers/amqplib.ts', 'consumers/nats.ts', 'consumers/kafka.ts'];

/** Like generateAndCompile, plus extra template files copied in before tsc runs. */
export async function generateTriggersAndCompile(model: DesignModel, label: string, extraTemplates: readonly string[] = ALL_ADAPTERS): Promise<Generated> {
  await mkdir(path.join(ROOT, '.tmp'), { recursive: true });
  const dir = await mkdtemp(path.join(ROOT, '.tmp', `triggers-${label}-`));
  const files = generateScaffold(model, { dir: 'src/idempotency' });
  const contents = new Map(files.map((file) => [file.path, file.contents]));
  for (const template of extraTemplates) {
    const target = `src/idempotency/${template}`;
    if (!contents.has(target)) contents.set(target, readTemplate(`typescript/${template}`));
  }
  for (const [file, text] of contents) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), text);
  }
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
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
    },
    include: ['src'],
  };
  await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
  await writeFile(path.join(dir, 'vitest.config.mjs'), "export default { test: { include: ['src/**/*.test.ts'], testTimeout: 30000 } };\n");
  let tscOutput = '';
  try {
    await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], { cwd: dir });
  } catch (error) {
    tscOutput = String((error as { stdout?: string }).stdout ?? error);
  }
  return { dir, outDir: path.join(dir, 'dist/idempotency'), files, tscOutput };
}
