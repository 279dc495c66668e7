import { ts } from 'ts-morph';
import type { Provider } from '../../config/schema.js';
import { KEY_HEADERS } from '../../findings/providerCalls.js';
import type { SourceContext } from '../../findings/types.js';
import type { PaymentProvider } from '../../inspect/types.js';
import { andList, PROVIDER_LABELS } from '../../model/labels.js';
import { CONTEXT_NAME } from '../transforms/stripeKey.js';
import type { Edit, ManualStep, WiringTarget } from '../types.js';
import { AMBIENT_ACCESSOR, chainsFrom, contextIndex, keyHelper, lineOf, ownProviderCalls, readsAmbientContext, threadedBefore, type Chain, type Hop, type OpenCall, type Sources } from './chains.js';
import type { HandlerEdit, Op } from './edit.js';
import type { LocatedHandler } from './locate.js';
import { ambientRefusal, nameOfFunction, otherUses, overridable, refusal, repetition, type RepetitionFacts } from './refusals.js';

/** What threading one action's claim takes: edits per file, or the manual steps saying why not. */
export interface ThreadPlan {
  ops: Array<{ file: string; op: Op }>;
  handler?: { file: string; edit: HandlerEdit };
  edits: Edit[];
  manual: ManualStep[];
  /** The action's out-of-handler provider calls get the key (this run or an earlier one). */
  threaded: boolean;
  /** The files holding the calls an earlier run keyed. */
  holders: SourceContext[];
  /** Where the calls on the way pass the context (`file:line`), this run or an earlier one. */
  passes: string[];
  /** The other calls of each function on the way (`file:line`), with the provider calls they reach below it. */
  callers: Array<{ hop: Hop; at: string[]; below: OpenCall[] }>;
  /**
   * The providers of the out-of-handler calls this plan keys or has a step of its own for (why not): the route
   * pass's generic "not made inside the route handler" step for them is superseded.
   */
  providers: PaymentProvider[];
  /** The functions holding the calls read the claim themselves (LocatedHandler.ambient): nothing is passed down. */
  ambient?: boolean;
  /** Every provider call out of the handler that its claim reaches, keyed or refused (settleAmbientCalls). */
  reached: ts.CallExpression[];
}

/** What planning reads of the project beyond its sources. */
export interface ThreadProject extends RepetitionFacts {
  root: string;
  /** The helpers the project's providers.ts exports (one per provider in the design). */
  exported: ReadonlySet<string>;
}

const label = (provider: PaymentProvider) => PROVIDER_LABELS[provider as Provider] ?? provider;

/** "Stripe", "Adyen and PayPal": the providers the calls go to, for messages. */
function providersOf(calls: readonly OpenCall[]): { names: string; plural: boolean } {
  const names = [...new Set(calls.map((c) => label(c.provider)))];
  return { names: andList(names), plural: names.length > 1 };
}

/** How to key a call by hand, from the context the user passes down: `stripeRequestOptions(context) … as its request options`. */
function byHand(calls: readonly OpenCall[], step = ''): string {
  const ways = calls.map((c) => {
    const helper = `${keyHelper(c)}(context${step})`;
    if (c.how.via === 'http') return `the ${KEY_HEADERS[c.provider]!} header set to ${helper} from providers.ts`;
    return `${helper} from providers.ts as its ${c.how.via === 'sdk' ? c.how.keying.where : 'request options'}`;
  });
  return [...new Set(ways)].join('; ');
}

/** A call as messages name it: `stripe.paymentIntents.create`, `Adyen payments`, `the PayPal-Request-Id header of paypal v2/checkout/orders`. */
function callName(item: OpenCall): string {
  if (item.how.via === 'stripe') return `stripe.${item.operation}`;
  if (item.how.via === 'http') return `the ${KEY_HEADERS[item.provider]!} header of ${item.provider} ${item.operation}`;
  return `${label(item.provider)} ${item.operation}`;
}

/** Why apply cannot key a raw-HTTP call whose headers it cannot reach (OpenCall.unplaceable), and what to send by hand. */
function unplaceableReason(call: OpenCall, step = ''): string {
  return `not keyed because apply cannot add ${callName(call)}: ${call.unplaceable!}. Pass idempotencyOf(request) down and send ${byHand([call], step)} by hand`;
}

