import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as prettier from 'prettier';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { formatFiles, hasBreakableLongLine, houseStyleFor } from '../../src/emit/format.js';
import { buildDesign } from '../../src/model/index.js';
import { generateScaffold } from '../../src/scaffold/index.js';

const CONFIGS = path.resolve(import.meta.dirname, '../../fixtures/configs');
const fixtures = (await readdir(CONFIGS)).filter((name) => name.endsWith('.json'));
// A project without a prettier config: formatFiles then relies on the generators writing house style.
const project = await mkdtemp(path.join(os.tmpdir(), 'ib-house-'));
afterAll(() => rm(project, { recursive: true, force: true }));

/**
 * formatFiles runs prettier only on files where interpolation pushed a line past the print width, trusting the
 * templates for the rest. This is the check behind that trust: what it returns must be exactly house style.
 */
describe.each(fixtures)('generated files for %s', (fixture) => {
  it('come out of formatFiles in house style, and managed ones say "do not edit"', async () => {
    const config = parseConfig(await readFile(path.join(CONFIGS, fixture), 'utf8'));
    if (config.scaffold === false) return;
    const model = buildDesign(config, undefined, { now: new Date('2026-12-02T00:00:00Z') });
    const files = await formatFiles(generateScaffold(model, { dir: config.scaffold.dir }), project);
    for (const file of files) {
      if (file.class === 'managed') expect(file.contents, file.path).toMatch(/do not edit/i);
      if (!/\.(md|ts|js|mjs|cjs|tsx|json|ya?ml)$/.test(file.path)) continue;
      const formatted = await prettier.format(file.contents, { ...houseStyleFor(file.path), filepath: file.path, proseWrap: 'preserve', embeddedLanguageFormatting: 'off', endOfLine: 'lf' });
      expect(formatted, `${file.path} is not in house style (prettier --print-width 110, --single-quote for code)`).toBe(file.contents);
    }
  });
});

describe('hasBreakableLongLine', () => {
  const long = (prefix: string) => prefix + 'x'.repeat(120);
  it('flags long plain code, not comments, strings or template literal bodies', () => {
    expect(hasBreakableLongLine(`const a = call(${long('')});`)).toBe(true);
    expect(hasBreakableLongLine(long('// '))).toBe(false);
    expect(hasBreakableLongLine(long(' * '))).toBe(false);
    expect(hasBreakableLongLine(`it('${long('')}', () => {});`)).toBe(false);
    expect(hasBreakableLongLine(['const sql = `', long('SELECT '), '`;'].join('\n'))).toBe(false);
    expect(hasBreakableLongLine(['const sql = `SELECT 1`;', `const b = f(${long('')});`].join('\n'))).toBe(true);
  });
});
