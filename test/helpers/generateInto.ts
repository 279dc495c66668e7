import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generate, type GenerateResult } from '../../src/generate.js';
import { NOW } from './fixtures.js';

/** Runs the real pipeline for a raw config in a fresh temp project; nothing is written (dry run). */
export async function renderConfig(raw: unknown, options: { format?: 'html' | 'md'; write?: boolean } = {}): Promise<GenerateResult & { dir: string; text: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'ib-render-'));
  writeFileSync(path.join(dir, 'idempotency.config.json'), JSON.stringify(raw, null, 2));
  // Single file here: the split layout has its own tests.
  const result = await generate({ cwd: dir, format: options.format, split: 'never', dryRun: !options.write, date: NOW.toISOString().slice(0, 10) });
  const doc = result.plan.find((item) => item.path === result.document);
  if (!doc) throw new Error(`no document in plan for ${result.document}`);
  return { ...result, dir, text: doc.contents };
}
