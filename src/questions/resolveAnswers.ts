import { UserError } from '../errors.js';
import type { Inspection } from '../inspect/types.js';
import { CATALOG } from './catalog.js';
import { settleEmbeddedStore } from './embeddedStore.js';
import { settleActions } from './settleActions.js';
import type { Prompter } from './prompter.js';
import type { AnswerKey, Answers, AnyQuestion, AskContext, Question, QuestionContext, QuestionFlags } from './types.js';

export type AnswerSource = 'flag' | 'config' | 'inspection' | 'prompt' | 'default';

export interface ResolveOptions {
  flags: QuestionFlags;
  /** The existing config as parsed JSON ({} when there is none); each question takes the valid part it owns. */
  config: Record<string, unknown>;
  inspection: Inspection;
  cwd: string;
  /** Prompts are shown only when interactive and not --yes. */
  interactive: boolean;
  yes: boolean;
  prompter?: Prompter;
  /** Why the run is not interactive, for the missing-answers message. */
  reason?: string;
}

export interface Resolution {
  answers: Answers;
  assumptions: string[];
  sources: Record<AnswerKey, AnswerSource>;
  /** Which store a project without a database got, and why (also among the assumptions). */
  storeNote?: string;
}

/** Every question in catalog order: flag → config → prompt (interactive only) → default. */
export async function resolveAnswers(options: ResolveOptions): Promise<Resolution> {
  const prompting = options.interactive && !options.yes;
  if (prompting && !options.prompter) throw new Error('resolveAnswers: interactive without a prompter');
  const answers: Partial<Answers> = {};
  const assumptions: string[] = [];
  const sources = {} as Record<AnswerKey, AnswerSource>;
  const missing: AnyQuestion[] = [];
  const ctx: QuestionContext = { inspection: options.inspection, answers, cwd: options.cwd, flags: options.flags };

  for (const question of CATALOG) {
    const outcome = await resolveOne(question as Question<AnswerKey>, options, ctx, assumptions, prompting);
    if (outcome === undefined) {
      missing.push(question);
      continue;
    }
    (answers as Record<AnswerKey, unknown>)[question.key] = outcome.value;
    sources[question.key] = outcome.source;
  }
  if (missing.length > 0) throw missingAnswersError(missing, options.reason);
  const store = settleEmbeddedStore(answers as Answers, sources.stack, ctx);
  if (store.note) assumptions.push(store.note);
  const actions = settleActions((answers as Answers).actions, options.inspection);
  if (actions.assumption) assumptions.push(actions.assumption);
  if (actions.routeAssumptions) assumptions.push(...actions.routeAssumptions);
  if (actions.formAssumption) assumptions.push(actions.formAssumption);
  const settled = { ...(answers as Answers), stack: store.stack, actions: actions.actions };
  return { answers: settled, assumptions: [...new Set(assumptions)], sources, ...(store.note ? { storeNote: store.note } : {}) };
}

async function resolveOne<K extends AnswerKey>(
  question: Question<K>,
  options: ResolveOptions,
  ctx: QuestionContext,
  assumptions: string[],
  prompting: boolean,
): Promise<{ value: Answers[K]; source: AnswerSource } | undefined> {
  const pin = (value: Answers[K]) => (question.pin ? question.pin(ctx, value) : value);
  const fromFlag = await question.fromFlags(options.flags, ctx);
  if (fromFlag !== undefined) return { value: pin(fromFlag), source: 'flag' };
  const fromConfig = question.fromConfig(options.config);

  if (prompting && options.prompter) {
    const inferred = question.infer(ctx);
    const given: Partial<Answers> = { ...ctx.answers, ...(fromConfig === undefined ? {} : { [question.key]: fromConfig }) };
    const mode = question.whenNeeded(options.inspection, given) ? 'ask' : 'confirm';
    const prefill = fromConfig ?? inferred;
    const askCtx: AskContext = { ...ctx, prompter: options.prompter, assumptions };
    return { value: pin(await question.ask(askCtx, prefill === undefined ? undefined : pin(prefill), mode)), source: 'prompt' };
  }

  if (fromConfig !== undefined) return { value: pin(fromConfig), source: 'config' };
  const inferred = question.infer(ctx);
  if (inferred !== undefined && (question.isComplete?.(inferred) ?? true)) {
    const note = question.inferredAssumption?.(inferred);
    if (note) assumptions.push(note);
    const settled = question.settle ? question.settle(ctx, inferred, assumptions) : inferred;
    return { value: pin(settled), source: 'inspection' };
  }
  if (question.needsConsent && !options.yes) return undefined;
  const fallback = question.fallback(ctx);
  if (fallback.assumption) assumptions.push(fallback.assumption);
  return { value: pin(fallback.value), source: 'default' };
}

/**
 * The cheap check before inspecting: answers only a person can give (concurrency, retention, latency) and, when
 * there is no code to read, the ones inspection would have answered. Lets CI fail in milliseconds, not after ts-morph.
 */
export async function findMissingBeforeInspection(options: Omit<ResolveOptions, 'inspection'> & { inspection: Inspection; mayInspect: boolean }): Promise<void> {
  if (options.yes) return;
  const ctx: QuestionContext = { inspection: options.inspection, answers: {}, cwd: options.cwd, flags: options.flags };
  const missing: AnyQuestion[] = [];
  for (const question of CATALOG) {
    const q = question as Question<AnswerKey>;
    // Parsing every flag here also reports a bad flag value before any slow work.
    if ((await q.fromFlags(options.flags, ctx)) !== undefined) continue;
    if (!q.needsConsent || q.fromConfig(options.config) !== undefined) continue;
    if (q.inspectable && options.mayInspect) continue;
    missing.push(question);
  }
  if (missing.length > 0) throw missingAnswersError(missing, options.reason);
}

export function missingAnswersError(missing: readonly AnyQuestion[], reason = 'not running in a terminal'): UserError {
  const lines = missing.map((q) => `  ${q.number ? `Q${q.number} ` : ''}${q.title.toLowerCase()}: ${q.flagExample}`);
  return new UserError(
    `init cannot ask questions here (${reason}) and these answers are missing:\n${lines.join('\n')}`,
    'Pass those flags, or --yes to accept the defaults (each is listed as an assumption in the document), or run init in a terminal to be asked.',
  );
}
