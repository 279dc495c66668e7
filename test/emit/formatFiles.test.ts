import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type * as Prettier from 'prettier';

// Counts real prettier.format calls, to prove when the slow pass is skipped.
const calls = vi.hoisted(() => ({ format: 0, parsers: [] as Array<string | undefined> }));
vi.mock('prettier', async (original) => {
  const actual = await original<typeof Prettier>();
  return {
    ...actual,
    format: async (...args: Parameters<typeof actual.format>) => {
      calls.format++;
      calls.parsers.push(args[1]?.parser as string | undefined);
      return actual.format(...args);
    },
  };
});

const { clearConfigCache } = await import('prettier');
const { clearFormatCache, formatFiles } = await import('../../src/emit/format.js');
const { planWrites } = await import('../../src/emit/planWrites.js');
const { applyPlan } = await import('../../src/emit/applyPlan.js');
const { generateScaffold } = await import('../../src/scaffold/index.js');
const { modelFor } = await import('../scaffold/generateInto.js');

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'ib-format-'));
  calls.format = 0;
  calls.parsers = [];
  clearFormatCache();
});
afterEach(() => rm(root, { recursive: true, force: true }));

const STORE = 'src/idempotency/pgStore.ts';
const rendered = (name = 'claim') => [
  { path: STORE, class: 'scaffold' as const, contents: `export async function ${name}(scope: string, key: string, fingerprint: string, leaseMs: number, fencingToken: bigint) { return [scope, key, fingerprint, leaseMs, fencingToken] }\n` },
  { path: 'docs/idempotency-design.html', class: 'managed' as const, contents: '<p>not formatted by prettier</p>\n' },
];

async function generate(files = rendered()) {
  const formatted = await formatFiles(files, root);
  await applyPlan(root, await planWrites(root, formatted), { date: '2026-12-02' });
  return formatted;
}

describe('formatFiles', () => {
  it('formats code in house style and records what it was formatted from', async () => {
    const [store] = await generate();
    expect(store!.contents).toContain('export async function claim(\n  scope: string,');
    expect(store!.contents).toContain("return [scope, key, fingerprint, leaseMs, fencingToken];\n");
    expect(store!.source).toMatch(/^[0-9a-f]{64}$/);
    expect(calls.format).toBe(1);
    // The house style reads generated TypeScript with babel-ts (same output, see tsParser.test.ts, far cheaper to load).
    expect(calls.parsers).toEqual(['babel-ts']);
  });

  it('skips prettier for files unchanged since written, and formats again when anything differs', async () => {
    const [first] = await generate();
    calls.format = 0;
    const [again] = await formatFiles(rendered(), root);
    expect(calls.format).toBe(0);
    expect(again!.contents).toBe(first!.contents);

    // The user edited the file: its text is no longer known to be prettier's output (to a fresh process, as a CLI
    // run is; this one remembers what it formatted).
    await writeFile(path.join(root, STORE), 'export const mine = 1;\n');
    clearFormatCache();
    expect((await formatFiles(rendered(), root))[0]!.contents).toBe(first!.contents);
    expect(calls.format).toBe(1);

    // New generator output, or a new prettier config: a different source.
    await writeFile(path.join(root, STORE), first!.contents); // reverting the edit hands the file back
    await generate();
    calls.format = 0;
    await formatFiles(rendered('claimKey'), root);
    expect(calls.format).toBe(1);
    await writeFile(path.join(root, '.prettierrc.json'), JSON.stringify({ printWidth: 200, semi: false }));
    await clearConfigCache(); // A CLI run is a fresh process; this test process has cached "no config here".
    clearFormatCache();
    const [wide] = await formatFiles(rendered(), root);
    expect(calls.format).toBe(2);
    expect(wide!.contents).not.toContain(';\n');
  });

  it('formats the same source once per process, whatever the disk holds', async () => {
    const [first] = await formatFiles(rendered(), root);
    const [again] = await formatFiles(rendered(), root);
    expect(calls.format).toBe(1);
    expect(again!.contents).toBe(first!.contents);
  });

  it('records the source in the manifest', async () => {
    const [store] = await generate();
    const manifest = JSON.parse(await readFile(path.join(root, '.idempotency-builder/manifest.json'), 'utf8')) as { files: Array<{ path: string; source?: string }> };
    expect(manifest.files.find((entry) => entry.path === STORE)?.source).toBe(store!.source);
    expect(manifest.files.find((entry) => entry.path.endsWith('.html'))).not.toHaveProperty('source');
  });
  it('keeps prettier output in the project cache for the next process, only when the run writes', async () => {
    const cacheDir = path.join(root, '.idempotency-builder/cache/format');
    const [first] = await formatFiles(rendered(), root);
    await expect(readdir(cacheDir)).rejects.toThrow(); // --check and --dry-run write nothing
    clearFormatCache();
    calls.format = 0;
    await formatFiles(rendered(), root, { writeCache: true });
    expect(calls.format).toBe(1);
    expect(await readdir(cacheDir)).toEqual([first!.source]);

    // A fresh process (nothing in memory, nothing written to the project yet) reads the cache instead of formatting.
    clearFormatCache();
    calls.format = 0;
    const [cached] = await formatFiles(rendered(), root);
    expect(calls.format).toBe(0);
    expect(cached).toEqual(first);

    // A corrupt entry is ignored and replaced.
    await writeFile(path.join(cacheDir, first!.source!), 'not what prettier wrote');
    clearFormatCache();
    const [again] = await formatFiles(rendered(), root, { writeCache: true });
    expect(calls.format).toBe(1);
    expect(again!.contents).toBe(first!.contents);
    clearFormatCache();
    calls.format = 0;
    await formatFiles(rendered(), root);
    expect(calls.format).toBe(0);

    // Other input is another entry; the writing run drops the ones it no longer uses.
    clearFormatCache();
    const [renamed] = await formatFiles(rendered('claimKey'), root, { writeCache: true });
    expect(await readdir(cacheDir)).toEqual([renamed!.source]);
  });

  it('follows a prettier key in package.json, as prettier does', async () => {
    await writeFile(path.join(root, 'package.json'), JSON.stringify({ name: 'app', prettier: { semi: false, printWidth: 200 } }));
    await clearConfigCache();
    const [store] = await formatFiles(rendered(), root);
    expect(store!.contents).not.toContain(';\n');
    // A user's config leaves the parser to prettier (its plugins may hook the typescript parser by name).
    expect(calls.parsers).toEqual([undefined]);
  });

  // Issue 20: every file of a TypeScript scaffold (idempotency.test.ts last) is printed in the house style, so a cold
  // generate in a project without a prettier config never calls prettier (and formatFiles never imports it).
  it('formats nothing for a cold TypeScript scaffold in a project without a prettier config', async () => {
    for (const fixture of ['express-stripe-payments', 'minimal-one-action']) {
      const files = generateScaffold(await modelFor(fixture), { dir: 'src/idempotency' });
      const out = await formatFiles(files, root);
      expect(out.map((file) => file.contents)).toEqual(files.map((file) => file.contents));
    }
    expect(calls.format).toBe(0);
  }, 120_000);
});
