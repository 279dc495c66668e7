import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as prettier from 'prettier';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { HOUSE_STYLE, formatFiles } from '../../src/emit/format.js';
import { buildDesign } from '../../src/model/index.js';
import { generateScaffold } from '../../src/scaffold/index.js';

const CONFIGS = path.resolve(import.meta.dirname, '../../fixtures/configs');
const fixtures = (await readdir(CONFIGS)).filter((name) => name.endsWith('.json'));
// A project without a prettier config, so formatFiles applies the house style.
const project = await mkdtemp(path.join(os.tmpdir(), 'ib-house-'));
afterAll(() => rm(project, { recursive: true, force: true }));

/**
 * What formatFiles returns must be a fixed point of the house style: otherwise a second `generate` (or a teammate's
 * editor-on-save) would see a difference, and "a second run reports everything unchanged" would not hold.
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
      const formatted = await prettier.format(file.contents, { ...HOUSE_STYLE, filepath: file.path, proseWrap: 'preserve', embeddedLanguageFormatting: 'off', endOfLine: 'lf' });
      expect(formatted, `${file.path} is not in house style (prettier --single-quote --print-width 110)`).toBe(file.contents);
    }
  });
});
