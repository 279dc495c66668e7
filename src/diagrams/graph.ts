/**
 * The tiny graph model the diagrams are built in. Builders produce these plain objects; only
 * toMermaid.ts turns them into text, so escaping and syntax rules live in one place.
 */
export type FlowShape = 'rect' | 'rounded' | 'decision';

export interface FlowNode {
  /** Mermaid node id: a letter, then letters, digits or underscores. */
  id: string;
  label: string;
  shape: FlowShape;
}

export interface FlowEdge {
  from: string;
  to: string;
  label?: string;
}

export interface FlowGraph {
  kind: 'flowchart';
  direction: 'TD' | 'LR';
  nodes: FlowNode[];
  edges: FlowEdge[];
}

/** Mermaid's start/end pseudostate. */
export const TERMINAL = '[*]';

export interface State {
  id: string;
  label: string;
}

export interface Transition {
  from: string;
  to: string;
  label?: string;
}

export interface StateGraph {
  kind: 'state';
  states: State[];
  transitions: Transition[];
}

export type DiagramGraph = FlowGraph | StateGraph;
