import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { inspectCommand, runInspect } from '../../src/cli/inspect.js';
import { UserError } from '../../src/errors.js';

/** The `inspect` command as a user runs it: JSON for machines, a grouped table for people, clear errors. */
describe('idempotency-builder inspect', () => {
  const root = path.resolve('fixtures/projects/koa-store');
  let out = '';
  afterEach(() => {
    vi.restoreAllMocks();
    out = '';
  });
  const capture = () =>
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out += String(chunk);
      return true;
    });

  it('--json prints exactly root, stack, findings and warnings', async () => {
    capture();
    await inspectCommand().parseAsync(['node', 'inspect', root, '--json']);
    const parsed = JSON.parse(out) as Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual(['root', 'stack', 'findings', 'warnings']);
    expect(parsed['root']).toBe(root);
    expect((parsed['findings'] as Array<{ id: string }>).map((f) => f.id)).toContain('POST /api/checkout/orders');
  });

  it('prints payment findings first, with the missing provider key called out', async () => {
    capture();
    await runInspect(root);
    const sections = out.split('\n').filter((l) => /^\S.*\(\d+\)$/.test(l));
    expect(sections).toEqual(['Payment calls (2)', 'Mutating endpoints (4)', 'Already protected (4)']);
    expect(out).toMatch(/src\/routes\/checkout\.ts:16\s+paypal v2\/checkout\/orders\/\{id\}\/capture\s+no provider key/);
    expect(out).toMatch(/POST \/api\/checkout\/orders\s+touches payment/);
  });

  it('refuses a missing or non-directory path with the fix', async () => {
    await expect(runInspect('does/not/exist')).rejects.toThrow(UserError);
    await expect(runInspect(path.join(root, 'package.json'))).rejects.toMatchObject({ message: expect.stringContaining('is not a directory') });
  });
});
