import { cpSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { verifyPath, type Finding } from '../../src/verify/index.js';
import { generateFixture } from '../split/generateFixture.js';

/**
 * Each test breaks one thing in a generated document (as a careless hand edit would) and expects
 * verify to fail with a finding that names the file and the problem.
 */
interface Base {
  /** The document as generate wrote it: a file or a folder. */
  documentPath: string;
}

let singleHtml: Base;
let singleMd: Base;
let splitHtml: Base;
let splitMd: Base;

beforeAll(async () => {
  [singleHtml, singleMd, splitHtml, splitMd] = await Promise.all([
    generateFixture('express-stripe-payments', { format: 'html', split: 'never' }),
    generateFixture('express-stripe-payments', { format: 'md', split: 'never' }),
    generateFixture('large-marketplace', { format: 'html', split: 'always' }),
    generateFixture('large-marketplace', { format: 'md', split: 'always' }),
  ]);
});

/** The first numbered page of a split folder (its name follows the layout, which follows the content). */
const firstPage = (base: Base) => readdirSync(base.documentPath).filter((f) => /^01-.*\.html$/.test(f))[0]!;

/** Copies the document somewhere fresh, edits one file of it, and verifies the copy. */
async function verifyAfter(base: Base, file: string, edit: (text: string) => string): Promise<{ findings: Finding[]; target: string }> {
  const folder = !/\.(html|md)$/.test(base.documentPath);
  const copy = path.join(mkdtempSync(path.join(tmpdir(), 'ib-mutate-')), path.basename(base.documentPath));
  cpSync(base.documentPath, copy, { recursive: true });
  const target = folder ? path.join(copy, file) : copy;
  const before = readFileSync(target, 'utf8');
  const after = edit(before);
  expect(after, 'the edit must change something').not.toBe(before);
  writeFileSync(target, after);
  return { findings: await verifyPath(copy), target };
}

function expectFinding(findings: readonly Finding[], target: string, problem: RegExp): void {
  const match = findings.find((f) => f.file === target && problem.test(f.message));
  expect(match, `expected a finding for ${target} matching ${problem}; got:\n${findings.map((f) => `${f.file}: ${f.message}`).join('\n')}`).toBeDefined();
}

function replaceOnce(text: string, from: string, to: string): string {
  const at = text.indexOf(from);
  if (at === -1) throw new Error(`test setup: "${from}" not found`);
  return text.slice(0, at) + to + text.slice(at + from.length);
}

/** Removes text between two markers (inclusive of the start, exclusive of the end). */
function cut(text: string, start: string, end: string): string {
  const from = text.indexOf(start);
  const to = text.indexOf(end, from + start.length);
  if (from === -1 || to === -1) throw new Error(`test setup: "${start}" … "${end}" not found`);
  return text.slice(0, from) + text.slice(to);
}

/** Drops every line with CHECK inside the store DDL code block that follows `heading`. */
function dropCheck(text: string, heading: string, blockEnd: string): string {
  const from = text.indexOf(heading);
  const to = text.indexOf(blockEnd, text.indexOf(blockEnd, from) + blockEnd.length);
  const block = text.slice(from, to);
  const without = block
    .split('\n')
    .filter((line) => !/\bCHECK\b/.test(line))
    .join('\n');
  return text.slice(0, from) + without + text.slice(to);
}

describe('verify fails on a broken single HTML file', () => {
  it('a broken in-page link', async () => {
    const { findings, target } = await verifyAfter(singleHtml, '', (t) => replaceOnce(t, 'href="#8-security"', 'href="#8-securty"'));
    expectFinding(findings, target, /#8-securty.*does not have/);
  });

  it('a removed anchor', async () => {
    const { findings, target } = await verifyAfter(singleHtml, '', (t) => replaceOnce(t, ' id="idempotency-store-ddl"', ''));
    expectFinding(findings, target, /anchor #idempotency-store-ddl/);
  });

  it('an added <script>', async () => {
    const { findings, target } = await verifyAfter(singleHtml, '', (t) => replaceOnce(t, '</body>', '<script>document.title = "x"</script>\n</body>'));
    expectFinding(findings, target, /<script>/);
  });

  it('an external stylesheet', async () => {
    const { findings, target } = await verifyAfter(singleHtml, '', (t) => replaceOnce(t, '</head>', '<link rel="stylesheet" href="https://cdn.example.com/theme.css">\n</head>'));
    expectFinding(findings, target, /external stylesheet.*https:\/\/cdn\.example\.com\/theme\.css/);
  });

  it('a web-font @import in the inline CSS', async () => {
    const { findings, target } = await verifyAfter(singleHtml, '', (t) => replaceOnce(t, '<style>\n', '<style>\n@import url("https://fonts.googleapis.com/css2?family=Inter");\n'));
    expectFinding(findings, target, /imports https:\/\/fonts\.googleapis\.com.*@import/);
  });

  it('a dropped section', async () => {
    const { findings, target } = await verifyAfter(singleHtml, '', (t) => cut(t, '<section id="8-security">', '<section id="9-anti-patterns-to-avoid">'));
    expectFinding(findings, target, /section 8 "Security" is missing/);
  });

  it('the DDL without its CHECK constraints', async () => {
    const { findings, target } = await verifyAfter(singleHtml, '', (t) => dropCheck(t, 'id="idempotency-store-ddl"', '</pre>'));
    expectFinding(findings, target, /DDL has no CHECK constraint/);
  });

  it('a diagram without viewBox or without its Mermaid source', async () => {
    const noViewBox = await verifyAfter(singleHtml, '', (t) => t.replace(/(<svg\b[^>]*?) viewBox="[^"]*"/, '$1'));
    expectFinding(noViewBox.findings, noViewBox.target, /SVG.*no viewBox/);
    const noSource = await verifyAfter(singleHtml, '', (t) => cut(t, '<!-- mermaid-source', '<svg'));
    expectFinding(noSource.findings, noSource.target, /no Mermaid source comment/);
  });
});

describe('verify fails on a broken split HTML folder', () => {
  it('a nav link to a page that does not exist', async () => {
    const { findings, target } = await verifyAfter(splitHtml, 'index.html', (t) => replaceOnce(t, `href="${firstPage(splitHtml)}"`, 'href="01-missing.html"'));
    expectFinding(findings, target, /01-missing\.html.*does not exist/);
  });

  it('an anchor removed from the page the index links to', async () => {
    const page = await import('node:fs').then((fs) => fs.readdirSync(splitHtml.documentPath).find((f) => fs.readFileSync(path.join(splitHtml.documentPath, f), 'utf8').includes('id="idempotency-store-ddl"'))!);
    const { findings } = await verifyAfter(splitHtml, page, (t) => replaceOnce(t, ' id="idempotency-store-ddl"', ''));
    const index = path.join(path.dirname(findings[0]?.file ?? ''), 'index.html');
    expectFinding(findings, index, new RegExp(`${page.replace('.', '\\.')}#idempotency-store-ddl.*does not have`));
  });

  it('a web-font @import in the shared stylesheet', async () => {
    const { findings, target } = await verifyAfter(splitHtml, 'assets/styles.css', (t) => `@import url("https://fonts.googleapis.com/css2?family=Inter");\n${t}`);
    expectFinding(findings, target, /imports https:\/\/fonts\.googleapis\.com/);
  });

  it('a page that loads an external stylesheet instead of the shared one', async () => {
    const { findings, target } = await verifyAfter(splitHtml, firstPage(splitHtml), (t) => replaceOnce(t, 'href="assets/styles.css"', 'href="https://cdn.example.com/styles.css"'));
    expectFinding(findings, target, /external stylesheet/);
  });

  it('a link that leaves the folder', async () => {
    const { findings, target } = await verifyAfter(splitHtml, firstPage(splitHtml), (t) => replaceOnce(t, 'href="index.html"', 'href="../index.html"'));
    expectFinding(findings, target, /outside the document folder/);
  });
});

describe('verify fails on a broken Markdown document', () => {
  it('a broken link', async () => {
    const { findings, target } = await verifyAfter(singleMd, '', (t) => replaceOnce(t, '(#8-security)', '(#8-securty)'));
    expectFinding(findings, target, /#8-securty.*does not have/);
  });

  it('a removed anchor (renamed heading)', async () => {
    const { findings, target } = await verifyAfter(singleMd, '', (t) => replaceOnce(t, '### Fingerprint utility', '### Fingerprint utility code'));
    expectFinding(findings, target, /anchor #fingerprint-utility/);
  });

  it('raw HTML <script>', async () => {
    const { findings, target } = await verifyAfter(singleMd, '', (t) => `${t}\n<script src="https://example.com/x.js"></script>\n`);
    expectFinding(findings, target, /<script>/);
  });

  it('a dropped section', async () => {
    // Located by line, not exact text: the heading's escaping is the Markdown renderer's business.
    const line = (t: string, pattern: RegExp) => t.split('\n').find((l) => pattern.test(l)) ?? '(missing)';
    const { findings, target } = await verifyAfter(singleMd, '', (t) => cut(t, line(t, /^## .*8\\?\. Security/), line(t, /^## .*9\\?\. Anti-Patterns/)));
    expectFinding(findings, target, /section 8 "Security" is missing/);
  });

  it('the DDL without its CHECK constraints', async () => {
    const { findings, target } = await verifyAfter(singleMd, '', (t) => dropCheck(t, '### Idempotency store DDL', '```\n'));
    expectFinding(findings, target, /DDL has no CHECK constraint/);
  });

  it('a saga whose state machine was deleted', async () => {
    const saga = await generateFixture('nestjs-adyen-saga', { format: 'md', split: 'never' });
    const { findings, target } = await verifyAfter(saga, '', (t) => {
      const start = t.indexOf('```mermaid\nstateDiagram-v2');
      return t.slice(0, start) + t.slice(t.indexOf('\n```\n', start) + 5);
    });
    expectFinding(findings, target, /"submitOrder saga" has no state machine diagram/);
  });

  it('split folder: a nav link to a page that does not exist', async () => {
    const { findings, target } = await verifyAfter(splitMd, 'README.md', (t) => replaceOnce(t, '(01-actions', '(01-action'));
    expectFinding(findings, target, /does not exist/);
  });
});
