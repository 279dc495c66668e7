import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generate, type GenerateResult } from '../../src/generate.js';
import { NOW, rawFixture } from '../helpers/fixtures.js';

export interface GeneratedProject extends GenerateResult {
  dir: string;
  /** Absolute path of what was written for the document: the single file, or the split folder. */
  documentPath: string;
  split: boolean;
}

/** Writes a fixture config into a fresh temp project and runs the real generate (which verifies before writing). */
export async function generateFixture(name: string, options: { format: 'html' | 'md'; split?: 'auto' | 'always' | 'never' }): Promise<GeneratedProject> {
  const dir = mkdtempSync(path.join(tmpdir(), `ib-split-${name}-`));
  const raw = rawFixture(name);
  delete raw['$schema'];
  writeFileSync(path.join(dir, 'idempotency.config.json'), JSON.stringify(raw, null, 2));
  const result = await generate({ cwd: dir, format: options.format, split: options.split, date: NOW.toISOString().slice(0, 10) });
  // generate reports a split document as its folder ("docs/idempotency-design/").
  const split = result.document.endsWith('/');
  const documentPath = path.join(dir, result.document).replace(/[\\/]$/, '');
  return { ...result, dir, documentPath, split };
}
