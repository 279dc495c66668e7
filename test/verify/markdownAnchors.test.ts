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

describe('names made of underscores keep their anchors', () => {
  it('escapes every underscore outside a word, so the heading GitHub renders is the name and links to it resolve', async () => {
    const { escapeMarkdown } = await import('../../src/render/markdown/escape.js');
    const { githubSlug } = await import('../../src/render/document/types.js');
    for (const name of ['__init__', '_a_', 'a__b', '__proto__x', 'locked_until']) {
      const page = parseMarkdownPage('design.md', `## ${escapeMarkdown(name)}\n\n[link](#${githubSlug(name)})\n`);
      expect([...page.anchors], name).toEqual([githubSlug(name)]);
      expect(verifyLinks(page, { files: new Set(['design.md']), pages: new Map([['design.md', page]]), folder: false }), name).toEqual([]);
    }
    expect(escapeMarkdown('__init__')).toBe('\\_\\_init\\_\\_');
    expect(escapeMarkdown('locked_until')).toBe('locked_until');
  });
});
