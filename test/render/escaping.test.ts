import { describe, expect, it } from 'vitest';
import { renderConfig } from '../helpers/generateInto.js';

const hostile = {
  title: 'Payments </title><script>alert(1)</script>',
  actions: [
    {
      name: '<img src=x onerror=alert(1)>',
      trigger: 'http',
      route: 'POST /a|b/`tick`/-->',
      significantFields: ['amount|x', '`currency`'],
      source: 'src/<b>.ts:1',
      description: 'Creates | a **charge** with `code` and <i>markup</i> & entities',
      steps: [{ name: 'reserve<stock>', compensation: 'release "stock"' }, { name: 'charge|card' }],
    },
  ],
  stack: { language: 'typescript', framework: 'express', database: 'postgres' },
  concurrency: 'multi-instance',
  retention: '24h',
  detectionLatency: '50ms',
};

describe('escaping user values', () => {
  it('HTML: no injected element, attribute or comment terminator survives', async () => {
    const { text } = await renderConfig(hostile, { format: 'html' });
    expect(text).not.toContain('<img');
    expect(text).not.toContain('<script');
    expect(text).not.toContain('<i>markup');
    expect(text).not.toContain('<b>.ts');
    expect(text).toContain('&lt;img src=x onerror=alert(1)&gt;');
    // A "-->" in a route must not close any comment early: every comment opener has its closer.
    const withoutComments = text.replace(/<!--[\s\S]*?-->/g, '');
    expect(withoutComments).not.toContain('-->');
    expect(text.match(/<title>/g)).toHaveLength(1);
  });

  it('Markdown: tables keep their columns, code spans and fences stay closed, no raw HTML', async () => {
    const { text } = await renderConfig(hostile, { format: 'md' });
    const outsideFences = text.replace(/^(`{3,})[^\n]*\n[\s\S]*?^\1$/gm, '');
    // Outside code spans, a "<" that starts a tag must be backslash-escaped so Markdown shows it as text.
    const outsideCode = outsideFences.replace(/(`+)[\s\S]*?\1/g, '');
    expect(outsideCode).not.toMatch(/(?<!\\)<\/?(img|script|i|b)\b/);
    // Every row of a table has as many unescaped cell separators as its header.
    const lines = outsideFences.split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (!/^\|\s*-{3}/.test(lines[i + 1] ?? '')) continue;
      const cells = (line: string) => line.replace(/\\\|/g, '').replace(/(`+)[\s\S]*?\1/g, 'c').split('|').length;
      const expected = cells(lines[i]!);
      for (let j = i + 2; j < lines.length && lines[j]!.startsWith('|'); j++) {
        expect(cells(lines[j]!), lines[j]).toBe(expected);
      }
    }
    // Fences are balanced.
    const fences = text.match(/^`{3,}/gm) ?? [];
    expect(fences.length % 2).toBe(0);
    // A longer fence, padded (CommonMark strips one space each side), so the backtick inside stays literal.
    expect(text).toContain('`` POST /a\\|b/`tick`/--> ``');
  });
});
