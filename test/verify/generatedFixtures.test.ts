import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generate } from '../../src/generate.js';
import { formatFinding, verifyPath } from '../../src/verify/index.js';
import { fixtureNames } from '../helpers/fixtures.js';
import { generateFixture } from '../split/generateFixture.js';

// generate already refuses to write a document that fails verification; this checks the written
// result from disk too, the way a user's `idempotency-builder verify` would see it.
describe.each(fixtureNames())('verify on what generate writes for %s', (name) => {
  for (const format of ['html', 'md'] as const) {
    for (const split of ['auto', 'always'] as const) {
      it(`${format}, split ${split}: no findings`, async () => {
        const project = await generateFixture(name, { format, split });
        expect((await verifyPath(project.documentPath)).map(formatFinding)).toEqual([]);
      });
    }
  }
});

describe('verify on a design built from hostile config values', () => {
  // Markup, pipes, backticks and comment terminators in names must not break links, anchors or tables.
  const hostile = {
    title: 'Payments </title><script>alert(1)</script>',
    actions: [
      {
        name: '<img src=x onerror=alert(1)>',
        trigger: 'http',
        route: 'POST /a|b/`tick`/-->',
        significantFields: ['amount|x', '`currency`'],
        source: 'src/<b>.ts:1',
        steps: [{ name: 'reserve<stock>', compensation: 'release "stock"' }, { name: 'charge|card' }],
      },
      { name: 'refund_payment_', trigger: 'webhook', route: 'POST /hooks/[id]', significantFields: ['id'] },
    ],
    stack: { language: 'typescript', framework: 'express', database: 'postgres' },
    concurrency: 'multi-instance',
    retention: '24h',
    detectionLatency: '50ms',
  };

  for (const format of ['html', 'md'] as const) {
    for (const split of ['never', 'always'] as const) {
      it(`${format}, split ${split}: generate writes it and verify finds nothing`, async () => {
        const dir = mkdtempSync(path.join(tmpdir(), 'ib-hostile-'));
        writeFileSync(path.join(dir, 'idempotency.config.json'), JSON.stringify(hostile));
        const result = await generate({ cwd: dir, format, split, date: '2026-12-02' });
        const findings = await verifyPath(path.join(dir, result.document).replace(/[\\/]$/, ''));
        expect(findings.map(formatFinding)).toEqual([]);
      });
    }
  }
});
