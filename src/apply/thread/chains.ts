import { Node, ts, type SourceFile } from 'ts-morph';
import { resolveCallee } from '../../findings/actionFacts.js';
import { httpProviderCalls, literal, providerCalls } from '../../findings/providerCalls.js';
import type { SourceContext } from '../../findings/types.js';
import { calls, localInitializer } from '../../findings/walk.js';
import { unwrap } from '../../inspect/parse/astHelpers.js';
import type { PaymentProvider } from '../../inspect/types.js';
import { morphNode, parseSource } from '../sourceFile.js';
import { ADYEN, type ProviderKeying } from '../transforms/adyenKey.js';
import { HTTP_KEY_HELPER, httpKeyPlacement } from '../transforms/httpKey.js';
import { PAYPAL } from '../transforms/paypalKey.js';
import { perCallKey, type PerCallKey } from '../transforms/perCallKey.js';
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

/** How apply keys an open call: Stripe's request options, another SDK's keying (adyenKey.ts, paypalKey.ts), or a raw-HTTP header (httpKey.ts). */
export type KeyHow = { via: 'stripe'; paramsIndex: number } | { via: 'sdk'; keying: ProviderKeying } | { via: 'http' };

/** A provider call in the function at the end of a chain, which apply keys from the context passed down. */
export interface OpenCall {
  call: ts.CallExpression;
  provider: PaymentProvider;
  operation: string;
  how: KeyHow;
  /** Set when the call sends a per-call key, which the derived one replaces; unset when it sends none. */
  perCall?: PerCallKey;
  /** Why apply cannot add the key where the call sends its headers (httpKeyPlacement): the plan leaves it to the user. */
  unplaceable?: string;
  /**
   * Set when the call is keyed from the context already (another action's claim, an earlier apply, or by hand), with
   * the step written there (undefined for none, null when it is not a number apply can read): nothing to edit in it,
   * but it is one of the places the handler's claim reaches, numbered with the others.
   */
  written?: { step: number | undefined | null };
}

/** A chain from the handler to the function holding unkeyed provider calls. */
export interface Chain {
  hops: Hop[];
  calls: OpenCall[];
}

export const startOf = (node: ts.Node) => node.getStart(node.getSourceFile());
export const lineOf = (node: ts.Node) => node.getSourceFile().getLineAndCharacterOfPosition(startOf(node)).line + 1;
const within = (node: ts.Node, fn: ts.Node) => node.pos >= fn.pos && node.end <= fn.end;

/** The SDKs other than Stripe whose calls apply keys, by provider. */
const SDK_KEYINGS: Partial<Record<PaymentProvider, ProviderKeying>> = { adyen: ADYEN, paypal: PAYPAL };

/** The providers.ts helper an open call's key comes from. */
export function keyHelper(item: OpenCall): string {
  if (item.how.via === 'stripe') return 'stripeRequestOptions';
  return item.how.via === 'sdk' ? item.how.keying.helper : HTTP_KEY_HELPER[item.provider]!;
}

/** Every helper that makes a derived key: a call whose text passes the context to one is keyed already. */
const KEYED_FROM_CONTEXT = new RegExp(`\\b(stripeRequestOptions|adyenIdempotency|paypalRequestId|providerKey)\\(${CONTEXT_NAME}\\b`);

/** A ts-morph parse of a source, only to ask the keying transforms where a key would go (nothing is edited in it). */
const views = new WeakMap<ts.SourceFile, SourceFile>();
function viewOf(source: SourceContext): SourceFile {
  const cached = views.get(source.sf);
  if (cached) return cached;
  const view = parseSource(source.rel, source.text, { quote: 'single', semicolons: true });
  views.set(source.sf, view);
  return view;
}

/**
 * A key already taken from the context: in the call, in the key set before it (`headers.set('Idempotency-Key', …)`),
 * or in the local the key names (`const idempotencyKey = …`).
 */
function keyedFromContext(call: ts.CallExpression, key: ts.Expression | undefined, sf: ts.SourceFile): boolean {
  return contextKeyText(call, key, sf) !== undefined;
}

/** The text holding the key taken from the context (keyedFromContext), or undefined when there is none. */
function contextKeyText(call: ts.CallExpression, key: ts.Expression | undefined, sf: ts.SourceFile): string | undefined {
  const named = key && unwrap(key);
  const init = named && ts.isIdentifier(named) ? localInitializer(named) : undefined;
  return [call.getText(sf), key?.getText(sf), init?.getText(sf)].find((text) => text !== undefined && KEYED_FROM_CONTEXT.test(text));
}

