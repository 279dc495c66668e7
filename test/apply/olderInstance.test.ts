import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderInstance } from '../../src/apply/renderInstance.js';
import { runApply } from '../../src/cli/apply.js';
import { compile, copyFixture, type FixtureCopy } from './fixtureApp.js';

/** The instance an apply before #19 wrote: the pool exported, no closeIdempotency(). */
const olderInstance = () =>
  renderInstance('fastify')
    .replace(/\nlet closing[\s\S]*?\n}\n/, '\n')
    .replace('// Exported for health checks; your shutdown closes it with closeIdempotency() (below).', '// Exported for your graceful shutdown (`await pool.end()` after the server stops) and health checks.');

describe('apply on a Fastify app whose instance.ts an older apply wrote (no closeIdempotency())', { timeout: 300_000 }, () => {
  let copy: FixtureCopy;
  beforeAll(async () => {
    copy = await copyFixture('fastify');
  });
  afterAll(async () => {
    await copy?.remove();
  });

  it('imports nothing the instance lacks, says how to close its pool instead, and the app type-checks', async () => {
    const instance = olderInstance();
    expect(instance).not.toContain('closeIdempotency');
    expect(instance).toContain('export const pool = createPool(');
    await writeFile(path.join(copy.dir, 'src/idempotency/instance.ts'), instance);
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(first.written).toBe(true);
    const routes = await readFile(path.join(copy.dir, 'src/routes/bookings.ts'), 'utf8');
    expect(routes).toContain('idempotency.createBooking.preHandler');
    expect(routes).not.toContain('closeIdempotency');
    expect(first.manual.map((m) => m.reason)).toContainEqual(expect.stringContaining("src/idempotency/instance.ts was written by an earlier apply, without closeIdempotency(): end its exported pool when the app closes (app.addHook('onClose', …))"));
    expect(await compile(copy.dir)).toBe('');
  });
});
