import { describeDuration } from '../../config/duration.js';
import { decideLease, expectedDuration } from '../../model/timing.js';
import type { ProjectContext, ProjectReport, Rule } from '../types.js';
import { actionSource, configLocation } from '../configSources.js';
import { stripeCalls } from '../stripeCalls.js';

/** stripe-node: 80 s per attempt unless `timeout` is set. */
const STRIPE_TIMEOUT_MS = 80_000;

/** A lease that expires while the provider call is still in flight hands the key to a retry, which charges again. */
export const leaseShorterThanWorstCase: Rule = {
  id: 'lease-shorter-than-worst-case',
  severity: 'error',
  title: 'Lease shorter than the action\'s worst-case duration',
  description:
    'The lock timeout computed for the action is shorter than the time its provider call may legitimately take ' +
    '(client time-out × attempts, capped by the platform\'s function limit). A slow but healthy call outlives the ' +
    'lease, a retry reclaims the key and runs the action a second time while the first is still going.',
  fix: 'Bound the provider client (e.g. `new Stripe(key, { timeout: 10_000, maxNetworkRetries: 1 })`) so attempts × time-out fits in the lease, or raise `expectedDurationMs` for the action so the design switches to a renewed (heartbeat) lease.',
  docsAnchor: 'finding-lease-shorter-than-worst-case',
  checkProject(ctx) {
    const config = ctx.config;
    if (!config) return [];
    const client = stripeClient(ctx);
    const out: ProjectReport[] = [];
    for (const action of config.actions) {
      const at = actionSource(ctx, action);
      // The handler's own code decides when we can read it; the config's provider only when we cannot.
      const callsStripe = at.source ? stripeCalls(at.source.sf, at.source.text).length > 0 : action.provider === 'stripe';
      if (!callsStripe) continue;
      const { ms, assumed } = expectedDuration(action);
      const lease = decideLease(action, ms, assumed, config.concurrency);
      if (lease.heartbeatMs) continue;
      const attempts = client.retries + 1;
      let worst = client.timeoutMs * attempts;
      const cap = platformCap(ctx, at.source?.text);
      if (cap && cap.ms < worst) worst = cap.ms;
      if (lease.lockTimeoutMs >= worst) continue;
      const where = at.source ? { file: at.source.rel, line: at.line } : configLocation(ctx.auxiliary.get('idempotency.config.json'), action.name);
      out.push({
        ...where,
        evidence: at.source?.text.split('\n')[at.line - 1]?.trim() ?? `"name": ${JSON.stringify(action.name)}`,
        message:
          `${action.name} gets a ${describeDuration(lease.lockTimeoutMs)} lease, but its Stripe call may run ${describeDuration(worst)}: ` +
          `${describeDuration(client.timeoutMs)} time-out × ${attempts} attempt${attempts > 1 ? 's' : ''} (${client.evidence})` +
          `${cap && cap.ms <= client.timeoutMs * attempts ? `, capped by ${cap.evidence}` : ''}.`,
      });
    }
    return out;
  },
};

interface StripeClient {
  timeoutMs: number;
  retries: number;
  evidence: string;
}

/** The time-out and retries of the app's `new Stripe(key, { … })`, or the SDK defaults for the installed version. */
function stripeClient(ctx: ProjectContext): StripeClient {
  for (const source of ctx.sources) {
    const m = /new\s+Stripe\s*\(([\s\S]{0,600}?)\)\s*[;\n]/.exec(source.text);
    if (!m) continue;
    const timeout = /\btimeout\s*:\s*([\d_]+)/.exec(m[1] ?? '')?.[1];
    const retries = /maxNetworkRetries\s*:\s*(\d+)/.exec(m[1] ?? '')?.[1];
    if (timeout || retries) {
      const defaults = sdkDefaults(ctx);
      return {
        timeoutMs: timeout ? Number(timeout.replace(/_/g, '')) : STRIPE_TIMEOUT_MS,
        retries: retries ? Number(retries) : defaults.retries,
        evidence: `new Stripe(…) in ${source.rel}${timeout ? '' : ', default time-out'}${retries ? '' : `, ${defaults.evidence}`}`,
      };
    }
  }
  const defaults = sdkDefaults(ctx);
  return { timeoutMs: STRIPE_TIMEOUT_MS, retries: defaults.retries, evidence: `stripe-node default time-out, ${defaults.evidence}` };
}

/**
 * stripe-node retries network failures on its own: none before v13, one from v13; newer majors ship more. An unknown
 * version is taken at 2 so the bound errs on the long side.
 */
function sdkDefaults(ctx: ProjectContext): { retries: number; evidence: string } {
  const range = ctx.dependencies.get('stripe');
  const major = range ? Number(/(\d+)/.exec(range)?.[1]) : NaN;
  if (Number.isNaN(major)) return { retries: 2, evidence: 'stripe version unknown, 2 network retries assumed' };
  const retries = major < 13 ? 0 : major < 20 ? 1 : 2;
  return { retries, evidence: `stripe ${range}: ${retries} automatic network retr${retries === 1 ? 'y' : 'ies'}` };
}

/** Serverless limits: Next.js `export const maxDuration = 60` in the handler, or vercel.json `functions.*.maxDuration`. */
function platformCap(ctx: ProjectContext, handlerText: string | undefined): { ms: number; evidence: string } | undefined {
  const own = /export\s+const\s+maxDuration\s*=\s*(\d+)/.exec(handlerText ?? '')?.[1];
  if (own) return { ms: Number(own) * 1000, evidence: `maxDuration = ${own} in the route` };
  const vercel = ctx.auxiliary.get('vercel.json');
  const fromVercel = vercel ? /"maxDuration"\s*:\s*(\d+)/.exec(vercel)?.[1] : undefined;
  return fromVercel ? { ms: Number(fromVercel) * 1000, evidence: `maxDuration ${fromVercel} s in vercel.json` } : undefined;
}