const holderOf = (chain: Chain): Hop => chain.hops[chain.hops.length - 1]!;

/** The call passes the context in the place of `hop.fn`'s context parameter. */
const passesContext = (hop: Hop) => {
  const index = contextIndex(hop.fn);
  const arg = index >= 0 ? hop.call.arguments[index] : undefined;
  return arg !== undefined && ts.isIdentifier(arg) && arg.text === CONTEXT_NAME;
};

/**
 * A chain as this handler still has to thread it: calls keyed from the context already count only where a call on
 * the way does not pass it yet (another action's claim keyed them); where every call passes it, this handler's claim
 * reaches them already (an earlier run, found by threadedBefore). Undefined when nothing is left.
 */
function stillOpen(chain: Chain): Chain | undefined {
  if (!chain.hops.every(passesContext)) return chain;
  const calls = chain.calls.filter((c) => c.written === undefined);
  return calls.length > 0 ? { ...chain, calls } : undefined;
}

/**
 * Each call's step, chain by chain: its place among all the calls the handler reaches for the same provider, the
 * chains in the order they are found (the handler's calls in source order, depth first) and within a holder SDK calls
 * first, as the handler transforms number them; none when it is the provider's only call. Written at the call site,
 * so it depends on the code alone, never on the order things run in.
 */
function stepsAcross(chains: readonly Chain[]): Array<Array<number | undefined>> {
  const order = chains.flatMap((chain) => [...chain.calls.filter((c) => c.how.via !== 'http'), ...chain.calls.filter((c) => c.how.via === 'http')]);
  return chains.map((chain) =>
    chain.calls.map((item) => {
      const same = order.filter((c) => c.provider === item.provider);
      return same.length > 1 ? same.indexOf(item) : undefined;
    }),
  );
}

/** Where a call is, with its step when it has one, for the edit summaries: `line 5, step 1`. */
const placeOf = (item: OpenCall, step: number | undefined) => `line ${lineOf(item.call)}${step !== undefined ? `, step ${step}` : ''}`;

/** Why one chain cannot be keyed (the rules of a single chain), with where to say it; undefined when it can. */
function chainRefusal(ctx: Sources, fn: ts.FunctionLikeDeclaration, chain: Chain, project: ThreadProject, step: string, ambient: boolean): { reason: string; at: { file: string; line: number } } | undefined {
  const holder = holderOf(chain);
  const at = { file: holder.source.rel, line: lineOf(chain.calls[0]!.call) };
  const { names, plural } = providersOf(chain.calls);
  const calls = `the ${names} call${chain.calls.length > 1 ? 's' : ''}`;
  const missing = chain.calls.filter((c) => !project.exported.has(keyHelper(c)));
  if (missing.length > 0) {
    const providers = [...new Set(missing.map((c) => c.provider))];
    return { reason: `not keyed because providers.ts has no ${[...new Set(missing.map(keyHelper))].join(' or ')} for ${providersOf(missing).names}: add ${providers.map((p) => `"${p}"`).join(' and ')} to payments in the config, regenerate, then apply`, at };
  }
  const refused = chain.calls.find((c) => c.perCall?.refused !== undefined);
  if (refused) {
    return { reason: `not keyed because ${callName(refused)} sends a key that is new on every call, and ${refused.perCall!.refused!}: pass idempotencyOf(request) down and use ${byHand([refused], step)} by hand`, at: { file: holder.source.rel, line: lineOf(refused.call) } };
  }
  const unplaceable = chain.calls.find((c) => c.unplaceable !== undefined);
  if (unplaceable) return { reason: unplaceableReason(unplaceable, step), at: { file: holder.source.rel, line: lineOf(unplaceable.call) } };
  // The handler's own function for the first hop, the previous hop's function for the others.
  const callers = [fn, ...chain.hops.map((hop) => hop.fn)];
  const repeated = [
    ...chain.hops.map((hop, index) => ({ how: repetition(hop.call, callers[index]!, project), where: `${hop.callSource.rel}:${lineOf(hop.call)}` })),
    ...chain.calls.map((item) => ({ how: repetition(item.call, holder.fn, project), where: `${holder.source.rel}:${lineOf(item.call)}` })),
  ].find((r) => r.how !== undefined);
  if (repeated) {
    return { reason: `not keyed because the call at ${repeated.where} ${repeated.how!}: every run would send ${names} the same key with other parameters, which ${plural ? 'they refuse' : 'it refuses'}. Key each run with its own step, ${byHand(chain.calls, ', n')}, by hand`, at };
  }
  // Read where the call is made, the claim changes no signature: only the function holding the call is edited.
  if (ambient) {
    // The method reached may not be the one that runs: its call could be another, unkeyed.
    const held = chain.hops.map((hop) => overridable(ctx, hop)).find((r) => r !== undefined) ?? ambientRefusal(project.root, holder);
    return held ? { reason: `not keyed because ${held}: read idempotencyOf() there and add ${byHand(chain.calls, step)} by hand`, at } : undefined;
  }
  const why = chain.hops.map((hop) => refusal(project.root, ctx, hop)).find((r) => r !== undefined);
  if (why) return { reason: `not keyed because ${why}: pass idempotencyOf(request) down to ${calls} and add ${byHand(chain.calls, step)} by hand`, at };
  return undefined;
}

