import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { generate } from '../../src/generate.js';
import { copyFixture, type FixtureCopy } from './fixtureApp.js';

describe('the document records what apply did', () => {
  let copy: FixtureCopy;
  beforeAll(async () => {
    copy = await copyFixture('express');
  });
  afterAll(async () => {
    await copy?.remove();
  });

  it('lists the applied edits and the manual steps with their reasons, escaped', async () => {
    const raw = JSON.parse(await readFile(path.join(copy.dir, 'idempotency.config.json'), 'utf8')) as { actions: Array<Record<string, unknown>> };
    // A consumer registered in a shape apply does not know: it must stay manual, with why.
    raw.actions.push({ name: 'syncLedger<x>', trigger: 'consumer', route: 'ledger.sync', significantFields: ['entryId'], source: 'src/routes/orders.ts:1' });
    const { writeFile } = await import('node:fs/promises');
    await writeFile(path.join(copy.dir, 'idempotency.config.json'), JSON.stringify(raw, null, 2));
    await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    const result = await generate({ cwd: copy.dir, format: 'md', date: '2026-01-15', diagrams: 'beautiful-mermaid' });
    const doc = await readFile(path.join(copy.dir, result.document), 'utf8');
    const section = doc.slice(doc.indexOf('Wiring in your code'));
    expect(section).toContain('mounts idempotency.createOrder before the handler of POST /orders');
    expect(section).toContain('the consumer is registered in a shape apply does not recognise');
    expect(section).toContain('syncLedger\\<x\\>');
  });
});
