import type { z } from 'zod';
import type { actionSchema, CONCURRENCY, FORMATS, stackSchema } from '../config/schema.js';
import type { Provider, RetrySource } from '../config/schema.js';
import type { Inspection } from '../inspect/types.js';
import type { Prompter } from './prompter.js';

export type ActionAnswer = z.input<typeof actionSchema>;
export type StackAnswer = z.output<typeof stackSchema>;

/** What init resolves; each key maps onto one config key (CONTRACT §2). */
export interface Answers {
  format: (typeof FORMATS)[number];
  output: string;
  actions: ActionAnswer[];
  stack: StackAnswer;
  retrySources: RetrySource[];
  payments: Provider[];
  concurrency: (typeof CONCURRENCY)[number];
  retention: string;
  detectionLatency: string;
  scaffold: false | { dir: string };
}

export type AnswerKey = keyof Answers;

/** Raw per-question flags as commander hands them over; each question parses its own. */
export interface QuestionFlags {
  format?: string;
  out?: string;
  actions?: string;
  language?: string;
  framework?: string;
  database?: string;
  broker?: string;
  testFramework?: string;
  retrySources?: string;
  payments?: string;
  concurrency?: string;
  retention?: string;
  detectionLatency?: string;
  scaffoldDir?: string;
  /** commander's --no-scaffold sets this to false. */
  scaffold?: boolean;
}

/** The slice of wizard state a question reads (habit 5: a step takes only what it uses). */
export interface QuestionContext {
  inspection: Inspection;
  /** Answers resolved so far, in catalog order. */
  answers: Partial<Answers>;
  /** Project root, for reading an --actions file. */
  cwd: string;
  /** Flags pin parts of a multi-field answer (e.g. --framework alone) whatever else fills the rest. */
  flags: QuestionFlags;
}

export interface AskContext extends QuestionContext {
  prompter: Prompter;
  /** Appended to the config's assumptions[]: what the wizard decided without an answer. */
  assumptions: string[];
}

/** A value together with what it assumed, when the value is a fallback rather than an answer. */
export interface Defaulted<T> {
  value: T;
  assumption?: string;
}

export interface Question<K extends AnswerKey> {
  key: K;
  /** Context question number from the spec (1–7); the output-format questions come first and have none. */
  number?: number;
  title: string;
  help: string;
  examples: readonly string[];
  /** Flags that answer it, for "pass --x" messages. */
  flags: readonly string[];
  /** A complete flag usage, shown when a non-interactive run lacks the answer. */
  flagExample: string;
  /** False when only a person can answer it (concurrency, retention, latency): no need to inspect before failing. */
  inspectable: boolean;
  /** Non-interactive runs may fall back to the default only with --yes (the critical and judgement questions). */
  needsConsent: boolean;
  fromFlags(flags: QuestionFlags, ctx: QuestionContext): Promise<Answers[K] | undefined> | Answers[K] | undefined;
  /** The value in an existing config, if it is valid on its own; invalid pieces are dropped so init can repair them. */
  fromConfig(config: Record<string, unknown>): Answers[K] | undefined;
  /** What the code (and earlier answers) suggest. */
  infer(ctx: QuestionContext): Answers[K] | undefined;
  /** True when neither earlier answers nor the inspection answer it, so it must be asked in full (not only confirmed). */
  whenNeeded(inspection: Inspection, given: Partial<Answers>): boolean;
  /** Re-applies flag-given parts onto a value from config, inference or a prompt (flags always win). */
  pin?(ctx: QuestionContext, value: Answers[K]): Answers[K];
  /** False for an inferred value that still has holes (e.g. a stack without a database): it only prefills. */
  isComplete?(value: Answers[K]): boolean;
  /** Assumption to record when a non-interactive run takes the inferred value unconfirmed. */
  inferredAssumption?(value: Answers[K]): string | undefined;
  /** Non-interactive: fill what an accepted value still lacks (fingerprint fields, saga steps) with stated assumptions. */
  settle?(ctx: QuestionContext, value: Answers[K], assumptions: string[]): Answers[K];
  /** The documented fallback, with the assumption it implies. */
  fallback(ctx: QuestionContext): Defaulted<Answers[K]>;
  /** Interactive: ask, starting from `prefill` (config value, inference or default). */
  ask(ctx: AskContext, prefill: Answers[K] | undefined, mode: 'ask' | 'confirm'): Promise<Answers[K]>;
}

// Commander's per-question flags and the catalog share these names; a typo shows up as a type error here.
export type AnyQuestion = { [K in AnswerKey]: Question<K> }[AnswerKey];
