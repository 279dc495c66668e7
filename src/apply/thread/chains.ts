import { ts } from 'ts-morph';
import { resolveCallee } from '../../findings/actionFacts.js';
import { httpProviderCalls, providerCalls } from '../../findings/providerCalls.js';
import type { SourceContext } from '../../findings/types.js';
import { calls } from '../../findings/walk.js';
import { CONTEXT_NAME } from '../transforms/stripeKey.js';

/** As far as the findings walk follows helpers (actionFacts MAX_DEPTH): handler → service → its helper → … */
export const MAX_HOPS = 3;

export type Sources = { sources: readonly SourceContext[] };

/** One step down from the handler: the call that runs `fn` (in `source`). */
export interface Hop {
  call: ts.CallExpression;
  callSource: SourceContext;
  fn: ts.FunctionLikeDeclaration;
  source: SourceContext;
}

/** A provider call in the function at the end of a chain, which apply keys from the context passed down. */
export interface OpenCall {
  call: ts.CallExpression;
  paramsIndex: number;
  operation: string;
}

/** A chain from the handler to the function holding unkeyed provider calls. */
export interface Chain {
  hops: Hop[];
  calls: OpenCall[];
}

export const startOf = (node: ts.Node) => node.getStart(node.getSourceFile());
export const lineOf = (node: ts.Node) => node.getSourceFile().getLineAndCharacterOfPosition(startOf(node)).line + 1;
const within = (node: ts.Node, fn: ts.Node) => node.pos >= fn.pos && node.end <= fn.end;

/** The Stripe calls in `fn` (not in a function nested in it) that send no key and whose options apply can extend. */
function unkeyedStripeCalls(fn: ts.FunctionLikeDeclaration, source: SourceContext): OpenCall[] {
  return providerCalls(source).flatMap((c) => {
    if (c.provider !== 'stripe' || !within(c.call, fn) || c.key !== undefined || c.opaqueOptions || !c.params) return [];
    if (/\bstripeRequestOptions\(/.test(c.call.getText(source.sf))) return [];
    const paramsIndex = c.call.arguments.indexOf(c.params as ts.Expression);
    const options = c.call.arguments[paramsIndex + 1];
    const placeable = paramsIndex >= 0 && (options === undefined ? c.call.arguments.length === paramsIndex + 1 : ts.isObjectLiteralExpression(options));
    return placeable ? [{ call: c.call, paramsIndex, operation: c.operation }] : [];
  });
}

/** Every provider call (any SDK, or raw HTTP the handler's own keying covers) made in the handler itself. */
export function ownProviderCalls(fn: ts.FunctionLikeDeclaration, source: SourceContext): number {
  const inside = (c: { call: ts.Node }) => within(c.call, fn);
  return providerCalls(source).filter(inside).length + httpProviderCalls(source).filter(inside).length;
}

/** Handler → … → functions with unkeyed provider calls, through the calls the findings walk resolves. */
export function chainsFrom(ctx: Sources, fn: ts.FunctionLikeDeclaration, source: SourceContext, trail: Hop[], seen: Set<ts.Node>): Chain[] {
  const out: Chain[] = [];
  for (const call of calls(fn)) {
    const target = resolveCallee(ctx, source, call);
    if (!target || seen.has(target.fn)) continue;
    const hop: Hop = { call, callSource: source, fn: target.fn, source: target.source };
    const open = unkeyedStripeCalls(target.fn, target.source);
    if (open.length > 0) out.push({ hops: [...trail, hop], calls: open });
    if (trail.length + 1 < MAX_HOPS) out.push(...chainsFrom(ctx, target.fn, target.source, [...trail, hop], new Set([...seen, target.fn])));
  }
  return out;
}

/** Whether an earlier apply threaded the claim from here: a call passes it to a function that keys a provider call with it. */
export function threadedBefore(ctx: Sources, fn: ts.FunctionLikeDeclaration, source: SourceContext, depth = 0): SourceContext | undefined {
  if (depth >= MAX_HOPS) return undefined;
  for (const call of calls(fn)) {
    if (!call.arguments.some((a) => ts.isIdentifier(a) && a.text === CONTEXT_NAME)) continue;
    const target = resolveCallee(ctx, source, call);
    if (!target || !target.fn.parameters.some((p) => ts.isIdentifier(p.name) && p.name.text === CONTEXT_NAME)) continue;
    const keyed = providerCalls(target.source).some((c) => within(c.call, target.fn) && c.call.getText(target.source.sf).includes(`stripeRequestOptions(${CONTEXT_NAME}`));
    const found = keyed ? target.source : threadedBefore(ctx, target.fn, target.source, depth + 1);
    if (found) return found;
  }
  return undefined;
}
