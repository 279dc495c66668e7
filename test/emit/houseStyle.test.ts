import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';
import { describe, expect, it } from 'vitest';
import { HOUSE_STYLE } from '../../src/emit/format.js';

const TEMPLATES = fileURLToPath(new URL('../../templates/scaffold/', import.meta.url));

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? walk(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

// generate skips prettier for these files (they are copied verbatim), so they must already be formatted.
describe('scaffold templates are kept in the house style', () => {
  it.each(walk(TEMPLATES).map((file) => relative(TEMPLATES, file)))('%s', async (file) => {
    const text = readFileSync(join(TEMPLATES, file), 'utf8');
    const options = { ...HOUSE_STYLE, filepath: file, embeddedLanguageFormatting: 'off', endOfLine: 'lf' } as const;
    expect(await prettier.check(text, options), `run: npx prettier --single-quote --print-width 110 --write templates/scaffold/${file}`).toBe(true);
  });
});
