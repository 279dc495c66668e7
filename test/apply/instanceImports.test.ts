import { describe, expect, it } from 'vitest';
import { matchRelativeImports } from '../../src/apply/planApply.js';
import { renderInstance } from '../../src/apply/renderInstance.js';

describe('the instance apply writes imports the scaffold the way its index.ts does', () => {
  const instance = renderInstance('express');

  it('extensionless in a CommonJS scaffold (ts-node and ts-jest cannot load ./index.js where only index.ts exists)', () => {
    const index = 'import { IdempotencyCore } from "./core";\nimport { idempotent } from "./express";\nimport pg from "pg";\n';
    const out = matchRelativeImports(instance, index);
    expect(out).toContain("from './index';");
    expect(out).not.toContain('./index.js');
  });

  it('kept as ./index.js where the scaffold uses the suffix (ESM, NodeNext), or when there is nothing to follow', () => {
    expect(matchRelativeImports(instance, 'import { IdempotencyCore } from "./core.js";\n')).toBe(instance);
    expect(matchRelativeImports(instance, '')).toBe(instance);
    expect(matchRelativeImports(instance, 'import pg from "pg";\n')).toBe(instance);
  });

  it('leaves package specifiers alone', () => {
    expect(matchRelativeImports("import x from 'lib/thing.js';\nimport y from './y.js';\n", 'import a from "./a";\n')).toBe("import x from 'lib/thing.js';\nimport y from './y';\n");
  });
});
