import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { buildDesign } from '../../src/model/index.js';
import { renderDocument } from '../../src/render/renderDocument.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * stripe-samples/accept-a-payment@1a57c3b2's frontend has a form per payment method: apply edits 24 components the
 * same way. The document says so once, with the places, instead of 24 sentences in a row.
 */
describe('the wiring table of the document', () => {
  it('groups the same client edit made in many components, and keeps every other edit as it is', async () => {
    const raw = JSON.parse(await readFile(path.join(ROOT, 'fixtures/configs/express-stripe-payments.json'), 'utf8')) as Record<string, unknown>;
    const design = buildDesign(parseConfig(JSON.stringify(raw)), undefined, { now: new Date('2026-01-15T00:00:00Z') });
    const route = 'POST /create-payment-intent';
    const forms = ['Card', 'Ideal', 'Sofort'].map((name, i) => ({ file: `client/src/${name}.jsx`, summary: `${name}Form sends the Idempotency-Key header from useIdempotencyKey() to ${route} (line ${20 + i})` }));
    const applied = [{ file: 'server/src/server.ts', summary: `mounts idempotency.x before the handler of ${route}` }, ...forms, { file: 'client/src/Cart.jsx', summary: 'Cart passes a key from useIdempotencyKey() to checkout, which sends it to POST /checkout (line 4)' }];
    design.actions[0]!.wiring = { applied, manual: [] };
    const [md] = await renderDocument(design, { format: 'md', output: 'docs/design.md', figures: [], excerpts: {} });
    const section = md!.contents.slice(md!.contents.indexOf('Wiring in your code'));
    expect(section).toContain(`3 components send the Idempotency-Key header from useIdempotencyKey() to ${route}: \`client/src/Card.jsx:20\` (CardForm), \`client/src/Ideal.jsx:21\` (IdealForm), \`client/src/Sofort.jsx:22\` (SofortForm)`);
    expect(section).toContain('`client/src/Cart.jsx`: Cart passes a key from useIdempotencyKey() to checkout');
    expect(section).toContain(`\`server/src/server.ts\`: mounts idempotency.x before the handler of ${route}`);
    expect(section).not.toContain('CardForm sends');
    // One entry a line: the row stays one Markdown line, its entries split by <br>.
    const row = section.split('\n').find((line) => line.startsWith(`| ${design.actions[0]!.name} |`))!;
    expect(row.split('<br>')).toHaveLength(3);
    const [html] = await renderDocument(design, { format: 'html', output: 'docs/design.html', figures: [], excerpts: {} });
    expect(html!.contents).toContain('before the handler of POST /create-payment-intent<br>3 components send');
  });
});
