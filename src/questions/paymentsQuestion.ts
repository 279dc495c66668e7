import { PROVIDERS, type Provider } from '../config/schema.js';
import { parseList } from './parseFlagValue.js';
import type { Question, QuestionContext } from './types.js';

const LABELS: Record<Provider, string> = { stripe: 'Stripe', adyen: 'Adyen', paypal: 'PayPal', 'bank-transfer': 'Bank transfer' };

/** Providers named on the chosen actions, plus any payment SDK in the dependencies. */
function inferPayments(ctx: QuestionContext): Provider[] {
  const named = new Set<string>(ctx.inspection.stack.payments);
  for (const action of ctx.answers.actions ?? []) {
    if (action.provider) named.add(action.provider);
    for (const step of action.steps ?? []) if (step.provider) named.add(step.provider);
  }
  return PROVIDERS.filter((p) => named.has(p));
}

export const paymentsQuestion: Question<'payments'> = {
  key: 'payments',
  number: 4,
  title: 'Payment providers',
  help: 'Each provider has its own idempotency-key header, length limit and retention window that the design must respect.',
  examples: ['stripe', 'adyen,paypal', 'none'],
  flags: ['--payments'],
  flagExample: '--payments stripe (or none)',
  inspectable: true,
  needsConsent: false,
  fromFlags: (flags) => (flags.payments === undefined ? undefined : parseList('--payments', flags.payments, PROVIDERS)),
  fromConfig: (config) => {
    const list = config['payments'];
    return Array.isArray(list) && list.every((item) => PROVIDERS.includes(item as never)) ? (list as Provider[]) : undefined;
  },
  infer: inferPayments,
  inferredAssumption: (value) =>
    value.length === 0 ? 'No payment provider SDK or provider call was found, so no payment provider is involved.' : undefined,
  whenNeeded: () => false,
  fallback: (ctx) => ({ value: inferPayments(ctx) }),
  ask: (ctx, prefill) =>
    ctx.prompter.checkbox({
      id: 'payments',
      message: 'Which payment providers are involved? (none checked = no payments)',
      help: `Q4 · ${paymentsQuestion.help}${(prefill ?? []).length > 0 ? ' Pre-checked from the SDKs the code uses.' : ''}`,
      choices: PROVIDERS.map((provider) => ({ value: provider, name: LABELS[provider], checked: (prefill ?? []).includes(provider) })),
    }),
};