/** The calls where two chains to one holder part: the same function reached twice. */
function partingCalls(chains: readonly Chain[]): string[] {
  const depth = Math.min(...chains.map((c) => c.hops.length));
  let index = 0;
  while (index < depth - 1 && chains.every((c) => c.hops[index]!.call === chains[0]!.hops[index]!.call)) index += 1;
  return [...new Set(chains.map((c) => `${c.hops[index]!.callSource.rel}:${lineOf(c.hops[index]!.call)}`))];
}

/**
 * The plan for one protected handler: the chains to the functions holding its unkeyed provider calls, each function
 * on the way gaining the parameter and each call passing it on, each provider call keyed with its own step among all
 * the places the handler reaches; or a manual step when a refusal rule applies.
 */
export function planThreading(ctx: Sources, located: LocatedHandler, target: WiringTarget, project: ThreadProject): ThreadPlan {
  const out: ThreadPlan = { ops: [], edits: [], manual: [], threaded: false, holders: [], passes: [], callers: [], providers: [], reached: [] };
  const { fn, source: handlerSource } = located;
  const manual = (reason: string, at: { file: string; line: number }) => {
    out.manual.push({ action: target.action, file: at.file, line: at.line, reason });
    return out;
  };
  // Functions whose only provider calls are raw-HTTP ones apply cannot reach are steps of their own: they would get
  // no key from the claim, so they share none with the calls it does key, and are no second place.
  const found = chainsFrom(ctx, fn, handlerSource, [], new Set([fn])).flatMap((c) => stillOpen(c) ?? []);
  out.providers = [...new Set(found.flatMap((c) => c.calls.map((call) => call.provider)))];
  out.reached = found.flatMap((c) => c.calls.map((call) => call.call));
  const blocked = found.filter((c) => c.calls.every((call) => call.unplaceable !== undefined));
  for (const chain of blocked) for (const call of chain.calls) manual(unplaceableReason(call), { file: holderOf(chain).source.rel, line: lineOf(call.call) });
  const chains = found.filter((c) => !blocked.includes(c));
  const earlier = threadedBefore(ctx, fn, handlerSource);
  if (chains.length === 0) return earlier.length > 0 ? { ...out, threaded: true, holders: earlier } : out;
  const all = chains.flatMap((c) => c.calls);
  const at = { file: holderOf(chains[0]!).source.rel, line: lineOf(all[0]!.call) };
  const { names, plural } = providersOf(all);
  // How to key by hand: with a step as soon as the handler reaches more than one place.
  const step = chains.length > 1 ? ', n' : '';
  const where = chains.map((c) => `${holderOf(c).source.rel}:${lineOf(c.calls[0]!.call)} (${providersOf(c.calls).names})`).join(', ');
  // NestJS: the interceptor holds the claim for the route's whole async call chain, so nothing is passed down; each
  // function making a provider call reads it itself. One keyed through a parameter before goes on that way.
  const ambient = located.ambient === true && chains.every((c) => contextIndex(holderOf(c).fn) < 0);
  // Keyed by an earlier run: nothing to edit, and the same note for the other callers as then.
  if (ambient && all.every((c) => c.written !== undefined)) return { ...out, threaded: true, ambient, holders: [...new Set(chains.map((c) => holderOf(c).source))], callers: callersOf(chains, usesOf(ctx, chains)) };
  if (!located.accessor) {
    const files = [...new Set(chains.map((c) => holderOf(c).source.rel))].join(' and ');
    return manual(`the ${names} call${all.length > 1 ? 's' : ''} in ${files} need${all.length > 1 ? '' : 's'} the handler's claim, but the handler has no named request parameter to read it from: pass idempotencyOf(request) down and add ${byHand(all, step)} by hand`, at);
  }
  // The route transforms key the handler's own calls with steps below their count (0 … own - 1, or none, which is
  // step 0): the calls reached here are numbered from there on, so no two share a key. Where each function reads
  // the claim itself (NestJS), another route reaching the same function would number it otherwise.
  const own = ownProviderCalls(fn, handlerSource);
  if (own > 0 && ambient) {
    return manual(`the handler reaches provider calls in more than one place (${where}, and its own); its own calls are keyed with steps numbered apart from these, so keyed from one claim two could share a key, which ${names} refuse${plural ? '' : 's'} for different parameters: pass idempotencyOf(request) down and give each call its own step, ${byHand(all, ', n')}, by hand`, at);
  }
  const twice = chains.find((chain, index) => chains.findIndex((other) => holderOf(other).fn === holderOf(chain).fn) !== index);
  if (twice) {
    const holder = holderOf(twice);
    const same = chains.filter((c) => holderOf(c).fn === holder.fn);
    const provider = providersOf(twice.calls);
    return manual(`the handler reaches ${nameOfFunction(holder.fn) ?? 'a function'} (${holder.source.rel}) through more than one call (${partingCalls(same).join(', ')}): it runs more than once in one execution, and keyed from one claim every run would send ${provider.names} the same key with other parameters, which ${provider.plural ? 'they refuse' : 'it refuses'}. Give each run its own step, ${byHand(twice.calls, ', n')}, by hand`, { file: holder.source.rel, line: lineOf(twice.calls[0]!.call) });
  }
  // The steps are numbered over the places found now: ones keyed before would not be counted, and two could meet.
  if (earlier.length > 0) {
    return manual(`the handler's claim keys provider calls in ${earlier.map((s) => s.rel).join(', ')} already (an earlier apply, or by hand), and the handler now also reaches ${all.some((c) => c.written) ? 'ones it does not pass it to yet' : 'unkeyed ones'} (${where}): numbered apart, two could share a key, which ${names} refuse${plural ? '' : 's'} for different parameters. Give each call its own step, ${byHand(all, ', n')}, by hand`, at);
  }
  // One refused chain leaves the whole handler manual: keyed in part, the handler would count as threaded (the
  // route pass's step for its out-of-handler calls would go, and a re-run would take it as done), while the place
  // left open still needs a step numbered with the others.
  for (const chain of chains) {
    const refused = chainRefusal(ctx, fn, chain, project, step, ambient);
    if (refused) return manual(refused.reason, refused.at);
  }
  const uses = usesOf(ctx, chains);
  const hops = uses.map((u) => u.hop);
  // A new trailing parameter could receive something else there; read where the call is made, nothing is added.
  const asValue = ambient ? undefined : uses.find((u) => u.values.length > 0 || u.extraArgs);
  if (asValue) {
    const name = nameOfFunction(asValue.hop.fn) ?? 'the function';
    return manual(`not keyed because ${name} is ${asValue.extraArgs ? 'called with more arguments than it declares' : `also used as a value at ${asValue.values.join(', ')}`}, so a new trailing parameter could receive something else there: pass idempotencyOf(request) down and add ${byHand(all, step)} by hand`, at);
  }
  // A function that takes the context already (keyed for another action) gets it in that place: a call that puts
  // something else there would need it moved, which is the user's call.
  const occupied = ambient ? undefined : hops.find((hop) => contextIndex(hop.fn) >= 0 && hop.call.arguments[contextIndex(hop.fn)] !== undefined && !passesContext(hop));
  if (occupied) {
    const name = nameOfFunction(occupied.fn) ?? 'the function';
    return manual(`not keyed because the call at ${occupied.callSource.rel}:${lineOf(occupied.call)} passes ${occupied.call.arguments[contextIndex(occupied.fn)]!.getText(occupied.callSource.sf)} where ${name} takes its ${CONTEXT_NAME}: pass idempotencyOf(request) there instead, by hand`, at);
  }
  const steps = stepsAcross(chains).map((chain) => chain.map((step) => (own > 0 ? own + (step ?? 0) : step)));
  // A call keyed already (another action's claim reaches it) holds the step written there: this handler's claim
  // can use it only when it numbers the call alike (no step and step 0 make the same key).
  const clash = chains.flatMap((chain, index) => chain.calls.map((item, at) => ({ item, holder: holderOf(chain), step: steps[index]![at] }))).find(({ item, step }) => item.written !== undefined && (item.written.step === null || (item.written.step ?? 0) !== (step ?? 0)));
  if (clash) {
    const written = clash.item.written!.step;
    const line = lineOf(clash.item.call);
    const now = written === null ? 'with a step apply cannot read' : `as step ${written ?? 0}`;
    return manual(`not keyed because ${callName(clash.item)} at ${clash.holder.source.rel}:${line} is keyed from the claim already ${now} (another action's numbering, or by hand), and this action reaches it as step ${clash.step ?? 0}, and a call site can hold one number: pass the step down with idempotencyOf(request) and key the call with ${byHand([clash.item], ', step')}, by hand`, { file: clash.holder.source.rel, line });
  }
  if (ambient) return planAmbient(out, chains, steps, target, uses);
  // Planned: every hop's call passes the context on, every function on the way takes it, each holder keys its calls.
  for (const hop of hops) {
    const existing = contextIndex(hop.fn);
    const position = existing >= 0 ? existing : hop.fn.parameters.length;
    if (existing < 0) out.ops.push({ file: hop.source.rel, op: { kind: 'param', fn: hop.fn } });
    if (!(hop.call.arguments[position] && hop.call.arguments[position]!.getText(hop.callSource.sf) === CONTEXT_NAME)) out.ops.push({ file: hop.callSource.rel, op: { kind: 'arg', call: hop.call, index: position, value: CONTEXT_NAME } });
  }
  const route = `${target.method ?? 'POST'} ${target.path ?? ''}`;
  chains.forEach((chain, index) => {
    const holder = holderOf(chain).source.rel;
    chain.calls.forEach((item, at) => {
      if (!item.written) out.ops.push({ file: holder, op: { kind: 'key', item, step: steps[index]![at] } });
    });
    if (chain.calls.some((item) => item.written) && !out.holders.includes(holderOf(chain).source)) out.holders.push(holderOf(chain).source);
    const path = chain.hops.map((hop) => `${nameOfFunction(hop.fn) ?? 'a function'} (${hop.source.rel})`).join(' → ');
    out.edits.push({ action: target.action, file: holder, summary: `threads the claim of ${route} down to ${path}: ${chain.hops.every((hop) => contextIndex(hop.fn) >= 0) ? `the ${CONTEXT_NAME} parameter ${chain.hops.length > 1 ? 'each takes' : 'it takes'} already` : `a trailing optional ${CONTEXT_NAME} parameter`}, passed by each caller` });
    chain.calls.forEach((item, at) => {
      const place = placeOf(item, steps[index]![at]);
      if (item.written) {
        out.edits.push({ action: target.action, file: holder, summary: `passes this action's claim to ${callName(item)} (${place}), keyed from a context already; called without one it sends what it sent before` });
        return;
      }
      if (item.perCall) {
        out.edits.push({ action: target.action, file: holder, summary: `replaces the per-call key of ${callName(item)} with the derived key when given a context (${place}); called without one it sends what it sent before` });
        return;
      }
      const what = item.how.via === 'http' ? `as the ${KEY_HEADERS[item.provider]!} header of ${item.provider} ${item.operation}` : `to ${item.how.via === 'stripe' ? 'stripe.' : ''}${item.operation}`;
      out.edits.push({ action: target.action, file: holder, summary: `passes the derived ${label(item.provider)} idempotency key ${what} (${place}) when given a context; called without one it sends what it sent before` });
    });
  });
  out.handler = { file: handlerSource.rel, edit: { fn, accessor: located.accessor, addRequest: located.addRequest === true } };
  out.threaded = true;
  out.passes = hops.map((hop) => `${hop.callSource.rel}:${lineOf(hop.call)}`);
  out.callers = callersOf(chains, uses);
  return out;
}

