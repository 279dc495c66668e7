import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

const GOLDEN_DIR = join(dirname(fileURLToPath(import.meta.url)), 'golden');

/**
 * Compares output with a checked-in file. UPDATE_GOLDEN=1 rewrites the files (review the diff);
 * a missing file fails rather than being created silently.
 */
export function expectGolden(name: string, actual: string): void {
  const file = join(GOLDEN_DIR, name);
  if (process.env.UPDATE_GOLDEN === '1') {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, actual);
    return;
  }
  if (!existsSync(file)) throw new Error(`Golden file ${name} is missing; run with UPDATE_GOLDEN=1 and review it`);
  expect(actual, `golden ${name}`).toBe(readFileSync(file, 'utf8'));
}
