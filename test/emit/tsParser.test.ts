import { readdirSync } from 'node:fs';
import path from 'node:path';
import * as prettier from 'prettier';
import { describe, expect, it } from 'vitest';
import { formatOptions, withFastParser } from '../../src/emit/format.js';
import { generateScaffold } from '../../src/scaffold/index.js';
import { modelFor, ROOT } from '../scaffold/generateInto.js';

const FIXTURES = readdirSync(path.join(ROOT, 'fixtures/configs'))
  .filter((name) => name.endsWith('.json'))
  .map((name) => name.slice(0, -'.json'.length));

// generate formats TypeScript in the house style with prettier's babel-ts parser instead of its (much slower to load)
// typescript parser; that is only sound while both print our generated code identically. Files the scaffold marks as
// already formatted never reach prettier, and a text met in several fixtures is compared once.
describe('the house style formats generated TypeScript identically with babel-ts and typescript', () => {
  it('on every fixture config\'s scaffolding', async () => {
    const texts = new Map<string, string>();
    for (const fixture of FIXTURES) {
      for (const file of generateScaffold(await modelFor(fixture), { dir: 'src/idempotency' })) {
        if (!file.formatted && withFastParser(formatOptions(file.path)).parser === 'babel-ts') texts.set(file.contents, `${fixture}: ${file.path}`);
      }
    }
    // Few are left since the scaffold prints the house style itself (issue 20): suites adapted to another runner, and
    // files whose data leaves a line too long.
    expect(texts.size).toBeGreaterThan(0);
    for (const [contents, where] of texts) {
      const options = formatOptions(where.slice(where.indexOf(': ') + 2));
      const viaTypeScript = await prettier.format(contents, options);
      expect(await prettier.format(contents, withFastParser(options)), where).toBe(viaTypeScript);
    }
    // Formatting every scaffold twice is a few seconds on a quiet machine; a saturated one needs the headroom.
  }, 300_000);
});