/** Each function on the way, once, with its other uses. A function on several chains is on each one through the same call (else its holders would be reached twice). */
function usesOf(ctx: Sources, chains: readonly Chain[]) {
  const hops = [...new Map(chains.flatMap((c) => c.hops).map((hop) => [hop.fn, hop] as const)).values()];
  return hops.map((hop) => ({ hop, ...otherUses(ctx, hop) }));
}

/** The functions on the way that something else calls too, with the provider calls they reach below them. */
function callersOf(chains: readonly Chain[], uses: ReadonlyArray<{ hop: Hop; callers: string[] }>): ThreadPlan['callers'] {
  return uses.filter((u) => u.callers.length > 0).map((use) => ({ hop: use.hop, at: use.callers, below: chains.filter((c) => c.hops.some((hop) => hop.fn === use.hop.fn)).flatMap((c) => c.calls) }));
}

/**
 * The ambient plan (LocatedHandler.ambient): each function holding the calls reads the claim it runs under,
 * `const idempotencyContext = idempotencyOf();`, and keys its calls from it as the threaded plan does, with the same
 * steps; no signature changes, nothing passed down. Outside a protected route idempotencyOf() is undefined and the
 * call sends what it sent before; from any protected route that reaches it, it is keyed with that route's claim.
 */
