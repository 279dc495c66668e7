import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { walkProject } from '../../src/inspect/files/walkProject.js';
import { detectors, detectorsFor, wants } from '../../src/inspect/detectors/registry.js';

/** The answers detectorsFor replaced: a case-insensitive test of every mention, then each detector's own test. */
function oneByOne(rel: string, text: string): { mentioned: boolean; wanted: string[] } {
  const mentioned = detectors.some((d) => (!d.paths || d.paths.test(rel)) && new RegExp(d.mentions.source, 'i').test(text));
  return { mentioned, wanted: mentioned ? detectors.filter((d) => wants(d, rel, text)).map((d) => d.name) : [] };
}

const names = (rel: string, text: string) => {
  const found = detectorsFor(rel, text);
  return { mentioned: found.mentioned, wanted: found.wanted.map((d) => d.name) };
};

describe('detector mentions from one scan', () => {
  it('answers as one test per detector on every fixture file', async () => {
    const root = path.resolve(import.meta.dirname, '../../fixtures');
    const { files } = await walkProject(root);
    expect(files.length).toBeGreaterThan(100);
    for (const file of files) {
      const text = await readFile(file.abs, 'utf8');
      expect(names(file.rel, text), file.rel).toEqual(oneByOne(file.rel, text));
    }
  });

  it('finds mentions that match at the same position as another, inside another, or only after it', () => {
    const cases: Array<[string, string]> = [
      // payments (stripe) and webhooks (constructEvent) and existing-idempotency (idempotency) overlap nowhere here,
      // but `upsert` starts where `.upsert(` might be taken by another alternative first.
      ['src/a.ts', 'stripe.webhooks.constructEvent(body, sig, secret); db.upsert({ idempotencyKey });'],
      // Two mentions starting at the same character: `.create(` (record-inserts) and `createRoute(` (http-routes).
      ['src/b.ts', 'x.createRoute(y)'],
      ['src/c.ts', 'api.post("/orders", handler); setInterval(tick, 1000); new Pool({ connectionString })'],
      // Case: only existing-idempotency and payments are case-insensitive on their own.
      ['src/d.ts', 'STRIPE UNIQUE MUTATION CRONJOB'],
      ['src/e.ts', 'nothing to see here'],
      ['src/app/api/orders/route.ts', 'export async function POST() {}'],
    ];
    for (const [rel, text] of cases) expect(names(rel, text), text).toEqual(oneByOne(rel, text));
  });

  it('keeps a file that only a case-insensitive mention names as mentioned, with no detector run on it', () => {
    // `MUTATION` is no `\bMutation\b` for graphql-mutations, but the file is still parsed for cross-file facts.
    expect(names('src/f.ts', 'const MUTATION = 1;')).toEqual({ mentioned: true, wanted: [] });
  });
});
