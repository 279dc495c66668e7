import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { verifyDocument, type Finding } from '../../src/verify/index.js';
import { generateFixture } from '../split/generateFixture.js';

/**
 * The seven testable constraints, each broken on its own in an otherwise valid Markdown design
 * (in memory, through the same verifyDocument that generate runs before writing).
 */
let original = '';

beforeAll(async () => {
  const project = await generateFixture('express-stripe-payments', { format: 'md', split: 'never' });
  original = readFileSync(project.documentPath, 'utf8');
});

function verifyText(text: string): Finding[] {
  return verifyDocument([{ path: 'design.md', contents: text }], { label: 'design.md', folder: false });
}

/** Applies `edit` to the lines of the spec section whose "## N." heading matches `number`. */
function inSection(text: string, number: number, edit: (lines: string[]) => string[]): string {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => new RegExp(`^## \\\\?${number}\\\\?\\. `).test(l));
  const end = lines.findIndex((l, i) => i > start && l.startsWith('## '));
  if (start === -1) throw new Error(`test setup: section ${number} not found`);
  const body = edit(lines.slice(start, end));
  return [...lines.slice(0, start), ...body, ...lines.slice(end)].join('\n');
}

const messages = (findings: readonly Finding[]) => findings.map((f) => `${f.file}: ${f.message}`);

describe('verify: the seven testable constraints', () => {
  it('pass on the generated design', () => {
    expect(messages(verifyText(original))).toEqual([]);
  });

  it('every action needs a recovery path, and "just retry" is not one', () => {
    const text = inSection(original, 1, (lines) => lines.map((l) => (l.startsWith('| [refundPayment]') ? l.replace(/\|[^|]*\|\s*$/, '| just retry |') : l)));
    expect(messages(verifyText(text))).toContain('design.md: constraint "recovery path for every action": refundPayment has only "just retry" as its recovery path');
  });

  it('significant fields are listed per action', () => {
    const text = inSection(original, 3, (lines) => lines.filter((l) => !l.startsWith('| refundPayment')));
    expect(messages(verifyText(text))).toContain('design.md: constraint "fingerprint fields per action": no significant fields listed for refundPayment');
  });

  it('the lock timeout is stated with a justification', () => {
    const text = inSection(original, 4, (lines) => lines.map((l) => (l.startsWith('| createPayment') && l.includes('milliseconds') ? l.replace(/\|[^|]*\|\s*$/, '| |') : l)));
    expect(messages(verifyText(text))).toContain('design.md: constraint "lock timeout with justification": the lock timeout for createPayment has no justification');
  });

  it('the key retention is stated with a justification', () => {
    const text = inSection(original, 5, (lines) => lines.filter((l) => !l.startsWith('**Retention:')));
    expect(messages(verifyText(text))).toContain('design.md: constraint "retention with justification": section 5 states no key retention period');
  });

  it('an anti-pattern relevant to the stack is called out', () => {
    const text = inSection(original, 9, (lines) => lines.map((l) => (l.startsWith('| **') ? l.replace(/Express|PostgreSQL|Node\.js|TypeScript/gi, 'the stack') : l)));
    expect(messages(verifyText(text)).join('\n')).toMatch(/constraint "anti-pattern relevant to the stack": no anti-pattern mentions the stack \(express, postgresql/);
  });

  it('a concurrent-duplicate test case is included', () => {
    const text = inSection(original, 11, (lines) => lines.filter((l) => !/^\| \*\*Concurrent/.test(l)));
    expect(messages(verifyText(text))).toContain('design.md: constraint "concurrent duplicate test case": section 11 has no concurrent-duplicate scenario with an expected outcome');
  });

  it('the DDL keeps its PRIMARY KEY', () => {
    const text = inSection(original, 4, (lines) => lines.filter((l) => !/PRIMARY KEY/.test(l)));
    expect(messages(verifyText(text))).toContain('design.md: constraint "store DDL with PRIMARY KEY and CHECK": the idempotency store DDL has no PRIMARY KEY');
  });
});