function planAmbient(out: ThreadPlan, chains: readonly Chain[], steps: ReadonlyArray<ReadonlyArray<number | undefined>>, target: WiringTarget, uses: ReadonlyArray<{ hop: Hop; callers: string[] }>): ThreadPlan {
  const route = `${target.method ?? 'POST'} ${target.path ?? ''}`;
  chains.forEach((chain, index) => {
    const holder = holderOf(chain);
    if (!readsAmbientContext(holder.fn) && chain.calls.some((item) => !item.written)) out.ops.push({ file: holder.source.rel, op: { kind: 'read', fn: holder.fn } });
    const path = chain.hops.map((hop) => `${nameOfFunction(hop.fn) ?? 'a function'} (${hop.source.rel})`).join(' → ');
    chain.calls.forEach((item, at) => {
      const place = placeOf(item, steps[index]![at]);
      if (item.written) {
        if (!out.holders.includes(holder.source)) out.holders.push(holder.source);
        return;
      }
      out.ops.push({ file: holder.source.rel, op: { kind: 'key', item, step: steps[index]![at] } });
      const what = item.perCall ? `replaces the per-call key of ${callName(item)} with the derived key` : item.how.via === 'http' ? `passes the derived ${label(item.provider)} idempotency key as the ${KEY_HEADERS[item.provider]!} header of ${item.provider} ${item.operation}` : `passes the derived ${label(item.provider)} idempotency key to ${callName(item)}`;
      out.edits.push({ action: target.action, file: holder.source.rel, summary: `${what} (${place}) in ${path}, from the claim of ${route} read there with ${AMBIENT_ACCESSOR}; run outside a protected route it sends what it sent before` });
    });
  });
  out.threaded = true;
  out.ambient = true;
  // The calls on the way run under this action's claim: another protected action calling the same function is covered.
  out.passes = [...new Set(chains.flatMap((chain) => chain.hops.map((hop) => `${hop.callSource.rel}:${lineOf(hop.call)}`)))];
  out.callers = callersOf(chains, uses);
  return out;
}

