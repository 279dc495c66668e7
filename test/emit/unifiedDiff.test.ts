import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { unifiedDiff } from '../../src/emit/unifiedDiff.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'ib-diff-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The real judge of a unified diff: GNU patch must turn `before` into exactly `after`. */
function applyWithPatch(before: string | undefined, diff: string): string | undefined {
  const work = mkdtempSync(path.join(dir, 'case-'));
  const file = path.join(work, 'doc.txt');
  if (before !== undefined) writeFileSync(file, before);
  writeFileSync(path.join(work, 'change.diff'), diff);
  execFileSync('patch', ['-p1', '-s', '--no-backup-if-mismatch', '-E', '-i', 'change.diff'], { cwd: work });
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

// A tiny deterministic PRNG so a failure reproduces.
function random(seed: number): () => number {
  let state = seed;
  return () => ((state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
}

const WORDS = ['claim', 'lease', 'replay', 'fence', 'retry', 'commit', ''];

function mutate(lines: string[], next: () => number): string[] {
  const out = [...lines];
  const edits = Math.floor(next() * 6);
  for (let i = 0; i < edits; i++) {
    const at = Math.floor(next() * (out.length + 1));
    const roll = next();
    if (roll < 0.4) out.splice(at, 1);
    else if (roll < 0.8) out.splice(at, 0, WORDS[Math.floor(next() * WORDS.length)]!);
    else out.splice(at, 1, `${WORDS[Math.floor(next() * WORDS.length)]} changed`);
  }
  return out;
}

describe('unifiedDiff', () => {
  it('is empty for equal texts and marks creation and removal with /dev/null', () => {
    expect(unifiedDiff('a\n', 'a\n', { path: 'doc.txt' })).toBe('');
    expect(unifiedDiff(undefined, 'a\nb\n', { path: 'doc.txt' })).toBe('--- /dev/null\n+++ b/doc.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n');
    expect(unifiedDiff('a\n', undefined, { path: 'doc.txt' })).toBe('--- a/doc.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n');
  });

  it('writes hunks the way git does, with three lines of context', () => {
    const before = ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11', '12'].join('\n') + '\n';
    const after = before.replace('2\n', 'two\n').replace('11\n', 'eleven\n');
    expect(unifiedDiff(before, after, { path: 'n.txt' })).toBe(
      '--- a/n.txt\n+++ b/n.txt\n@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n@@ -8,5 +8,5 @@\n 8\n 9\n 10\n-11\n+eleven\n 12\n',
    );
  });

  it('marks a last line without a newline', () => {
    const diff = unifiedDiff('a\nb', 'a\nb\n', { path: 'doc.txt' });
    expect(diff).toContain('-b\n\\ No newline at end of file\n+b\n');
    expect(applyWithPatch('a\nb', diff)).toBe('a\nb\n');
  });

  it('produces patches that GNU patch applies exactly (200 random edits)', () => {
    const next = random(8);
    for (let round = 0; round < 200; round++) {
      const base = Array.from({ length: Math.floor(next() * 30) }, () => WORDS[Math.floor(next() * WORDS.length)]!);
      const before = base.join('\n') + (next() < 0.8 ? '\n' : '');
      const after = mutate(base, next).join('\n') + (next() < 0.8 ? '\n' : '');
      if (before === after || before === '' || after === '') continue;
      const diff = unifiedDiff(before, after, { path: 'doc.txt', context: round % 4 });
      expect(applyWithPatch(before, diff), `round ${round}\n${diff}`).toBe(after);
    }
  });

  it('stays correct when the texts differ beyond the edit budget', () => {
    const before = Array.from({ length: 300 }, (_, i) => `old ${i}`).join('\n') + '\n';
    const after = Array.from({ length: 300 }, (_, i) => `new ${i}`).join('\n') + '\n';
    const diff = unifiedDiff(before, after, { path: 'doc.txt', maxEdits: 10 });
    expect(applyWithPatch(before, diff)).toBe(after);
  });
});