/** The step a derived key is made with: `stripeRequestOptions(idempotencyContext, 1)` → 1, none → undefined, `…, step)` → null. */
function writtenStep(text: string): number | undefined | null {
  const match = new RegExp(`\\b(?:stripeRequestOptions|adyenIdempotency|paypalRequestId|providerKey)\\(${CONTEXT_NAME}\\s*(?:,\\s*([^,)]*?)\\s*)?[,)]`).exec(text);
  const step = match?.[1];
  if (step === undefined) return undefined;
  return /^\d+$/.test(step) ? Number(step) : null;
}

/** Whether `fn` takes the context parameter apply adds: its keyed calls were keyed through it. */
export const contextIndex = (fn: ts.FunctionLikeDeclaration) => fn.parameters.findIndex((p) => ts.isIdentifier(p.name) && p.name.text === CONTEXT_NAME);

/** How a function a NestJS route reaches reads the route's claim itself (the interceptor's AsyncLocalStorage). */
export const AMBIENT_ACCESSOR = 'idempotencyOf()';

/** Whether `fn` reads the claim it runs under: `const idempotencyContext = idempotencyOf();` among its first statements. */
export function readsAmbientContext(fn: ts.FunctionLikeDeclaration): boolean {
  if (!fn.body || !ts.isBlock(fn.body)) return false;
  return fn.body.statements.some(
    (s) =>
      ts.isVariableStatement(s) &&
      s.declarationList.declarations.some((d) => ts.isIdentifier(d.name) && d.name.text === CONTEXT_NAME && d.initializer !== undefined && ts.isCallExpression(d.initializer) && ts.isIdentifier(d.initializer.expression) && d.initializer.expression.text === 'idempotencyOf' && d.initializer.arguments.length === 0),
  );
}

/**
 * The provider calls in `fn` keyed from its context parameter, or from the claim it reads itself (readsAmbientContext),
 * already (an earlier apply for another action, or by hand), with the step each is keyed with; none when `fn` has no
 * such context. In source order.
 */
export function keyedCalls(fn: ts.FunctionLikeDeclaration, source: SourceContext): OpenCall[] {
  if (contextIndex(fn) < 0 && !readsAmbientContext(fn)) return [];
  const out: OpenCall[] = [];
  const add = (c: { call: ts.CallExpression; key?: ts.Expression; provider: PaymentProvider; operation: string }, how: KeyHow | undefined) => {
    const text = within(c.call, fn) ? contextKeyText(c.call, c.key, source.sf) : undefined;
    if (text !== undefined && how) out.push({ call: c.call, provider: c.provider, operation: c.operation, how, written: { step: writtenStep(text) } });
  };
  for (const c of providerCalls(source)) {
    const keying = SDK_KEYINGS[c.provider];
    add(c, c.provider === 'stripe' ? { via: 'stripe', paramsIndex: -1 } : keying ? { via: 'sdk', keying } : undefined);
  }
  for (const c of httpProviderCalls(source)) add(c, { via: 'http' });
  return out.sort((a, b) => a.call.pos - b.call.pos);
}

/**
 * The provider calls in `fn` that send no key, or one made anew on each call (perCallKey), and that the keying
 * transforms can key: Stripe whose options apply can extend, Adyen and PayPal SDK calls with a place for the key
 * (ProviderKeying.placement), raw-HTTP calls to a provider's REST API (with why apply cannot reach their headers,
 * httpKeyPlacement, so the step says it rather than the call being passed over). In source order.
 */
