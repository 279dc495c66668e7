import { CONCURRENCY } from '../config/schema.js';
import { embeddedConcurrency } from './embeddedStore.js';
import { parseChoice } from './parseFlagValue.js';
import type { Answers, Question } from './types.js';

type Concurrency = Answers['concurrency'];
const DEFAULT: Concurrency = 'multi-instance';

export const concurrencyQuestion: Question<'concurrency'> = {
  key: 'concurrency',
  number: 5,
  title: 'Expected concurrency',
  help: 'Decides how duplicates racing on different instances or regions are serialised, and what the lock costs.',
  examples: ['single-server', 'multi-instance', 'global'],
  flags: ['--concurrency'],
  flagExample: '--concurrency single-server|multi-instance|global',
  inspectable: false,
  needsConsent: true,
  fromFlags: (flags) => (flags.concurrency === undefined ? undefined : parseChoice('--concurrency', flags.concurrency, CONCURRENCY)),
  fromConfig: (config) => CONCURRENCY.find((c) => c === config['concurrency']),
  infer: () => undefined,
  whenNeeded: () => true,
  fallback: (ctx) =>
    embeddedConcurrency(ctx)
      ? {
          value: 'single-server',
          assumption:
            'Concurrency was not given: one instance is assumed, the one the embedded SQLite store of a project without a database can serve (pass --concurrency multi-instance for several; the design then uses the PostgreSQL reference).',
        }
      : {
          value: DEFAULT,
          assumption: 'Concurrency was not given: several instances behind a load balancer are assumed, the common production setup.',
        },
  ask: (ctx, prefill) =>
    ctx.prompter.select<Concurrency>({
      id: 'concurrency',
      message: 'How is the service deployed?',
      help: `Q5 · ${concurrencyQuestion.help}`,
      choices: [
        { value: 'single-server', name: 'Single server (one process or one instance)' },
        { value: 'multi-instance', name: 'Multiple instances behind a load balancer' },
        { value: 'global', name: 'Globally distributed (several regions)' },
      ],
      default: prefill ?? (embeddedConcurrency(ctx) ? 'single-server' : DEFAULT),
    }),
};
