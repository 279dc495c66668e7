import { describe, expect, it } from 'vitest';
import { parseMarkdownPage } from '../../src/verify/parseMarkdownPage.js';
import { verifyLinks } from '../../src/verify/verifyLinks.js';

describe('Markdown anchors follow GitHub', () => {
  const page = parseMarkdownPage(
    'README.md',
    [
      '# Payments idempotency design',
      '## 4. Concurrency Control',
      '### Notes',
      '### Notes',
      '### `locked_until` and the ABA problem',
      '## 7. Multi-Step \\(Saga\\) Idempotency',
      '```md',
      '## Not a heading inside code',
      '```',
      'See [the second notes](#notes-1), [the saga](#7-multi-step-saga-idempotency), [ABA](#locked_until-and-the-aba-problem) and [missing](#notes-2).',
    ].join('\n'),
  );

  it('slugs headings per file, numbering repeats -1, -2', () => {
    expect([...page.anchors]).toEqual([
      'payments-idempotency-design',
      '4-concurrency-control',
      'notes',
      'notes-1',
      'locked_until-and-the-aba-problem',
      '7-multi-step-saga-idempotency',
    ]);
  });

  it('resolves links against those anchors and reports the one that does not exist', () => {
    const findings = verifyLinks(page, { files: new Set(['README.md']), pages: new Map([['README.md', page]]), folder: true });
    expect(findings).toEqual([{ file: 'README.md', message: 'Markdown link "#notes-2" points to the anchor #notes-2, which this file does not have' }]);
  });

  it('treats backslash-escaped HTML in a heading as the visible text it is', () => {
    const hostile = parseMarkdownPage('design.md', '### \\<img src=x onerror=alert(1)\\>\n### Raw <b>bold</b> tag');
    expect([...hostile.anchors]).toEqual(['img-srcx-onerroralert1', 'raw-bold-tag']);
  });
});
