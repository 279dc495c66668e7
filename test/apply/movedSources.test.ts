import { describe, expect, it } from 'vitest';
import type { ActionConfig } from '../../src/config/schema.js';
import { movedSources } from '../../src/apply/movedSources.js';
import { lineMapping } from '../../src/emit/unifiedDiff.js';

describe('lineMapping', () => {
  it('follows kept lines past inserted ones, and a rewritten line to its replacement', () => {
    const before = ['import a', '', 'router.post("/x", h)', 'end'].join('\n');
    const after = ['import a', 'import { idempotency } from "./i"', '', 'router.post("/x", idempotency.x, h)', 'end'].join('\n');
    const map = lineMapping(before, after);
    expect([1, 2, 3, 4].map(map)).toEqual([1, 3, 4, 5]);
  });
});

describe('movedSources', () => {
  const action = (source: string): ActionConfig => ({ name: 'pay', trigger: 'http', route: 'POST /x', significantFields: [], source }) as ActionConfig;
  const change = { path: 'src/routes.ts', before: 'a\nb\nc\n', after: 'import i\na\n@Idempotent()\nb\nc\n' };

  it("moves a source to its line after apply's edits and leaves the rest of the config text as it was", () => {
    const text = '{\n  "actions": [{ "name": "pay",   "source": "./src/routes.ts:2" }]\n}\n';
    expect(movedSources(text, [action('./src/routes.ts:2')], [change])).toEqual({ text: '{\n  "actions": [{ "name": "pay",   "source": "src/routes.ts:4" }]\n}\n', count: 1 });
  });

  it('leaves sources in files apply did not edit, and a source text that appears twice, alone', () => {
    expect(movedSources('{"source": "src/other.ts:2"}', [action('src/other.ts:2')], [change])).toBeUndefined();
    expect(movedSources('{"source": "src/routes.ts:2", "again": "src/routes.ts:2"}', [action('src/routes.ts:2')], [change])).toBeUndefined();
  });
});