/**
 * A call site holds one step. Where two protected actions would key one call with different steps (a service one
 * handler reaches as its second Stripe place and another as its only one), whichever number were written would give
 * the other action's places a shared or shifted key: both actions are left manual, whatever their order in the
 * config. No step and step 0 make the same key (providerKey's default), so they agree.
 */
export function settleSharedCalls(plans: ReadonlyArray<{ target: WiringTarget; plan: ThreadPlan }>): Array<{ target: WiringTarget; plan: ThreadPlan }> {
  const stepsAt = new Map<ts.CallExpression, Map<number, string>>();
  for (const { target, plan } of plans) {
    for (const { op } of plan.ops) {
      if (op.kind !== 'key') continue;
      const steps = stepsAt.get(op.item.call) ?? new Map<number, string>();
      if (!steps.has(op.step ?? 0)) steps.set(op.step ?? 0, target.action);
      stepsAt.set(op.item.call, steps);
    }
  }
  return plans.map(({ target, plan }) => {
    const clash = plan.ops.find(({ op }) => op.kind === 'key' && stepsAt.get(op.item.call)!.size > 1);
    if (!clash || clash.op.kind !== 'key') return { target, plan };
    const { item, step } = clash.op;
    const [theirs, action] = [...stepsAt.get(item.call)!].find(([other]) => other !== (step ?? 0))!;
    const line = lineOf(item.call);
    const reason = `not keyed because ${callName(item)} at ${clash.file}:${line} would be step ${step ?? 0} of this action's claim and step ${theirs} of ${action}'s, and a call site can hold one number: pass the step down with idempotencyOf(request) and key the call with ${byHand([item], ', step')}, by hand`;
    return { target, plan: { ops: [], edits: [], threaded: false, holders: [], passes: [], callers: [], providers: plan.providers, reached: plan.reached, manual: [{ action: target.action, file: clash.file, line, reason }] } };
  });
}

