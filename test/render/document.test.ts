import { describe, expect, it } from 'vitest';
import { fixtureNames, loadFixture, rawFixture } from '../helpers/fixtures.js';
import { renderConfig } from '../helpers/generateInto.js';

const SECTION_TITLES = [
  '1. Action Analysis',
  '2. Idempotency Key Design',
  '3. Request Fingerprinting',
  '4. Concurrency Control',
  '5. Partial Failure Recovery',
  '6. Payment Provider Coordination',
  '7. Multi-Step (Saga) Idempotency',
  '8. Security',
  '9. Anti-Patterns to Avoid',
  '10. Monitoring and Alerting',
  '11. Test Scenarios',
  '12. Build Order',
];

describe.each(fixtureNames())('document for %s', (name) => {
  for (const format of ['html', 'md'] as const) {
    it(`${format}: matches the golden file`, async () => {
      const { text } = await renderConfig(rawFixture(name), { format });
      await expect(text).toMatchFileSnapshot(`__golden__/${name}.${format === 'md' ? 'md' : 'html'}`);
    });

    it(`${format}: is tailored to the config`, async () => {
      const config = loadFixture(name);
      const rendered = await renderConfig(rawFixture(name), { format });
      const { model } = rendered;
      // Read Markdown as a reader sees it: backslash escapes removed.
      const text = format === 'md' ? rendered.text.replace(/\\([^\s])/g, '$1') : rendered.text.replace(/&amp;/g, '&').replace(/<wbr>/g, '');
      for (const title of SECTION_TITLES) expect(text).toContain(title);
      for (const action of config.actions) {
        expect(text).toContain(action.name);
        if (action.route) expect(text).toContain(action.route);
        for (const field of action.significantFields) expect(text).toContain(field);
      }
      expect(text).toContain(model.stack.databaseLabel);
      if (config.stack.framework !== 'unknown' && config.stack.framework !== 'none') expect(text).toContain(model.stack.frameworkLabel);
      for (const action of model.actions) expect(text).toContain(`${action.lockTimeoutMs / 1000} seconds`);
      expect(text).toContain(`Retention: ${model.retention.justification.length > 0 ? '' : 'x'}`);
      expect(text).toContain('2026-12-02');
    });
  }
});

describe('HTML document', () => {
  it('is self-contained: inline CSS, no script, no external asset', async () => {
    const { text } = await renderConfig(rawFixture('express-stripe-payments'));
    expect(text).toMatch(/<style>[\s\S]+<\/style>/);
    expect(text).not.toMatch(/<script/i);
    expect(text).not.toMatch(/<link[^>]+stylesheet/i);
    expect(text).not.toMatch(/(src|href)="(https?:)?\/\//i);
    expect(text).not.toMatch(/@import/);
  });

  it('links every table-of-contents entry and deliverable to an element that exists', async () => {
    const { text } = await renderConfig(rawFixture('nestjs-adyen-saga'));
    const ids = new Set([...text.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]));
    const targets = [...text.matchAll(/href="#([^"]+)"/g)].map((m) => m[1]);
    expect(targets.length).toBeGreaterThan(20);
    for (const target of targets) expect(ids.has(target), `#${target}`).toBe(true);
    expect(text.match(/data-deliverable="/g)).toHaveLength(10);
  });
});

describe('determinism', () => {
  it.each(['html', 'md'] as const)('%s: the same config renders byte-identical output twice', async (format) => {
    const first = await renderConfig(rawFixture('nestjs-adyen-saga'), { format });
    const second = await renderConfig(rawFixture('nestjs-adyen-saga'), { format });
    expect(second.text).toBe(first.text);
    expect(second.text).not.toContain(first.dir);
  });
});

describe('scaffolding availability', () => {
  it('generates the reference target when the stack has none, and says so in the terminal and the document', async () => {
    const koa = rawFixture('nestjs-adyen-saga');
    // Koa has a target on PostgreSQL; a document store has none: the Koa adapter on the reference store stands in.
    koa.stack = { ...(koa.stack as Record<string, unknown>), framework: 'koa', database: 'mongodb' };
    const { warnings, plan, text } = await renderConfig(koa);
    expect(warnings).toEqual([expect.stringContaining('No scaffolding target for TypeScript + Koa + MongoDB yet: src/idempotency holds the reference target instead (Koa + PostgreSQL')]);
    expect(plan.some((item) => item.path === 'src/idempotency/koa.ts')).toBe(true);
    expect(text).toContain('holds the reference target instead');
  });

  it('stays quiet when it writes the scaffolding', async () => {
    const { warnings, plan } = await renderConfig(rawFixture('express-stripe-payments'));
    expect(warnings).toEqual([]);
    expect(plan.some((item) => item.path === 'src/idempotency/express.ts')).toBe(true);
  });
});