export function openCalls(fn: ts.FunctionLikeDeclaration, source: SourceContext): OpenCall[] {
  const out: OpenCall[] = [];
  const morph = (call: ts.CallExpression) => morphNode(viewOf(source), call, Node.isCallExpression);
  for (const c of providerCalls(source)) {
    if (!within(c.call, fn) || keyedFromContext(c.call, c.key, source.sf)) continue;
    const perCall = c.key && perCallKey(c.key, fn, source.sf);
    if (perCall && (c.provider === 'stripe' || SDK_KEYINGS[c.provider])) {
      const how: KeyHow = c.provider === 'stripe' ? { via: 'stripe', paramsIndex: -1 } : { via: 'sdk', keying: SDK_KEYINGS[c.provider]! };
      out.push({ call: c.call, provider: c.provider, operation: c.operation, how, perCall });
      continue;
    }
    if (c.key !== undefined || c.opaqueOptions) continue;
    if (c.provider === 'stripe') {
      if (!c.params || /\bstripeRequestOptions\(/.test(c.call.getText(source.sf))) continue;
      // The parameters as written, or through a local (`const params = { … }; create(params)`): the argument either way.
      const paramsIndex = c.call.arguments.findIndex((a) => a === c.params || literal(a) === c.params);
      const options = c.call.arguments[paramsIndex + 1];
      const placeable = paramsIndex >= 0 && (options === undefined ? c.call.arguments.length === paramsIndex + 1 : ts.isObjectLiteralExpression(options));
      if (placeable) out.push({ call: c.call, provider: c.provider, operation: c.operation, how: { via: 'stripe', paramsIndex } });
      continue;
    }
    const keying = SDK_KEYINGS[c.provider];
    const node = keying && morph(c.call);
    if (keying && node && !keying.keyed(node) && keying.placement(node)) out.push({ call: c.call, provider: c.provider, operation: c.operation, how: { via: 'sdk', keying } });
  }
  for (const c of httpProviderCalls(source)) {
    if (!within(c.call, fn) || HTTP_KEY_HELPER[c.provider] === undefined) continue;
    if (keyedFromContext(c.call, c.key, source.sf)) continue;
    const perCall = c.key && perCallKey(c.key, fn, source.sf);
    if (perCall) {
      out.push({ call: c.call, provider: c.provider, operation: c.operation, how: { via: 'http' }, perCall });
      continue;
    }
    if (c.keyed) continue;
    const node = morph(c.call);
    const place = node && httpKeyPlacement(node, viewOf(source));
    if (place) out.push({ call: c.call, provider: c.provider, operation: c.operation, how: { via: 'http' }, ...(typeof place === 'string' ? { unplaceable: place } : {}) });
  }
  return out.sort((a, b) => a.call.pos - b.call.pos);
}

/** Every provider call (any SDK, or raw HTTP the handler's own keying covers) made in the handler itself. */
export function ownProviderCalls(fn: ts.FunctionLikeDeclaration, source: SourceContext): number {
  const inside = (c: { call: ts.Node }) => within(c.call, fn);
  return providerCalls(source).filter(inside).length + httpProviderCalls(source).filter(inside).length;
}

/**
 * Handler → … → functions with provider calls, through the calls the findings walk resolves: unkeyed ones, and ones
 * keyed from a context parameter already (OpenCall.written), which the handler's claim may still need passing to.
 */
export function chainsFrom(ctx: Sources, fn: ts.FunctionLikeDeclaration, source: SourceContext, trail: Hop[], seen: Set<ts.Node>): Chain[] {
  const out: Chain[] = [];
  for (const call of calls(fn)) {
    const target = resolveCallee(ctx, source, call);
    if (!target || seen.has(target.fn)) continue;
    const hop: Hop = { call, callSource: source, fn: target.fn, source: target.source };
    const open = [...openCalls(target.fn, target.source), ...keyedCalls(target.fn, target.source)].sort((a, b) => a.call.pos - b.call.pos);
    if (open.length > 0) out.push({ hops: [...trail, hop], calls: open });
    if (trail.length + 1 < MAX_HOPS) out.push(...chainsFrom(ctx, target.fn, target.source, [...trail, hop], new Set([...seen, target.fn])));
  }
  return out;
}

/**
 * The files an earlier apply keyed from the claim threaded from here: each call passing it to a function that keys a
 * provider call with it, and on below (a handler keys several places, each with its own step). Empty when none.
 */
export function threadedBefore(ctx: Sources, fn: ts.FunctionLikeDeclaration, source: SourceContext, depth = 0): SourceContext[] {
  if (depth >= MAX_HOPS) return [];
  const found = new Set<SourceContext>();
  for (const call of calls(fn)) {
    if (!call.arguments.some((a) => ts.isIdentifier(a) && a.text === CONTEXT_NAME)) continue;
    const target = resolveCallee(ctx, source, call);
    if (!target || !target.fn.parameters.some((p) => ts.isIdentifier(p.name) && p.name.text === CONTEXT_NAME)) continue;
    const keyed = [...providerCalls(target.source), ...httpProviderCalls(target.source)].some((c) => within(c.call, target.fn) && keyedFromContext(c.call, c.key, target.source.sf));
    if (keyed) found.add(target.source);
    for (const below of threadedBefore(ctx, target.fn, target.source, depth + 1)) found.add(below);
  }
  return [...found];
}
