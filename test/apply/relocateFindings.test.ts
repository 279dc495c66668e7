import { describe, expect, it } from 'vitest';
import { relocateFindings } from '../../src/apply/relocateFindings.js';
import type { ManualStep } from '../../src/apply/types.js';
import type { FindingDesign } from '../../src/model/findings.js';

const file = 'src/pay.ts';
const before = `import Stripe from 'stripe';
const stripe = new Stripe('sk');
export async function pay(now: number) {
  await stripe.checkout.sessions.create({ mode: 'payment', expires_at: Math.floor(Date.now() / 1000) + now }, { idempotencyKey: String(Date.now()) });
}
`;
// As a transform leaves it: two lines added above, the key derived, the expiry untouched.
const after = `import Stripe from 'stripe';
import { stripeRequestOptions } from './idempotency/providers.js';
const stripe = new Stripe('sk');
export async function pay(now: number, context: never) {
  const unused = 1;
  await stripe.checkout.sessions.create({ mode: 'payment', expires_at: Math.floor(Date.now() / 1000) + now }, stripeRequestOptions(context));
}
`;
const finding = (ruleId: string, line: number, message: string): FindingDesign => ({ ruleId, title: ruleId, severity: 'error', location: `${file}:${line}`, file, line, message, fix: 'fix', status: 'open', actions: ['pay'] });
const KEY = finding('per-attempt-provider-key', 4, 'stripe checkout.sessions.create gets a key (idempotencyKey) from `Date.now()`, which is new on every attempt.');
const EXPIRY = finding('provider-params-change-between-retries', 4, 'stripe checkout.sessions.create parameter `expires_at` comes from `Date.now()`, so every retry sends a different value.');
const OLD = finding('per-attempt-provider-key', 9, 'recorded by an older inspection');
const step = (f: FindingDesign): ManualStep => ({ action: 'pay', file, line: f.line, reason: `${f.ruleId}: ${f.fix}` });
const deps = new Map([['stripe', '*']]);

describe('relocateFindings', () => {
  const steps = [KEY, EXPIRY, OLD].map((f) => [step(f), f] as const);
  const manual = [{ action: 'pay', reason: 'not a finding' }, ...steps.map(([s]) => s)];
  const findings = new Map(steps);

  it('drops what the edit fixed, moves what remains to its edited line, keeps what the rule never saw', () => {
    const out = relocateFindings(manual, findings, [{ path: file, before, after }], deps, () => false);
    expect(out).toEqual([manual[0], { ...step(EXPIRY), line: 6 }, step(OLD)]);
  });

  it('on a file the last apply wrote, init\'s lines are stale: findings are matched by message, and one gone was fixed', () => {
    const out = relocateFindings(manual, findings, [{ path: file, before: after, after }], deps, () => true);
    expect(out).toEqual([manual[0], { ...step(EXPIRY), line: 6 }]);
  });

  it('two calls alike, the first keyed by the edit: its finding is dropped, not handed to the second (adyen-node-online-payments@1ad09b5)', () => {
    const twice = (first: string) => `import Stripe from 'stripe';
const stripe = new Stripe('sk');
export async function details(body: object) {
  ${first}
}

export async function redirect(body: object) {
  await stripe.refunds.create(body);
}
`;
    const inspected = twice('await stripe.refunds.create(body);');
    const edited = `import { stripeRequestOptions } from './idempotency/providers.js';\n${twice("await stripe.refunds.create(body, stripeRequestOptions(context, 'refund'));")}`;
    const message = 'stripe refunds.create is called without an idempotencyKey: a retry moves money a second time through Stripe.';
    const first = { ...finding('provider-call-without-key', 4, message), actions: ['details'] };
    const second = { ...finding('provider-call-without-key', 8, message), actions: ['redirect'] };
    const pairs = [first, second].map((f) => [step(f), f] as const);
    const out = relocateFindings(pairs.map(([s]) => s), new Map(pairs), [{ path: file, before: inspected, after: edited }], deps, () => false);
    expect(out).toEqual([{ ...step(second), line: 9 }]);
  });

  it('leaves steps in files apply did not read alone', () => {
    expect(relocateFindings(manual, findings, [], deps, () => false)).toEqual(manual);
  });
});
