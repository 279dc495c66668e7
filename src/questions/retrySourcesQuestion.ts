import { RETRY_SOURCES, type RetrySource, type Trigger } from '../config/schema.js';
import { sentByAnotherSystem } from '../model/labels.js';
import { parseList } from './parseFlagValue.js';
import type { ActionAnswer, Question } from './types.js';

/** What usually re-sends each kind of trigger: the defaults init proposes, narrower than every source that can reach it (`RETRY_SOURCES_BY_TRIGGER`). */
const BY_TRIGGER: Record<Trigger, RetrySource[]> = {
  http: ['client-retry', 'double-click', 'load-balancer-replay'],
  webhook: ['webhook-resend'],
  consumer: ['queue-redelivery'],
  cron: ['cron-overlap'],
};

const LABELS: Record<RetrySource, string> = {
  'client-retry': 'Client retries after a timeout',
  'double-click': 'Double-click / form re-submit',
  'load-balancer-replay': 'Load-balancer or proxy replay',
  'queue-redelivery': 'Queue redelivery (at-least-once)',
  'webhook-resend': 'Webhook resends by the provider',
  'cron-overlap': 'Overlapping scheduled runs',
  'network-partition': 'Network partition (same request on two instances)',
};

export function inferRetrySources(actions: readonly ActionAnswer[]): RetrySource[] {
  // A route another system reports events to (keyed by its body, one key space) is resent by its sender.
  const sent = (action: ActionAnswer) => (sentByAnotherSystem(action) ? BY_TRIGGER.webhook : []);
  const found = new Set(actions.flatMap((action) => [...BY_TRIGGER[action.trigger], ...sent(action)]));
  return RETRY_SOURCES.filter((source) => found.has(source));
}

export const retrySourcesQuestion: Question<'retrySources'> = {
  key: 'retrySources',
  number: 3,
  title: 'Retry sources',
  help: 'Where duplicates come from; each one adds a test scenario and can raise the retention floor.',
  examples: ['client-retry,double-click', 'queue-redelivery', 'webhook-resend,cron-overlap'],
  flags: ['--retry-sources'],
  flagExample: '--retry-sources client-retry,double-click',
  inspectable: true,
  needsConsent: false,
  fromFlags: (flags) => (flags.retrySources === undefined ? undefined : parseList('--retry-sources', flags.retrySources, RETRY_SOURCES)),
  fromConfig: (config) => {
    const list = config['retrySources'];
    return Array.isArray(list) && list.every((item) => RETRY_SOURCES.includes(item as never)) ? (list as RetrySource[]) : undefined;
  },
  infer: (ctx) => inferRetrySources(ctx.answers.actions ?? []),
  inferredAssumption: (value) => `Retry sources were inferred from the triggers of the protected actions: ${value.join(', ')}.`,
  whenNeeded: (_inspection, given) => !given.retrySources && (given.actions ?? []).length === 0,
  fallback: (ctx) => ({ value: inferRetrySources(ctx.answers.actions ?? []) }),
  ask: (ctx, prefill) =>
    ctx.prompter.checkbox({
      id: 'retrySources',
      message: 'Where can duplicates come from?',
      help: `Q3 · ${retrySourcesQuestion.help} Pre-checked from the triggers of the chosen actions.`,
      choices: RETRY_SOURCES.map((source) => ({ value: source, name: LABELS[source], checked: (prefill ?? []).includes(source) })),
    }),
};
