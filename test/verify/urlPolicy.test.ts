import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { verifyPath, type Finding } from '../../src/verify/index.js';
import { generateFixture } from '../split/generateFixture.js';

/**
 * Mutation tests for the URL policy: each case plants one URL in a generated document (a hand edit or a
 * hostile contribution) and expects verify to name it; each refused case has an accepted twin beside it, so
 * the check cannot pass by refusing everything.
 */
let html: string;
let md: string;

beforeAll(async () => {
  const [single, markdown] = await Promise.all([
    generateFixture('express-stripe-payments', { format: 'html', split: 'never' }),
    generateFixture('express-stripe-payments', { format: 'md', split: 'never' }),
  ]);
  html = single.documentPath;
  md = markdown.documentPath;
});

/** Verifies a copy of `document` with `snippet` added before `marker`; returns the findings and the copy's path. */
async function withSnippet(document: string, marker: string, snippet: string): Promise<{ findings: Finding[]; target: string }> {
  const target = path.join(mkdtempSync(path.join(tmpdir(), 'ib-url-')), path.basename(document));
  cpSync(document, target);
  const text = readFileSync(target, 'utf8');
  const at = text.lastIndexOf(marker);
  expect(at, `marker ${marker}`).toBeGreaterThan(-1);
  writeFileSync(target, text.slice(0, at) + snippet + text.slice(at));
  return { findings: await verifyPath(target), target };
}

const messages = (findings: readonly Finding[]) => findings.map((f) => f.message);

const REFUSED_HTML: Array<[string, string, RegExp]> = [
  ['a javascript: link', '<a href="javascript:alert(1)">x</a>', /<a> uses a script URL "javascript:alert\(1\)"/],
  ['a javascript: link hidden by a tab and entities', '<a href="  java&#x09;Script&colon;alert(1)">x</a>', /<a> uses a script URL "javaScript:alert\(1\)"/],
  ['a vbscript: link', '<a href="vbscript:msgbox(1)">x</a>', /<a> uses a script URL "vbscript:/],
  ['a data: link', '<a href="data:text/html,<script>alert(1)</script>">x</a>', /<a> uses an inline data: URL/],
  ['an area link', '<map name="m"><area href="javascript:alert(1)" alt="x"></map>', /<area> uses a script URL/],
  ['a form action', '<form action="javascript:alert(1)"><button>x</button></form>', /<form action> uses a script URL/],
  ['a button formaction', '<form><button formaction="javascript:alert(1)">x</button></form>', /<button formaction> uses a script URL/],
  ['an SVG link', '<svg viewBox="0 0 1 1"><a xlink:href="javascript:alert(1)"><text>x</text></a></svg><!-- mermaid-source x -->', /<a xlink:href> uses a script URL/],
  ['an SVG href animation', '<svg viewBox="0 0 1 1"><a href="#"><set attributeName="href" to="javascript:alert(1)"/></a></svg><!-- mermaid-source x -->', /<set to> uses a script URL/],
  ['a data: iframe', '<iframe src="data:text/html,<script>alert(1)</script>"></iframe>', /<iframe src> uses an inline data: URL/],
  ['a data: object', '<object data="data:text/html;base64,PHNjcmlwdD4="></object>', /<object data> uses an inline data: URL/],
  ['a data: embed', '<embed src="data:image/svg+xml,<svg onload=alert(1)>">', /<embed src> uses an inline data: URL/],
  ['a javascript: image in a srcset', '<img alt="x" srcset="data:image/png;base64,AAAA 1x, javascript:alert(1) 2x">', /<img srcset> uses a script URL/],
  ['a javascript: poster', '<video poster="javascript:alert(1)"></video>', /<video poster> uses a script URL/],
  ['a javascript: citation', '<blockquote cite="javascript:alert(1)">x</blockquote>', /<blockquote cite> uses a script URL/],
  ['an unknown scheme', '<a href="ms-settings:privacy">x</a>', /scheme ms-settings:, which is not allowed/],
  ['a link out of the folder', '<a href="../../etc/passwd">x</a>', /points outside the folder the document is in \(\.\.\/\.\.\/etc\/passwd\)/],
  ['a link out of the folder with backslashes', '<a href="..\\..\\etc\\passwd">x</a>', /points outside the folder/],
];

const ACCEPTED_HTML: Array<[string, string]> = [
  ['an inline data: image', '<img alt="x" src="data:image/png;base64,iVBORw0KGgo=">'],
  ['a web link', '<a href="https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/">draft</a>'],
  ['a mail link', '<a href="mailto:oncall@example.com">on-call</a>'],
  ['an in-page link', '<a href="#8-security">security</a>'],
];

describe('verify: URL schemes and confinement in HTML', () => {
  it.each(REFUSED_HTML)('refuses %s', async (_name, snippet, problem) => {
    const { findings } = await withSnippet(html, '</main>', snippet);
    expect(messages(findings).some((m) => problem.test(m)), messages(findings).join('\n')).toBe(true);
  });

  it.each(ACCEPTED_HTML)('accepts %s', async (_name, snippet) => {
    const { findings } = await withSnippet(html, '</main>', snippet);
    expect(messages(findings)).toEqual([]);
  });

  it('walks a page nested 900 elements deep iteratively and finds what is inside', async () => {
    const depth = 900;
    const { findings } = await withSnippet(html, '</main>', `${'<div><span>'.repeat(depth / 2)}<a href="javascript:alert(1)">deep</a>${'</span></div>'.repeat(depth / 2)}`);
    expect(messages(findings)).toEqual(['<a> uses a script URL "javascript:alert(1)"']);
  });

  it('fails a page nested 200,000 elements deep at once instead of overflowing the stack or stalling the parser', async () => {
    const depth = 200_000;
    const { findings } = await withSnippet(html, '</main>', `${'<div>'.repeat(depth)}<a href="javascript:alert(1)">deep</a>${'</div>'.repeat(depth)}`);
    // The document's own wrappers add a few levels.
    expect(messages(findings)).toHaveLength(1);
    expect(messages(findings)[0]).toMatch(/^nests elements 200,0\d\d levels deep; past 1,000 levels the markup is not checked, so the page cannot be verified$/);
  });
});

describe('verify: URL schemes and confinement in Markdown', () => {
  const refused: Array<[string, string, RegExp]> = [
    ['a javascript: link', '[pay](javascript:alert(1))', /Markdown link uses a script URL/],
    ['a data: link', '[pay](data:text/html,x)', /Markdown link uses an inline data: URL/],
    ['a vbscript: link', '[pay](<vbscript:msgbox(1)>)', /Markdown link uses a script URL/],
    ['a link out of the folder', '[secrets](../../etc/passwd)', /points outside the folder the document is in/],
    ['a raw HTML form', '<form action="javascript:alert(1)"></form>', /<form action> uses a script URL/],
  ];
  it.each(refused)('refuses %s', async (_name, snippet, problem) => {
    const { findings } = await withSnippet(md, '\n---', `\n\n${snippet}\n`);
    expect(messages(findings).some((m) => problem.test(m)), messages(findings).join('\n')).toBe(true);
  });

  it.each([
    ['an inline data: image', '![diagram](data:image/png;base64,iVBORw0KGgo=)'],
    ['a web link', '[draft](https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/)'],
  ])('accepts %s', async (_name, snippet) => {
    const { findings } = await withSnippet(md, '\n---', `\n\n${snippet}\n`);
    expect(messages(findings)).toEqual([]);
  });
});
