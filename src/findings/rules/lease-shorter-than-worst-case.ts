import { describeDuration } from '../../config/duration.js';
import { providerName } from '../../model/impact.js';
import { decideLease, expectedDuration, worstCaseOf } from '../../model/timing.js';
import { factsFor } from '../actionFacts.js';
import { configLocation } from '../configSources.js';
import type { ProjectReport, Rule } from '../types.js';

/** How to bound each client the action waits on, in its own terms. */
const BOUND: Record<string, string> = {
  http: '`axios.create({ baseURL, timeout: 10_000 })`, or `signal: AbortSignal.timeout(10_000)` on a fetch',
  stripe: '`new Stripe(key, { timeout: 10_000, maxNetworkRetries: 1 })`',
  adyen: '`connectionTimeoutMillis: 10_000` in the Adyen client config',
  paypal: '`new Client({ timeout: 10_000, ... })` of @paypal/paypal-server-sdk',
};

function boundFix(budgets: ReadonlyArray<{ provider: string; http?: true }>): string {
  const ways = [...new Set(budgets.flatMap((b) => BOUND[b.http ? 'http' : b.provider] ?? []))];
  const example = ways.length > 0 ? ways.join('; ') : BOUND.stripe;
  return `Bound the client (${example}) so attempts × time-out fits in the lease, or raise \`expectedDurationMs\` for the action to what the calls really take.`;
}

/**
 * The expected duration in the config gives a lease shorter than the provider calls in the code may take. The design
 * raises the lease with the same function (model/timing.ts `decideLease`), so this finding says exactly what the
 * model did and why; it goes away when the client is bounded or the config states a duration that covers the calls.
 */
export const leaseShorterThanWorstCase: Rule = {
  id: 'lease-shorter-than-worst-case',
  severity: 'warning',
  title: 'Lease shorter than the action\'s worst-case duration',
  description:
    'The lease computed from the action\'s expected duration is shorter than the time its provider calls may legitimately take ' +
    '(client time-out × attempts, capped by the platform\'s function limit). A slow but healthy call would outlive that lease, ' +
    'and a retry would reclaim the key and run the action a second time while the first is still going. The design raises ' +
    'the lease (or renews it while the call runs), at the cost of keeping a crashed worker\'s key that much longer.',
  fix: 'Bound the provider client (e.g. `new Stripe(key, { timeout: 10_000, maxNetworkRetries: 1 })`) so attempts × time-out fits in the lease, or raise `expectedDurationMs` for the action to what the calls really take.',
  docsAnchor: 'finding-lease-shorter-than-worst-case',
  checkProject(ctx) {
    const config = ctx.config;
    if (!config) return [];
    const out: ProjectReport[] = [];
    for (const action of config.actions) {
      const facts = factsFor(ctx, action);
      if (!facts || facts.calls.length === 0) continue;
      const worst = worstCaseOf(facts.budgets, facts.platformCap);
      const { ms, assumed } = expectedDuration(action);
      const lease = decideLease(action, ms, assumed, config.concurrency, worst);
      if (!lease.raisedFor) continue;
      const source = ctx.sources.find((s) => s.rel === facts.handler.file);
      const where = source ? { file: facts.handler.file, line: facts.handler.line } : configLocation(ctx.auxiliary.get('idempotency.config.json'), action.name);
      const providers = [...new Set(facts.calls.map((c) => providerName(c.provider)))].join(' and ');
      out.push({
        ...where,
        fix: boundFix(facts.budgets),
        evidence: source?.text.split('\n')[facts.handler.line - 1]?.trim() ?? `"name": ${JSON.stringify(action.name)}`,
        message:
          `${action.name} would get a lease of ${describeDuration(lease.raisedFor.leaseFromDurationMs)} from its ${assumed ? 'assumed' : 'expected'} duration, but its ${providers} call${facts.calls.length > 1 ? 's' : ''} may run ` +
          `${lease.raisedFor.ms === null ? 'without limit' : describeDuration(lease.raisedFor.ms)}: ${lease.raisedFor.text}. ` +
          `The design ${lease.heartbeatMs ? `renews a lease of ${describeDuration(lease.lockTimeoutMs)} every ${describeDuration(lease.heartbeatMs)} while the call runs` : `uses a lease of ${describeDuration(lease.lockTimeoutMs)} instead`}.`,
      });
    }
    return out;
  },
};
