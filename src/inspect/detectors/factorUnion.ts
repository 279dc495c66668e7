/**
 * One case-insensitive expression matching wherever any of several others does, grouped by first character. V8 tries
 * every alternative of an alternation at every position: the detectors' mentions are over a hundred alternatives, so
 * a union of them cost over a hundred tries a character. Alternatives that begin with the same character (`\.`, a
 * letter, `\b` and a letter) share one test of it here (`\.(?:(post…)|(consume\())`), and most positions fail that
 * test: the same matches at the same positions for about half the time on a real tree.
 *
 * Each alternative sits in a capturing group of its own, so a match tells whose it was; `owners` maps those group
 * numbers to the owner given with each source. Sources must not use back references or named groups (their numbers
 * would move); the caller keeps those out.
 */
export interface FactoredUnion {
  source: string;
  /** [capturing group number, owner] for every alternative, in group order. */
  owners: Array<[number, number]>;
}

export function factorUnion(sources: ReadonlyArray<{ owner: number; source: string }>): FactoredUnion {
  const byLead = new Map<string, Array<{ owner: number; body: string }>>();
  const alone: Array<{ owner: number; body: string }> = [];
  for (const { owner, source } of sources) {
    for (const alternative of topLevelAlternatives(source)) {
      const lead = leadOf(alternative);
      if (lead === undefined) alone.push({ owner, body: alternative });
      else {
        const list = byLead.get(lead.key) ?? [];
        list.push({ owner, body: alternative.slice(lead.length) });
        byLead.set(lead.key, list);
      }
    }
  }
  const owners: Array<[number, number]> = [];
  let group = 0;
  const wrap = ({ owner, body }: { owner: number; body: string }): string => {
    owners.push([++group, owner]);
    group += capturingGroups(body);
    return `(${body})`;
  };
  const parts = [...[...byLead].map(([lead, bodies]) => `${lead}(?:${bodies.map(wrap).join('|')})`), ...alone.map(wrap)];
  return { source: parts.join('|'), owners };
}

/**
 * The first character an alternative always starts with, as it is written in the union (lower case: the union
 * ignores case), and how many characters of the alternative it takes. Undefined when a quantifier follows it (it
 * could then be absent or repeated) or the alternative starts otherwise.
 */
function leadOf(alternative: string): { key: string; length: number } | undefined {
  const match = /^(\\\.|\\b[A-Za-z]|[A-Za-z])(?![?*+{])/.exec(alternative);
  if (!match) return undefined;
  return { key: match[1]!.toLowerCase(), length: match[1]!.length };
}

/** The alternatives of a source at the top level (outside groups and character classes). */
export function topLevelAlternatives(source: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let inClass = false;
  let start = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') i++;
    else if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '|' && depth === 0) {
      out.push(source.slice(start, i));
      start = i + 1;
    }
  }
  out.push(source.slice(start));
  return out;
}

/** Capturing groups in a source: an unescaped `(` outside a class and not followed by `?`. */
function capturingGroups(source: string): number {
  let count = 0;
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') i++;
    else if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    else if (c === '(' && source[i + 1] !== '?') count++;
  }
  return count;
}
