import type { ts } from 'ts-morph';
import { isFunctionLike } from './astHelpers.js';
import { functionKeyOf, functionName } from './functionKey.js';

export interface Enclosing {
  /** Keys of every enclosing function, innermost first. */
  keys: string[];
  /** Nearest named function or method, for display. */
  name?: string;
  /** The innermost function node, when there is one. */
  innermost?: ts.FunctionLikeDeclaration;
  /** The outermost function node: its text is the unit other heuristics read (dedupe checks, header writes). */
  outermost?: ts.FunctionLikeDeclaration;
}

export function enclosingFunctions(node: ts.Node): Enclosing {
  const out: Enclosing = { keys: [] };
  for (let current = node.parent; current; current = current.parent) {
    if (isFunctionLike(current) && current.body) {
      out.keys.push(functionKeyOf(current));
      out.name ??= functionName(current);
      out.innermost ??= current;
      out.outermost = current;
    }
  }
  return out;
}