/**
 * A call keyed with idempotencyOf() reads the claim of every protected route that reaches it, also one whose plan was
 * refused (provider calls of its own, the call reached twice, …): there it would share that route's key with another
 * call, which the provider refuses for other parameters. Such a call is left manual for the action that would key it.
 */
export function settleAmbientCalls(plans: ReadonlyArray<{ target: WiringTarget; plan: ThreadPlan }>): Array<{ target: WiringTarget; plan: ThreadPlan }> {
  const refused = plans.filter(({ plan }) => !plan.threaded);
  return plans.map(({ target, plan }) => {
    if (!plan.ambient) return { target, plan };
    const shared = plan.ops.flatMap(({ file, op }) => (op.kind === 'key' ? [{ file, item: op.item, other: refused.find((r) => r.target.action !== target.action && r.plan.reached.includes(op.item.call)) }] : [])).find((k) => k.other !== undefined);
    if (!shared) return { target, plan };
    const line = lineOf(shared.item.call);
    const reason = `not keyed because ${callName(shared.item)} at ${shared.file}:${line} is also reached by ${shared.other!.target.action}, which stays manual (see its step): read with idempotencyOf() there, the call would take that route's claim too and could share its key with another call. Key it by hand with ${byHand([shared.item], ', step')}, a step of its own in each route`;
    return { target, plan: { ops: [], edits: [], threaded: false, holders: [], passes: [], callers: [], providers: plan.providers, reached: plan.reached, manual: [{ action: target.action, file: shared.file, line, reason }] } };
  });
}

/**
 * A manual step for each function on the way that is also called without a context, leaving out the calls another
 * protected action threads its own claim through (`passing`: every settled plan's passes), which do pass one.
 */
export function callerSteps(target: WiringTarget, plan: ThreadPlan, passing: ReadonlySet<string>): ManualStep[] {
  return plan.callers.flatMap(({ hop, at, below }) => {
    const left = at.filter((where) => !passing.has(where));
    if (left.length === 0) return [];
    const what = below.every((c) => c.perCall) ? 'the key they made anew on each call before' : 'no idempotency key';
    if (plan.ambient) {
      return [{ action: target.action, file: hop.source.rel, line: lineOf(hop.fn), reason: `${nameOfFunction(hop.fn) ?? 'the function'} is also called at ${left.join(', ')}: the ${providersOf(below).names} call it reaches is keyed only while it runs for a protected route (${AMBIENT_ACCESSOR} reads that route's claim; elsewhere it is undefined and the call sends ${what}, as before). Protect that caller's route too if it must not run twice` }];
    }
    return [{ action: target.action, file: hop.source.rel, line: lineOf(hop.fn), reason: `${nameOfFunction(hop.fn) ?? 'the function'} is also called at ${left.join(', ')} without a context: those calls still send ${providersOf(below).names} ${what} (the new parameter is optional). Pass idempotencyOf(request) there when that caller is protected too` }];
  });
}
