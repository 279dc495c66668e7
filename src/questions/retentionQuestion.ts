import { parseDurationFlag, validateDuration } from './parseFlagValue.js';
import type { Question, QuestionContext } from './types.js';
import { parseDuration } from '../config/duration.js';

/** 72 h outlasts Stripe's 24 h key window and its three days of webhook resends; 24 h is enough otherwise. */
function suggestedRetention(ctx: QuestionContext): string {
  const payments = ctx.answers.payments ?? [];
  const webhooks = (ctx.answers.actions ?? []).some((action) => action.trigger === 'webhook');
  return payments.length > 0 || webhooks ? '72h' : '24h';
}

export const retentionQuestion: Question<'retention'> = {
  key: 'retention',
  number: 6,
  title: 'Key retention',
  help: 'How long a completed request is remembered: retries after this are treated as new requests.',
  examples: ['24h', '72h', '7d'],
  flags: ['--retention'],
  flagExample: '--retention 72h',
  inspectable: false,
  needsConsent: true,
  fromFlags: (flags) => (flags.retention === undefined ? undefined : parseDurationFlag('--retention', flags.retention)),
  fromConfig: (config) => (typeof config['retention'] === 'string' && parseDuration(config['retention']) !== undefined ? config['retention'] : undefined),
  infer: () => undefined,
  whenNeeded: () => true,
  fallback: (ctx) => {
    const value = suggestedRetention(ctx);
    return { value, assumption: `Key retention was not given: ${value} is assumed (the design raises it if a provider or retry source needs longer).` };
  },
  ask: async (ctx, prefill) =>
    (
      await ctx.prompter.input({
        id: 'retention',
        message: 'How long should a completed request be remembered?',
        help: `Q6 · ${retentionQuestion.help} Typically hours to days, e.g. ${retentionQuestion.examples.join(', ')}.${(ctx.answers.payments ?? []).includes('stripe') ? ' Stripe forgets keys after 24h and resends webhooks for 3 days.' : ''}`,
        default: prefill ?? suggestedRetention(ctx),
        validate: validateDuration,
      })
    ).trim(),
};
