import { providerKeyBase } from './keys.js';
import { setCause, stepKeeper, type ClaimRef } from './types.js';

export interface StepContext {
  readonly index: number;
  readonly name: string;
  /** `{key}_{index}`: stable across retries; the step's entry in the step store. */
  readonly subKey: string;
  readonly key: string;
  readonly scope: string;
  readonly action: string;
  /**
   * providerKeyBase(claim, index): the same for every attempt and every takeover of this step, different per
   * principal. The provider helpers take the step context directly: `stripeRequestOptions(step)`.
   */
  readonly providerKey: string;
}

export interface SagaStep<R = unknown> {
  readonly name: string;
  run(context: StepContext): Promise<R>;
  /** Undoes a completed step after a later step failed permanently. Must itself be safe to repeat. */
  compensate?(context: StepContext & { readonly result: R }): Promise<void>;
}

export interface StepRecord {
  readonly index: number;
  status: 'DONE' | 'COMPENSATED';
  readonly result: unknown;
}

/**
 * Where the store keeps one record's steps. Every write is fenced by the claim's token: it throws LeaseLostError
 * when another worker owns the record now, so a worker that lost its claim cannot record steps.
 */
export interface StepStore {
  loadSteps(claim: ClaimRef): Promise<Map<number, StepRecord>>;
  recordStep(
    claim: ClaimRef,
    step: { readonly index: number; readonly name: string; readonly subKey: string },
    status: 'DONE' | 'COMPENSATED',
    result: unknown,
  ): Promise<void>;
}

/** Throw (or wrap in) this from a step when retrying cannot help: the saga compensates instead of retrying. */
export class PermanentStepError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message);
    setCause(this, options);
    this.name = 'PermanentStepError';
  }
}

/** The saga failed permanently and every completed step was compensated; map it to a definitive 4xx. */
export class SagaCompensatedError extends Error {
  constructor(
    readonly failedStep: string,
    options?: { cause?: unknown },
  ) {
    super(`step ${failedStep} failed permanently; earlier steps were compensated`);
    setCause(this, options);
    this.name = 'SagaCompensatedError';
  }
}

/**
 * Tracks the steps of one claimed action. A retry (after a crash or a transient error) skips the steps already
 * DONE and resumes at the first incomplete one; a permanent failure compensates DONE steps in reverse.
 */
export class SagaTracker {
  constructor(private readonly options: { readonly steps: StepStore }) {}

  /** `claim` is the handler's context (`idempotencyOf(request)`) or any ClaimRef from the core. */
  async run(
    claim: ClaimRef,
    steps: readonly SagaStep[],
    isPermanent: (error: unknown) => boolean = (error) => error instanceof PermanentStepError,
  ): Promise<unknown[]> {
    const store = this.options.steps;
    const keep = stepKeeper(claim);
    const recorded = await keep(() => store.loadSteps(claim), new Map<number, StepRecord>());
    const contexts = steps.map((step, i): StepContext => ({
      index: i + 1,
      name: step.name,
      key: claim.key,
      scope: claim.scope,
      action: claim.action,
      subKey: `${claim.key}_${i + 1}`,
      providerKey: providerKeyBase(claim, i + 1),
    }));
    // Array.from and an index loop, not spread or for-of over an iterator: projects compiled for ES5 (old
    // create-next-app tsconfigs) reject those without downlevelIteration.
    if (Array.from(recorded.values()).some((row) => row.status === 'COMPENSATED')) {
      // A previous attempt was compensating when it stopped: finish the compensation, never run forward again.
      await this.compensate(claim, steps, contexts, recorded);
      throw new SagaCompensatedError('(previous attempt)');
    }
    const results: unknown[] = [];
    for (let i = 0; i < steps.length; i++) {
      const step = steps[i]!;
      const context = contexts[i]!;
      const done = recorded.get(context.index);
      if (done?.status === 'DONE') {
        results.push(done.result);
        continue;
      }
      let result: unknown;
      try {
        result = await step.run(context);
      } catch (error) {
        if (!isPermanent(error)) throw error;
        await this.compensate(claim, steps, contexts, recorded);
        throw new SagaCompensatedError(step.name, { cause: error });
      }
      await keep(() => store.recordStep(claim, context, 'DONE', result ?? null), undefined);
      recorded.set(context.index, { index: context.index, status: 'DONE', result: result ?? null });
      results.push(result);
    }
    return results;
  }

  private async compensate(
    claim: ClaimRef,
    steps: readonly SagaStep[],
    contexts: readonly StepContext[],
    recorded: Map<number, StepRecord>,
  ): Promise<void> {
    for (let i = steps.length - 1; i >= 0; i--) {
      const context = contexts[i]!;
      const row = recorded.get(context.index);
      if (row?.status !== 'DONE') continue;
      await steps[i]!.compensate?.({ ...context, result: row.result });
      await stepKeeper(claim)(
        () => this.options.steps.recordStep(claim, context, 'COMPENSATED', row.result),
        undefined,
      );
      row.status = 'COMPENSATED';
    }
  }
}
