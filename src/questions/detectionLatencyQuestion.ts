import { parseDuration } from '../config/duration.js';
import { parseDurationFlag, validateDuration } from './parseFlagValue.js';
import type { Question } from './types.js';

const DEFAULT = '50ms';

export const detectionLatencyQuestion: Question<'detectionLatency'> = {
  key: 'detectionLatency',
  number: 7,
  title: 'Detection latency',
  help: 'How fast a duplicate must be rejected; bounds the store lookup and decides between waiting and an immediate 409.',
  examples: ['10ms', '50ms', '200ms'],
  flags: ['--detection-latency'],
  flagExample: '--detection-latency 50ms',
  inspectable: false,
  needsConsent: true,
  fromFlags: (flags) => (flags.detectionLatency === undefined ? undefined : parseDurationFlag('--detection-latency', flags.detectionLatency)),
  fromConfig: (config) =>
    typeof config['detectionLatency'] === 'string' && parseDuration(config['detectionLatency']) !== undefined ? config['detectionLatency'] : undefined,
  infer: () => undefined,
  whenNeeded: () => true,
  fallback: () => ({ value: DEFAULT, assumption: `Detection latency was not given: ${DEFAULT} is assumed, one indexed lookup in a nearby database.` }),
  ask: async (ctx, prefill) =>
    (
      await ctx.prompter.input({
        id: 'detectionLatency',
        message: 'How quickly must a duplicate be rejected?',
        help: `Q7 · ${detectionLatencyQuestion.help} Typically milliseconds, e.g. ${detectionLatencyQuestion.examples.join(', ')}.`,
        default: prefill ?? DEFAULT,
        validate: validateDuration,
      })
    ).trim(),
};
