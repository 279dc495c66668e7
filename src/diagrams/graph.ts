/**
 * The tiny graph model the diagrams are built in. Builders produce these plain objects; only
 * toMermaid.ts turns them into text, so escaping and syntax rules live in one place.
 */
export type FlowShape = 'rect' | 'rounded' | 'decision';

/** Plain text; an array is drawn as separate lines (narrower boxes keep tall diagrams legible). */
export type Label = string | readonly string[];

export interface FlowNode {
  /** Mermaid node id: a letter, then letters, digits or underscores. */
  id: string;
  label: Label;
  shape: FlowShape;
}

export interface FlowEdge {
  from: string;
  to: string;
  label?: Label;
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
  label: Label;
}

export interface Transition {
  from: string;
  to: string;
  label?: Label;
}

export interface StateGraph {
  kind: 'state';
  states: State[];
  transitions: Transition[];
}

export type DiagramGraph = FlowGraph | StateGraph;
