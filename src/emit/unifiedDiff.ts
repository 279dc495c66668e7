/**
 * A unified diff (the format `git diff` and `patch` speak) between two texts, for `generate --diff`.
 * Myers' O(ND) algorithm on the part between the common prefix and suffix; when the texts differ too much for a
 * minimal diff to be cheap, the changed middle is shown as one replacement, which is still a correct patch.
 */
type Op = { kind: ' ' | '-' | '+'; line: string };

export interface DiffOptions {
  /** Path shown in the headers (a/path, b/path); /dev/null stands for a missing side. */
  path: string;
  /** Lines of context around each change. */
  context?: number;
  /** Edit distance beyond which the minimal diff is not searched (memory grows with its square). */
  maxEdits?: number;
}

/** Lines with their terminators, so "last line without a newline" is a difference like any other. */
function splitLines(text: string): string[] {
  const lines = text.split('\n').map((line) => `${line}\n`);
  const last = lines.pop() ?? '\n';
  if (last !== '\n') lines.push(last.slice(0, -1));
  return lines;
}

function myers(a: readonly string[], b: readonly string[], maxEdits: number): Op[] | undefined {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  // trace[d] holds v[-d-1 .. d+1] as it was before step d: all that backtracking reads.
  const trace: Int32Array[] = [];
  for (let d = 0; d <= Math.min(max, maxEdits); d++) {
    trace.push(v.slice(offset - d - 1, offset + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(a, b, trace);
    }
  }
  return undefined;
}

function backtrack(a: readonly string[], b: readonly string[], trace: readonly Int32Array[]): Op[] {
  const ops: Op[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = trace.length - 1; d >= 0; d--) {
    const at = (k: number) => trace[d]![k + d + 1]!;
    const k = x - y;
    const prevK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      y--;
      ops.push({ kind: ' ', line: a[--x]! });
    }
    if (d > 0) {
      if (x === prevX) ops.push({ kind: '+', line: b[--y]! });
      else ops.push({ kind: '-', line: a[--x]! });
    }
  }
  return ops.reverse();
}

function diffLines(a: readonly string[], b: readonly string[], maxEdits: number): Op[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  const middle = myers(midA, midB, maxEdits) ?? [...midA.map((line): Op => ({ kind: '-', line })), ...midB.map((line): Op => ({ kind: '+', line }))];
  const same = (lines: readonly string[]) => lines.map((line): Op => ({ kind: ' ', line }));
  return [...same(a.slice(0, start)), ...middle, ...same(a.slice(endA))];
}

const range = (start: number, count: number) => (count === 1 ? `${start}` : `${count === 0 ? start - 1 : start},${count}`);

/** '' when the texts are equal; `before`/`after` undefined mean the file is created/removed. */
export function unifiedDiff(before: string | undefined, after: string | undefined, options: DiffOptions): string {
  if (before === after) return '';
  const context = options.context ?? 3;
  const ops = diffLines(before === undefined ? [] : splitLines(before), after === undefined ? [] : splitLines(after), options.maxEdits ?? 2000);
  const out = [`--- ${before === undefined ? '/dev/null' : `a/${options.path}`}\n`, `+++ ${after === undefined ? '/dev/null' : `b/${options.path}`}\n`];
  const changes = ops.flatMap((op, index) => (op.kind === ' ' ? [] : [index]));
  let i = 0;
  while (i < changes.length) {
    let j = i;
    while (j + 1 < changes.length && changes[j + 1]! - changes[j]! <= 2 * context + 1) j++;
    const from = Math.max(0, changes[i]! - context);
    const to = Math.min(ops.length, changes[j]! + context + 1);
    let oldLine = 1;
    let newLine = 1;
    for (const op of ops.slice(0, from)) {
      if (op.kind !== '+') oldLine++;
      if (op.kind !== '-') newLine++;
    }
    const hunk = ops.slice(from, to);
    const oldCount = hunk.filter((op) => op.kind !== '+').length;
    const newCount = hunk.filter((op) => op.kind !== '-').length;
    out.push(`@@ -${range(oldLine, oldCount)} +${range(newLine, newCount)} @@\n`);
    for (const op of hunk) out.push(`${op.kind}${op.line}${op.line.endsWith('\n') ? '' : '\n\\ No newline at end of file\n'}`);
    i = j + 1;
  }
  return out.join('');
}

/**
 * Where each line of `before` stands in `after`: a kept line maps to its new number; a removed or rewritten line maps
 * to the line that now takes its place (the next kept or added line), so a location recorded on a line an edit
 * replaced still lands on the edit.
 */
export function lineMapping(before: string, after: string): (line: number) => number {
  const ops = diffLines(splitLines(before), splitLines(after), 2000);
  const map: number[] = [];
  let newLine = 1;
  let pendingRemoved: number[] = [];
  for (const op of ops) {
    if (op.kind === '-') {
      pendingRemoved.push(map.length);
      map.push(0);
      continue;
    }
    for (const index of pendingRemoved) map[index] = newLine;
    pendingRemoved = [];
    if (op.kind === ' ') map.push(newLine);
    newLine++;
  }
  for (const index of pendingRemoved) map[index] = Math.max(1, newLine - 1);
  return (line) => map[line - 1] ?? line + (newLine - 1 - map.length);
}
