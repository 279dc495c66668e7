import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Generated } from '../generateInto.js';
import { createSchema, postgresSkipReason, type Loose, type Schema } from '../harness.js';
import { generateTriggersAndCompile, triggersModel } from './generateTriggers.js';

/**
 * A kafkajs worker whose tsconfig targets ES2017 (tsc --init of TypeScript 5.3 and many workers since): the consumer
 * adapter must compile there, so it cannot use BigInt literals (TS2737), and must still commit the next offset of a
 * 64-bit offset exactly, carries included.
 */
const skip = await postgresSkipReason();
if (skip) console.warn(`kafkajs offset test skipped: ${skip}`);

describe('kafkajs consumer adapter in a project targeting ES2017', () => {
  let generated: Generated;
  let schema: Schema | undefined;

  beforeAll(async () => {
    generated = await generateTriggersAndCompile(await triggersModel('kafka'), ['consumers/kafka.ts'], { target: 'ES2017' });
  }, 240_000);

  afterAll(async () => {
    await schema?.drop();
  });

  it('compiles with the project target ES2017', () => {
    expect(generated.tscOutput).toBe('');
  });

  it.skipIf(skip !== undefined)('commits offset + 1 in decimal, past a Number and across carries', async () => {
    schema = await createSchema(generated, 'kafka_es2017');
    const load = (file: string) => import(pathToFileURL(path.join(generated.outDir, file)).href);
    const scaffold: Record<string, Loose> = { ...(await load('index.js')), ...(await load('consumers/kafka.js')) };
    const { core } = scaffold.createIdempotency({ pool: schema.pool, principal: () => 'global' });
    const commits: string[] = [];
    const eachMessage = scaffold.kafkaEachMessage(
      { commitOffsets: async (offsets: Array<{ offset: string }>) => void commits.push(...offsets.map((entry) => entry.offset)) },
      { core, action: scaffold.ACTIONS.fulfilOrder, handle: async () => {} },
    );
    for (const offset of ['0', '9', '1999', '9223372036854775806'])
      await eachMessage({ topic: 'orders', partition: 0, message: { offset, key: null, value: Buffer.from(`order-${offset}`), headers: {} } });
    expect(commits).toEqual(['1', '10', '2000', '9223372036854775807']);
  });
});
