import type { DiagramGraph, FlowGraph, FlowNode, Label, StateGraph } from './graph.js';
import { TERMINAL } from './graph.js';
import { escapeMermaidLabel, type LabelContext } from './mermaidLabel.js';

const ID = /^[A-Za-z][A-Za-z0-9_]*$/;
/** Ids Mermaid reads as keywords in flowcharts or state diagrams. */
const RESERVED = new Set(['end', 'graph', 'flowchart', 'subgraph', 'style', 'class', 'classdef', 'click', 'linkstyle', 'direction', 'state', 'note', 'default']);

/**
 * Emits Mermaid text for a graph after checking it: ids are safe identifiers, unique, not keywords,
 * and every edge joins declared nodes. A builder bug fails here, in Node, instead of as a broken
 * diagram in somebody's browser.
 */
export function toMermaid(graph: DiagramGraph): string {
  return graph.kind === 'flowchart' ? flowchartToMermaid(graph) : stateDiagramToMermaid(graph);
}

function flowchartToMermaid(graph: FlowGraph): string {
  const ids = checkIds(graph.nodes.map((n) => n.id));
  const lines = [`flowchart ${graph.direction}`];
  for (const node of graph.nodes) lines.push(`    ${node.id}${shape(node)}`);
  for (const edge of graph.edges) {
    checkEndpoint(ids, edge.from, false);
    checkEndpoint(ids, edge.to, false);
    const text = edge.label === undefined ? '' : `|"${label(edge.label)}"|`;
    lines.push(`    ${edge.from} -->${text} ${edge.to}`);
  }
  return `${lines.join('\n')}\n`;
}

function shape(node: FlowNode): string {
  const text = label(node.label, node.shape);
  switch (node.shape) {
    case 'rect':
      return `["${text}"]`;
    case 'rounded':
      return `("${text}")`;
    case 'decision':
      return `{"${text}"}`;
  }
}

function stateDiagramToMermaid(graph: StateGraph): string {
  const ids = checkIds(graph.states.map((s) => s.id));
  const lines = ['stateDiagram-v2'];
  for (const state of graph.states) lines.push(`    state "${label(state.label)}" as ${state.id}`);
  for (const t of graph.transitions) {
    checkEndpoint(ids, t.from, true);
    checkEndpoint(ids, t.to, true);
    const text = t.label === undefined ? '' : ` : ${label(t.label, 'transition')}`;
    lines.push(`    ${t.from} --> ${t.to}${text}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Lines are escaped one by one and joined with <br>, which both Mermaid and beautiful-mermaid break on. */
function label(text: Label, context: LabelContext = 'plain'): string {
  return (typeof text === 'string' ? [text] : text).map((line) => escapeMermaidLabel(line, context)).join('<br>');
}

function checkIds(ids: string[]): Set<string> {
  const seen = new Set<string>();
  for (const id of ids) {
    if (!ID.test(id) || RESERVED.has(id.toLowerCase())) throw new Error(`Bug: "${id}" is not a safe Mermaid id`);
    if (seen.has(id)) throw new Error(`Bug: Mermaid id "${id}" is declared twice`);
    seen.add(id);
  }
  return seen;
}

function checkEndpoint(ids: Set<string>, id: string, terminalAllowed: boolean): void {
  if (terminalAllowed && id === TERMINAL) return;
  if (!ids.has(id)) throw new Error(`Bug: edge refers to undeclared Mermaid id "${id}"`);
}
