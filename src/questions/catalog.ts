import { actionsQuestion } from './actionsQuestion.js';
import { concurrencyQuestion } from './concurrencyQuestion.js';
import { detectionLatencyQuestion } from './detectionLatencyQuestion.js';
import { formatQuestion, outputQuestion } from './formatQuestion.js';
import { paymentsQuestion } from './paymentsQuestion.js';
import { retentionQuestion } from './retentionQuestion.js';
import { retrySourcesQuestion } from './retrySourcesQuestion.js';
import { scaffoldQuestion } from './scaffoldQuestion.js';
import { stackQuestion } from './stackQuestion.js';
import type { AnyQuestion } from './types.js';

/**
 * The interview, in order: the spec asks the output format first, then the seven context questions; later questions
 * read earlier answers (retry sources from the actions' triggers, scaffolding from the stack).
 */
export const CATALOG: readonly AnyQuestion[] = [
  formatQuestion,
  outputQuestion,
  actionsQuestion,
  stackQuestion,
  retrySourcesQuestion,
  paymentsQuestion,
  concurrencyQuestion,
  retentionQuestion,
  detectionLatencyQuestion,
  scaffoldQuestion,
];
