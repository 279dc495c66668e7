import type { Pool, QueryResultRow } from 'pg';
import { providerKeyBase } from './keys.js';
import { quoteIdent } from './pgStore.js';
import { LeaseLostError, setCause, stepKeeper, StoreUnavailableError, type ClaimRef } from './types.js';

export interface StepContext {
  readonly index: number;
  readonly name: string;
  /** `{key}_{index}`: stable across retries; the step's row in the step table. */
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

interface StepRow {
  step_index: number;
  status: 'DONE' | 'COMPENSATED';
  result: unknown;
}

/**
 * Tracks the steps of one claimed action in the step table. A retry (after a crash or a transient error) skips the
 * steps already DONE and resumes at the first incomplete one; a permanent failure compensates DONE steps in
 * reverse. Every write is fenced by the outer claim's token, so a worker that lost its claim cannot record steps.
 */
export class SagaTracker {
  private readonly table: string;
  private readonly steps: string;

  constructor(
    private readonly options: {
      readonly pool: Pool;
      readonly table: string;
      readonly stepTable: string;
      readonly timeoutMs: number;
    },
  ) {
    this.table = quoteIdent(options.table);
    this.steps = quoteIdent(options.stepTable);
  }

  /** `claim` is the handler's context (`idempotencyOf(request)`) or any ClaimRef from the core. */
  async run(
    claim: ClaimRef,
    steps: readonly SagaStep[],
    isPermanent: (error: unknown) => boolean = (error) => error instanceof PermanentStepError,
  ): Promise<unknown[]> {
    // Transactional mode: step rows are written in the claim's own open transaction (the record is not visible
    // to any other connection yet), so they commit or roll back with it.
    const db = ((claim as { db?: unknown }).db as Pool | undefined) ?? this.options.pool;
    const keep = stepKeeper(claim);
    const recorded = await keep(() => this.load(db, claim), new Map<number, StepRow>());
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
      await this.compensate(db, claim, steps, contexts, recorded);
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
        await this.compensate(db, claim, steps, contexts, recorded);
        throw new SagaCompensatedError(step.name, { cause: error });
      }
      await keep(() => this.record(db, claim, context, 'DONE', result), undefined);
      recorded.set(context.index, { step_index: context.index, status: 'DONE', result: result ?? null });
      results.push(result);
    }
    return results;
  }

  private async compensate(
    db: Pool,
    claim: ClaimRef,
    steps: readonly SagaStep[],
    contexts: readonly StepContext[],
    recorded: Map<number, StepRow>,
  ): Promise<void> {
    for (let i = steps.length - 1; i >= 0; i--) {
      const context = contexts[i]!;
      const row = recorded.get(context.index);
      if (row?.status !== 'DONE') continue;
      await steps[i]!.compensate?.({ ...context, result: row.result });
      await stepKeeper(claim)(() => this.record(db, claim, context, 'COMPENSATED', row.result), undefined);
      row.status = 'COMPENSATED';
    }
  }

  private async load(db: Pool, claim: ClaimRef): Promise<Map<number, StepRow>> {
    const { rows } = await this.query<StepRow>(
      db,
      `SELECT step_index, status, result FROM ${this.steps} WHERE scope = $1 AND key = $2`,
      [claim.scope, claim.key],
    );
    return new Map(rows.map((row) => [row.step_index, row]));
  }

  private async record(
    db: Pool,
    claim: ClaimRef,
    context: StepContext,
    status: 'DONE' | 'COMPENSATED',
    result: unknown,
  ): Promise<void> {
    // FOR SHARE on the parent row: a concurrent reclaim waits for this write, or this write sees the new token and skips.
    const { rowCount } = await this.query(
      db,
      `INSERT INTO ${this.steps} (scope, key, step_index, step_name, sub_key, status, result, updated_at)
SELECT $1::varchar, $2::varchar, $3::smallint, $4::varchar, $5::varchar, $6::varchar, $7::jsonb, now() FROM ${this.table}
WHERE scope = $1::varchar AND key = $2::varchar AND fencing_token = $8::bigint AND status = 'PROCESSING' FOR SHARE
ON CONFLICT (scope, key, step_index) DO UPDATE SET status = EXCLUDED.status, result = EXCLUDED.result, updated_at = now()`,
      [
        claim.scope,
        claim.key,
        context.index,
        context.name,
        context.subKey,
        status,
        JSON.stringify(result ?? null),
        claim.token,
      ],
    );
    if (rowCount !== 1) throw new LeaseLostError();
  }

  private async query<R extends QueryResultRow>(db: Pool, text: string, values: unknown[]) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new StoreUnavailableError('saga')), this.options.timeoutMs);
    });
    try {
      return await Promise.race([db.query<R>(text, values), timeout]);
    } catch (error) {
      throw error instanceof StoreUnavailableError
        ? error
        : new StoreUnavailableError('saga', { cause: error });
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  }
}
