import { cpSync, mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inspectProject } from '../../src/inspect/index.js';
import { ROOT } from '../helpers/fixtures.js';

describe('the layer idempotency-builder generated', () => {
  it('is not reported as the project\'s own crons or protection once the manifest lists it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ib-own-'));
    cpSync(path.join(ROOT, 'fixtures/example/src'), path.join(dir, 'src'), { recursive: true, filter: (src) => !src.includes('/idempotency') });
    cpSync(path.join(ROOT, 'fixtures/example/package.json'), path.join(dir, 'package.json'));
    mkdirSync(path.join(dir, 'src/idempotency'), { recursive: true });
    // The shape of generated code that detectors would otherwise pick up.
    writeFileSync(path.join(dir, 'src/idempotency/core.ts'), 'export function renew(ms: number) { return setInterval(() => undefined, ms); }\n');
    writeFileSync(path.join(dir, 'src/idempotency/store.sql'), 'CREATE TABLE idempotency_store (scope text, key text, PRIMARY KEY (scope, key));\n');
    const before = await inspectProject(dir);
    expect(before.findings.some((f) => f.file.startsWith('src/idempotency/'))).toBe(true);

    mkdirSync(path.join(dir, '.idempotency-builder'));
    writeFileSync(
      path.join(dir, '.idempotency-builder/manifest.json'),
      JSON.stringify({ files: [{ path: 'src/idempotency/core.ts', class: 'scaffold', sha256: 'x' }, { path: 'src/idempotency/store.sql', class: 'scaffold', sha256: 'y' }] }),
    );
    const after = await inspectProject(dir);
    expect(after.findings.filter((f) => f.file.startsWith('src/idempotency/'))).toEqual([]);
    expect(after.findings.map((f) => f.id)).toEqual(expect.arrayContaining(['POST /payments']));
  });
});
