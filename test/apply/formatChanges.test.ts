import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatChanges } from '../../src/apply/formatChanges.js';

const roots: string[] = [];
afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

// TypeScript's printer (a JavaScript scaffold's instance is transpiled) indents by four spaces.
const transpiled = "'use strict';\n\nfunction closeIdempotency() {\n    if (closing === undefined)\n        closing = pool.end();\n    return closing;\n}\n";
const edited = "const x = require('y');\nfunction  keep( ) {    return 1 }\n";

describe('formatChanges without the project’s prettier installed', () => {
  it('formats the files apply creates in the house style, and leaves edits of the user’s files as made', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'ib-format-'));
    roots.push(root);
    await writeFile(path.join(root, 'package.json'), JSON.stringify({ name: 'p' }));
    const out = await formatChanges(root, [
      { path: 'src/idempotency/instance.js', after: transpiled },
      { path: 'src/routes/auth.js', before: 'x', after: edited },
    ]);
    expect(out[0]?.after).toContain('\n  if (closing === undefined) closing = pool.end();\n');
    expect(out[1]?.after).toBe(edited);
  });

  it('follows the project’s prettier config for a created file (tabs here)', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'ib-format-'));
    roots.push(root);
    await writeFile(path.join(root, 'package.json'), JSON.stringify({ name: 'p' }));
    await writeFile(path.join(root, '.prettierrc.json'), JSON.stringify({ useTabs: true, singleQuote: true }));
    const [created] = await formatChanges(root, [{ path: 'src/idempotency/instance.js', after: transpiled }]);
    expect(created?.after).toContain('\n\tif (closing === undefined) closing = pool.end();\n');
  });
});
