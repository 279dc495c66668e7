import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { snapshotOf } from '../../src/emit/protectionSnapshot.js';
import type { Inspection } from '../../src/inspect/types.js';
import { buildDesign } from '../../src/model/index.js';
import { renderDocument } from '../../src/render/renderDocument.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const NOW = new Date('2026-01-15T00:00:00Z');

/** Why the inspector says the Stripe webhook and the BullMQ worker already deduplicate: code from the app, markup and all. */
const INSPECTION: Pick<Inspection, 'findings'> = {
  findings: [
    {
      kind: 'webhook',
      id: 'webhook stripe',
      file: 'src/webhooks/stripe.ts',
      line: 12,
      provider: 'stripe',
      route: 'POST /webhooks/stripe',
      verifiesSignature: true,
      dedupesEventId: true,
      dedupeEvidence: { file: 'src/webhooks/stripe.ts', line: 18, detail: "atomic claim keyed by the id: await redis.set(`evt:${event.id}`, '1', 'NX') // <b>seen</b> | & more" },
    },
    {
      kind: 'consumer',
      id: 'consumer bullmq receipts',
      file: 'src/worker.ts',
      line: 4,
      broker: 'bullmq',
      queue: 'receipts',
      dedupes: true,
      dedupeEvidence: { file: 'src/worker.ts', line: 6, detail: 'store lookup keyed by the id: await db.processed.findUnique({ where: { id: job.id } })' },
    },
    // No evidence, no credit: "dedupes" is only ever claimed on evidence.
    { kind: 'webhook', id: 'webhook adyen', file: 'src/webhooks/adyen.ts', line: 3, provider: 'adyen', verifiesSignature: true, dedupesEventId: false },
  ],
};

async function model(inspection: Parameters<typeof buildDesign>[1]) {
  const raw = JSON.parse(await readFile(path.join(ROOT, 'fixtures/configs/express-stripe-payments.json'), 'utf8')) as Record<string, unknown>;
  return buildDesign(parseConfig(JSON.stringify(raw)), inspection, { now: NOW });
}

describe('why inspection credits a webhook or consumer with deduplication reaches the document', () => {
  it('listed under protection already in the code with its evidence, the same from init\'s snapshot as from the inspection', async () => {
    const fresh = await model(INSPECTION);
    expect(fresh.existingProtection).toEqual([
      {
        file: 'src/webhooks/stripe.ts',
        line: 18,
        mechanism: 'event-id-dedupe',
        detail: "stripe webhook POST /webhooks/stripe deduplicates by event id: atomic claim keyed by the id: await redis.set(`evt:${event.id}`, '1', 'NX') // <b>seen</b> | & more",
      },
      { file: 'src/worker.ts', line: 6, mechanism: 'message-id-dedupe', detail: 'bullmq consumer of receipts deduplicates by message id: store lookup keyed by the id: await db.processed.findUnique({ where: { id: job.id } })' },
    ]);
    // generate renders from the snapshot init recorded (it never re-inspects): the same credit, the same words.
    const recorded = JSON.parse(JSON.stringify(snapshotOf({ inspection: INSPECTION }).inspection)) as Parameters<typeof buildDesign>[1];
    expect((await model(recorded)).existingProtection).toEqual(fresh.existingProtection);
  });

  it('escaped in HTML and in Markdown', async () => {
    const design = await model(INSPECTION);
    const [html] = await renderDocument(design, { format: 'html', output: 'docs/design.html', figures: [], excerpts: {} });
    expect(html!.contents).toContain('atomic claim keyed by the id: await redis.set(`evt:${event.id}`, &#39;1&#39;, &#39;NX&#39;) // &lt;b&gt;seen&lt;/b&gt; | &amp; more');
    expect(html!.contents).not.toContain('<b>seen</b>');
    const [md] = await renderDocument(design, { format: 'md', output: 'docs/design.md', figures: [], excerpts: {} });
    const row = md!.contents.split('\n').find((line) => line.includes('event-id-dedupe'));
    expect(row).toBeDefined();
    // A table row stays one row: the pipe is escaped, and the markup is text.
    expect(row).toContain('\\|');
    expect(row).not.toContain('<b>seen</b>');
  });
});
