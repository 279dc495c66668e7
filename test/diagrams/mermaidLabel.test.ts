import { parseMermaid, renderMermaidSVG } from 'beautiful-mermaid';
import { describe, expect, it } from 'vitest';
import { escapeMermaidLabel, MAX_LABEL_LENGTH } from '../../src/diagrams/mermaidLabel.js';
import { toMermaid } from '../../src/diagrams/toMermaid.js';
import type { FlowGraph, StateGraph } from '../../src/diagrams/graph.js';
import { mermaidParse } from './mermaidParser.js';

/** Every character with a meaning in Mermaid, HTML or beautiful-mermaid's parser, plus ordinary text. */
const ALPHABET = [...'"\'`<>&#|;:{}[]()\\/%-=*!?,.@$^~_+ \t\n'].concat(['%%', '-->', '#quot;', '&amp;', '&lt;', 'end', 'style', '<br>', 'é', '名', 'x', 'Y', '7']);

/** Deterministic pseudo-random names (a fixed LCG), so failures reproduce. */
function hostileNames(count: number): string[] {
  let seed = 20_260_101;
  const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  return Array.from({ length: count }, () => Array.from({ length: 1 + Math.floor(next() * 14) }, () => ALPHABET[Math.floor(next() * ALPHABET.length)]).join(''));
}

describe('escapeMermaidLabel', () => {
  it('replaces only characters with syntactic meaning, collapses whitespace and caps the length', () => {
    expect(escapeMermaidLabel('<img src=x onerror="alert(1)">')).toBe("‹img src=x onerror='alert(1)'›");
    expect(escapeMermaidLabel('a|b; {c}\n\td\\e `f`')).toBe("a¦b, (c) d/e 'f'");
    expect(escapeMermaidLabel('reserve [x]', 'rect')).toBe('reserve (x)');
    expect(escapeMermaidLabel('reserve (x)', 'rounded')).toBe('reserve [x]');
    expect(escapeMermaidLabel('   ')).toBe('–');
    expect(escapeMermaidLabel('retry:: now :', 'transition')).toBe('retry: now');
    expect([...escapeMermaidLabel('x'.repeat(200))]).toHaveLength(MAX_LABEL_LENGTH);
  });

  it('keeps any name a valid, exact label in both Mermaid and beautiful-mermaid', async () => {
    for (const name of hostileNames(250)) {
      const escaped = escapeMermaidLabel(name);
      const flow: FlowGraph = {
        kind: 'flowchart',
        direction: 'TD',
        nodes: [
          { id: 'a', shape: 'rect', label: name },
          { id: 'b', shape: 'decision', label: name },
          { id: 'c', shape: 'rounded', label: name },
        ],
        edges: [
          { from: 'a', to: 'b', label: name },
          { from: 'b', to: 'c' },
        ],
      };
      const state: StateGraph = { kind: 'state', states: [{ id: 's1', label: name }], transitions: [{ from: '[*]', to: 's1', label: name }] };
      for (const source of [toMermaid(flow), toMermaid(state)]) {
        await expect(mermaidParse(source), `${JSON.stringify(name)}\n${source}`).resolves.toBeTruthy();
      }
      const g = parseMermaid(toMermaid(flow));
      expect([...g.nodes.keys()], JSON.stringify(name)).toEqual(['a', 'b', 'c']);
      expect(g.nodes.get('b')?.label, JSON.stringify(name)).toBe(escaped);
      expect(g.edges[0]?.label, JSON.stringify(name)).toBe(escaped);
      // The renderer decodes XML entities before parsing; the label must survive that too.
      const svg = renderMermaidSVG(toMermaid(flow));
      expect(dataLabel(svg, 'node" data-id="b'), JSON.stringify(name)).toBe(escaped);
      const s = parseMermaid(toMermaid(state));
      expect(s.nodes.get('s1')?.label, JSON.stringify(name)).toBe(escaped);
      expect(s.edges[0]?.label, JSON.stringify(name)).toBe(escapeMermaidLabel(name, 'transition'));
    }
  });
});

function dataLabel(svg: string, marker: string): string | undefined {
  const m = new RegExp(`class="${marker}" data-label="([^"]*)"`).exec(svg);
  return m?.[1]?.replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

describe('toMermaid', () => {
  it('rejects graphs that would produce broken Mermaid', () => {
    const node = { id: 'a', shape: 'rect', label: 'x' } as const;
    expect(() => toMermaid({ kind: 'flowchart', direction: 'TD', nodes: [node, node], edges: [] })).toThrow(/declared twice/);
    expect(() => toMermaid({ kind: 'flowchart', direction: 'TD', nodes: [{ ...node, id: 'end' }], edges: [] })).toThrow(/not a safe Mermaid id/);
    expect(() => toMermaid({ kind: 'flowchart', direction: 'TD', nodes: [{ ...node, id: 'a b' }], edges: [] })).toThrow(/not a safe Mermaid id/);
    expect(() => toMermaid({ kind: 'flowchart', direction: 'TD', nodes: [node], edges: [{ from: 'a', to: 'z' }] })).toThrow(/undeclared/);
    expect(() => toMermaid({ kind: 'state', states: [], transitions: [{ from: '[*]', to: 'q' }] })).toThrow(/undeclared/);
  });
});
