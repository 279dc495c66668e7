import { describe, expect, it } from 'vitest';
import { transpileToJavaScript } from '../../src/scaffold/javascript/transpile.js';

const SOURCE = `/** Header of the file. */

import type { Pool } from 'pg';
import pg from 'pg';
import { createHash } from 'node:crypto';
import { quoteIdent, type StoreOptions } from './pgStore.js';

export { quoteIdent } from './pgStore.js';
export type { StoreOptions } from './pgStore.js';

export interface Shape {
  readonly table: string;
}

/** Why this exists. */
export function tableHash(shape: Shape, pool?: Pool): string {
  const name: string = quoteIdent(shape.table);

  return createHash('sha256').update(name + String(pool !== undefined && pg.Pool)).digest('hex');
}

export const SQL = \`SELECT 1

FROM t\`;
`;

describe('transpileToJavaScript', () => {
  it('as an ES module: types gone, comments, blank lines and template literals kept', () => {
    const js = transpileToJavaScript(SOURCE, 'module', 'hash.ts');
    expect(js).toMatch(/^\/\*\* Header of the file\. \*\/\n\n/);
    expect(js.replace(/\/\*[^]*?\*\//g, '')).not.toMatch(/interface|type |: string|Pool \}/);
    expect(js).toContain("export { quoteIdent } from './pgStore.js';");
    expect(js).toContain('export function tableHash(shape, pool) {');
    expect(js).not.toContain('import type');
    expect(js).toMatch(/quoteIdent\(shape\.table\);\n\n {4}return/);
    expect(js).toContain('`SELECT 1\n\nFROM t`');
  });

  it('keeps the types as JSDoc, folded into the doc comment a declaration already has', () => {
    const js = transpileToJavaScript(SOURCE, 'module', 'hash.ts');
    expect(js).toContain("/** @typedef {import('./pgStore.js').StoreOptions} StoreOptions */");
    expect(js).toContain('/**\n * @typedef {object} Shape\n * @property {string} table\n */');
    expect(js).toContain(
      "/**\n * Why this exists.\n *\n * @param {Shape} shape\n * @param {import('pg').Pool} [pool]\n * @returns {string}\n */\nexport function tableHash(shape, pool) {",
    );
    expect(js).toContain('/** @type {string} */\n    const name = quoteIdent(shape.table);');
    expect(js).not.toContain('@__jsdoc__');
  });

  it('writes casts, non-null assertions, explicit type arguments and parameter properties as JavaScript can check them', () => {
    const source = `import type { Store } from './types.js';
export class Holder implements Store {
  constructor(private readonly limit: number) {}
  first(items: Map<string, number>, key: string): number {
    const value = items.get(key) as number;
    return value + this.limit + this.read!<number>(key);
  }
  read?<T>(key: string): T;
}
export function answer(): () => number {
  return (): number => 42;
}
`;
    const js = transpileToJavaScript(source, 'commonjs', 'holder.ts');
    expect(js).toContain("/** @typedef {import('./types.js').Store} Store */");
    expect(js).toContain('@implements {Store}');
    expect(js).toContain('/** @type {number} */\n    limit;');
    expect(js).toContain('this.limit = limit;');
    expect(js).toContain('/** @type {number} */ (items.get(key))');
    expect(js).toContain('/** @type {NonNullable<typeof this.read>} */ (this.read)(key)');
    // A comment spanning lines after `return` would end the statement: the arrow is parenthesized.
    expect(js).toMatch(/return \(\/\*\* @returns \{number\} \*\/ \(\) => 42\)|return \/\*\* @returns \{number\} \*\/ \(\) => 42/);
    expect(() => new Function('require', 'module', 'exports', js)).not.toThrow();
  });

  it('as CommonJS: one require per module, module.exports with local and re-exported names, strict mode', () => {
    const js = transpileToJavaScript(SOURCE, 'commonjs', 'hash.ts');
    expect(js).toContain("'use strict';");
    expect(js).toContain("const pg = require('pg');");
    expect(js).toContain("const { createHash } = require('node:crypto');");
    expect(js.match(/require\('\.\/pgStore\.js'\)/g)).toHaveLength(1);
    expect(js).toContain('module.exports = { quoteIdent, tableHash, SQL };');
    expect(js).not.toMatch(/^(import|export) /m);
    expect(() => new Function('require', 'module', 'exports', js)).not.toThrow();
  });

  it('refuses what it cannot express in CommonJS rather than emit broken code', () => {
    expect(() => transpileToJavaScript('if (import.meta.url) console.log(1);\nexport const a = 1;\n', 'commonjs', 'job.ts')).toThrow(/job\.ts:1 uses import\.meta/);
    expect(() => transpileToJavaScript('export default function main() {}\n', 'commonjs', 'main.ts')).toThrow(/export default/);
    expect(() => transpileToJavaScript('const x: number = ;\n', 'module', 'broken.ts')).toThrow(/bug: generated broken\.ts does not transpile/);
  });
});
