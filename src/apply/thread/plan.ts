import { ts } from 'ts-morph';
import type { Provider } from '../../config/schema.js';
import { KEY_HEADERS } from '../../findings/providerCalls.js';
import type { SourceContext } from '../../findings/types.js';
import type { PaymentProvider } from '../../inspect/types.js';
import { PROVIDER_LABELS } from '../../model/labels.js';
import { CONTEXT_NAME } from '../transforms/stripeKey.js';
import type { Edit, ManualStep, WiringTarget } from '../types.js';
import { chainsFrom, keyHelper, lineOf, ownProviderCalls, threadedBefore, type OpenCall, type Sources } from './chains.js';
import type { HandlerEdit, Op } from './edit.js';
import type { LocatedHandler } from './locate.js';
import { nameOfFunction, otherUses, refusal, repetition, type RepetitionFacts } from './refusals.js';

/** What threading one action's claim takes: edits per file, or the manual steps saying why not. */
export interface ThreadPlan {
  ops: Array<{ file: string; op: Op }>;
  handler?: { file: string; edit: HandlerEdit };
  edits: Edit[];
  manual: ManualStep[];
  /** The action's out-of-handler provider calls get the key (this run or an earlier one). */
  threaded: boolean;
  /** The file holding the calls an earlier run keyed. */
  holder?: SourceContext;
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
  return { names: names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)!}` : names[0]!, plural: names.length > 1 };
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

/** A raw-HTTP call whose headers apply cannot reach (OpenCall.unplaceable): the step says why and what to send. */
function unkeyable<T>(call: OpenCall, file: string, manual: (reason: string, at: { file: string; line: number }) => T): T {
  return manual(`not keyed because apply cannot add ${callName(call)}: ${call.unplaceable!}. Pass idempotencyOf(request) down and send ${byHand([call])} by hand`, { file, line: lineOf(call.call) });
}

/** Each call's step: its place among the holder's calls to the same provider (SDK calls first, as the handler transforms number them), none when it is the only one. */
function stepsOf(calls: readonly OpenCall[]): Array<number | undefined> {
  const ordered = (provider: PaymentProvider) => {
    const same = calls.filter((c) => c.provider === provider);
    return [...same.filter((c) => c.how.via !== 'http'), ...same.filter((c) => c.how.via === 'http')];
  };
  return calls.map((c) => {
    const same = ordered(c.provider);
    return same.length > 1 ? same.indexOf(c) : undefined;
  });
}

/**
 * The plan for one protected handler: the chain to the function holding its unkeyed provider calls, each function
 * on the way gaining the parameter and each call passing it on; or a manual step when a refusal rule applies.
 */
export function planThreading(ctx: Sources, located: LocatedHandler, target: WiringTarget, project: ThreadProject): ThreadPlan {
  const out: ThreadPlan = { ops: [], edits: [], manual: [], threaded: false };
  const { fn, source: handlerSource } = located;
  const manual = (reason: string, at: { file: string; line: number }) => {
    out.manual.push({ action: target.action, file: at.file, line: at.line, reason });
    return out;
  };
  // Functions whose only provider calls are raw-HTTP ones apply cannot reach are steps of their own: they would get
  // no key from the claim, so they share none with the calls it does key.
  const found = chainsFrom(ctx, fn, handlerSource, [], new Set([fn]));
  const blocked = found.filter((c) => c.calls.every((call) => call.unplaceable !== undefined));
  for (const chain of blocked) for (const call of chain.calls) unkeyable(call, chain.hops.at(-1)!.source.rel, manual);
  const chains = found.filter((c) => !blocked.includes(c));
  if (chains.length === 0) {
    const holder = threadedBefore(ctx, fn, handlerSource);
    return holder ? { ...out, threaded: true, holder } : out;
  }
  const first = chains[0]!;
  const holder = first.hops[first.hops.length - 1]!;
  const at = { file: holder.source.rel, line: lineOf(first.calls[0]!.call) };
  const { names, plural } = providersOf(first.calls);
  const calls = `the ${names} call${first.calls.length > 1 ? 's' : ''}`;
  if (!located.accessor) {
    return manual(`${calls} in ${holder.source.rel} need${first.calls.length > 1 ? '' : 's'} the handler's claim, but the handler has no named request parameter to read it from: pass idempotencyOf(request) down and add ${byHand(first.calls)} by hand`, at);
  }
  const own = ownProviderCalls(fn, handlerSource) > 0;
  const holders = new Set(chains.map((c) => c.hops[c.hops.length - 1]!.fn));
  if (chains.length > 1 || holders.size > 1 || own) {
    const where = chains.map((c) => `${c.hops[c.hops.length - 1]!.source.rel}:${lineOf(c.calls[0]!.call)} (${providersOf(c.calls).names})`).join(', ');
    const all = chains.flatMap((c) => c.calls);
    return manual(`the handler reaches provider calls in more than one place (${where}${own ? ', and its own' : ''}); keyed from one claim they would share a key, which ${providersOf(all).names} refuse${providersOf(all).plural ? '' : 's'} for different parameters: pass idempotencyOf(request) down and give each call its own step, ${byHand(all, ', n')}, by hand`, at);
  }
  const missing = first.calls.filter((c) => !project.exported.has(keyHelper(c)));
  if (missing.length > 0) {
    const providers = [...new Set(missing.map((c) => c.provider))];
    return manual(`not keyed because providers.ts has no ${[...new Set(missing.map(keyHelper))].join(' or ')} for ${providersOf(missing).names}: add ${providers.map((p) => `"${p}"`).join(' and ')} to payments in the config, regenerate, then apply`, at);
  }
  const refused = first.calls.find((c) => c.perCall?.refused !== undefined);
  if (refused) {
    return manual(`not keyed because ${callName(refused)} sends a key that is new on every call, and ${refused.perCall!.refused!}: pass idempotencyOf(request) down and use ${byHand([refused])} by hand`, { file: holder.source.rel, line: lineOf(refused.call) });
  }
  const unplaceable = first.calls.find((c) => c.unplaceable !== undefined);
  if (unplaceable) return unkeyable(unplaceable, holder.source.rel, manual);
  // The handler's own function for the first hop, the previous hop's function for the others.
  const callers = [fn, ...first.hops.map((hop) => hop.fn)];
  const repeated = [
    ...first.hops.map((hop, index) => ({ how: repetition(hop.call, callers[index]!, project), where: `${hop.callSource.rel}:${lineOf(hop.call)}` })),
    ...first.calls.map((item) => ({ how: repetition(item.call, holder.fn, project), where: `${holder.source.rel}:${lineOf(item.call)}` })),
  ].find((r) => r.how !== undefined);
  if (repeated) {
    return manual(`not keyed because the call at ${repeated.where} ${repeated.how!}: every run would send ${names} the same key with other parameters, which ${plural ? 'they refuse' : 'it refuses'}. Key each run with its own step, ${byHand(first.calls, ', n')}, by hand`, at);
  }
  const why = first.hops.map((hop) => refusal(project.root, ctx, hop)).find((r) => r !== undefined);
  if (why) return manual(`not keyed because ${why}: pass idempotencyOf(request) down to ${calls} and add ${byHand(first.calls)} by hand`, at);
  const uses = first.hops.map((hop) => ({ hop, ...otherUses(ctx, hop) }));
  const asValue = uses.find((u) => u.values.length > 0 || u.extraArgs);
  if (asValue) {
    const name = nameOfFunction(asValue.hop.fn) ?? 'the function';
    return manual(`not keyed because ${name} is ${asValue.extraArgs ? 'called with more arguments than it declares' : `also used as a value at ${asValue.values.join(', ')}`}, so a new trailing parameter could receive something else there: pass idempotencyOf(request) down and add ${byHand(first.calls)} by hand`, at);
  }
  // Planned: every hop's call passes the context on, every function on the way takes it, the holder keys its calls.
  for (const hop of first.hops) {
    const existing = hop.fn.parameters.findIndex((p) => ts.isIdentifier(p.name) && p.name.text === CONTEXT_NAME);
    const position = existing >= 0 ? existing : hop.fn.parameters.length;
    if (existing < 0) out.ops.push({ file: hop.source.rel, op: { kind: 'param', fn: hop.fn } });
    if (!(hop.call.arguments[position] && hop.call.arguments[position]!.getText(hop.callSource.sf) === CONTEXT_NAME)) out.ops.push({ file: hop.callSource.rel, op: { kind: 'arg', call: hop.call, index: position, value: CONTEXT_NAME } });
  }
  const steps = stepsOf(first.calls);
  first.calls.forEach((item, index) => out.ops.push({ file: holder.source.rel, op: { kind: 'key', item, step: steps[index] } }));
  out.handler = { file: handlerSource.rel, edit: { fn, accessor: located.accessor, addRequest: located.addRequest === true } };
  out.threaded = true;
  const route = `${target.method ?? 'POST'} ${target.path ?? ''}`;
  const path = first.hops.map((hop) => `${nameOfFunction(hop.fn) ?? 'a function'} (${hop.source.rel})`).join(' → ');
  out.edits.push({ action: target.action, file: holder.source.rel, summary: `threads the claim of ${route} down to ${path}: a trailing optional ${CONTEXT_NAME} parameter, passed by each caller` });
  for (const item of first.calls) {
    if (item.perCall) {
      out.edits.push({ action: target.action, file: holder.source.rel, summary: `replaces the per-call key of ${callName(item)} with the derived key when given a context (line ${lineOf(item.call)}); called without one it sends what it sent before` });
      continue;
    }
    const what = item.how.via === 'http' ? `as the ${KEY_HEADERS[item.provider]!} header of ${item.provider} ${item.operation}` : `to ${item.how.via === 'stripe' ? 'stripe.' : ''}${item.operation}`;
    out.edits.push({ action: target.action, file: holder.source.rel, summary: `passes the derived ${label(item.provider)} idempotency key ${what} (line ${lineOf(item.call)}) when given a context; called without one it sends what it sent before` });
  }
  for (const use of uses.filter((u) => u.callers.length > 0)) {
    out.manual.push({ action: target.action, file: use.hop.source.rel, line: lineOf(use.hop.fn), reason: `${nameOfFunction(use.hop.fn) ?? 'the function'} is also called at ${use.callers.join(', ')} without a context: those calls still send ${names} ${first.calls.every((c) => c.perCall) ? 'the key they made anew on each call before' : 'no idempotency key'} (the new parameter is optional). Pass idempotencyOf(request) there when that caller is protected too` });
  }
  return out;
}
