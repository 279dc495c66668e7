import { describe, expect, it } from 'vitest';
import { factorUnion, topLevelAlternatives } from '../../src/inspect/detectors/factorUnion.js';

/** Owners whose source matches somewhere in `text`, found as detectorsFor finds them: leftmost match, then without it. */
function ownersFound(sources: Array<{ owner: number; source: string }>, text: string): number[] {
  let open = sources;
  const found: number[] = [];
  let from = 0;
  while (open.length > 0) {
    const { source, owners } = factorUnion(open);
    const re = new RegExp(source, 'gi');
    re.lastIndex = from;
    const match = re.exec(text);
    if (!match) break;
    const owner = owners.find(([group]) => match[group] !== undefined)?.[1] as number;
    found.push(owner);
    open = open.filter((s) => s.owner !== owner);
    from = match.index;
  }
  return found.sort();
}

const oneByOne = (sources: Array<{ owner: number; source: string }>, text: string) =>
  sources.filter((s) => new RegExp(s.source, 'i').test(text)).map((s) => s.owner).sort();

describe('a union of expressions grouped by first character', () => {
  const sources = [
    // Capturing groups inside alternatives move the numbers of the groups after them.
    { owner: 0, source: String.raw`\.(post|put|patch)\s*[(<]|\.get\s*\(\s*['"\x60]\/|readdir` },
    { owner: 1, source: String.raw`\bcreate(?:Pool|Connection)\s*\(|new\s+(\w+\.)?(Pool|Client)\s*\(` },
    // A quantified first character is no shared lead; a class or a quote is none either.
    { owner: 2, source: String.raw`s?cron|['"]bull['"]|[|(]x` },
    { owner: 3, source: String.raw`\.create\s*\(|upsert|@Processor` },
  ];

  it('splits alternatives only at the top level', () => {
    expect(topLevelAlternatives(String.raw`a(b|c)|[|(]d|e\|f`)).toEqual(['a(b|c)', '[|(]d', String.raw`e\|f`]);
  });

  it('finds the same owners as one test per expression', () => {
    const texts = [
      "app.post('/orders', h); db.createPool({}); queue = require('bull')",
      'x.CREATE(y) and UPSERT and new Api.Pool()',
      'ron cron scron |x (x',
      '@Processor() app.get("/a") fs.readdir(d)',
      'nothing to see here',
      '.create(.post(',
    ];
    for (const text of texts) expect(ownersFound(sources, text), text).toEqual(oneByOne(sources, text));
  });
});
