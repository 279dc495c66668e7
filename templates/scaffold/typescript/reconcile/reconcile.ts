import type { ActionSettings, IdempotencyPolicy, IdempotencyStore, StuckRecord } from '../types.js';

/**
 * What the provider says about a stuck record, found through the key we derived for it (the same key every
 * attempt sent). 'found': the effect exists at the provider; `response` is what the record will replay.
 * 'absent': the provider never saw it, so giving the key back is safe (a retry sends the same provider key).
 * 'unknown': the provider cannot tell right now; the record is left alone for the next run.
 */
export type ProviderVerdict =
  | {
      readonly verdict: 'found';
      readonly response: { readonly status: number; readonly body: unknown };
      readonly reference?: string;
    }
  | { readonly verdict: 'absent' }
  | { readonly verdict: 'unknown'; readonly reason: string };

export interface ProviderLookup {
  readonly provider: string;
  lookup(record: StuckRecord): Promise<ProviderVerdict>;
}

export type ReconcileOutcome = 'completed' | 'released' | 'left' | 'raced' | 'no-lookup';

export interface ReconcileEvents {
  reconciled?(action: string, outcome: ReconcileOutcome, dryRun: boolean): void;
}

export interface ReconcileOptions {
  readonly store: IdempotencyStore;
  readonly policy: IdempotencyPolicy;
  readonly actions: Readonly<Record<string, ActionSettings>>;
  /** By action codeName: how to ask that action's provider. Actions without one are reported, not touched. */
  readonly lookups: Readonly<Partial<Record<string, ProviderLookup>>>;
  /** Report what would happen; write nothing. */
  readonly dryRun?: boolean;
  readonly limit?: number;
  /** Only records whose lease lapsed at least this long ago (gives slow provider indexes time to catch up). */
  readonly minStuckMs?: number;
  readonly events?: ReconcileEvents;
}

export interface ReconcileReport {
  readonly dryRun: boolean;
  readonly results: ReadonlyArray<{
    readonly scope: string;
    readonly key: string;
    readonly action: string;
    readonly outcome: ReconcileOutcome;
    readonly detail?: string;
  }>;
}

/**
 * The reconciliation job: records stuck PROCESSING past their lease (the worker crashed, or its completion could
 * not be recorded: "outcome unknown") are looked up at the provider by their derived key, then completed with the
 * provider's result or released for a retry. It asks first and only then takes the record over with a fresh
 * fencing token, so a worker that comes back late is fenced out and a retry racing the job is never overwritten.
 * Nothing here calls the provider's create endpoints: reconciliation can never charge.
 */
export async function reconcileStuck(options: ReconcileOptions): Promise<ReconcileReport> {
  const { store, policy } = options;
  if (!store.listStuck) throw new Error('this store cannot list stuck records (IdempotencyStore.listStuck)');
  const dryRun = options.dryRun ?? false;
  const stuck = await store.listStuck({ limit: options.limit ?? 100, minStuckMs: options.minStuckMs ?? 0 });
  const results: Array<ReconcileReport['results'][number]> = [];
  for (const record of stuck) {
    const note = (outcome: ReconcileOutcome, detail?: string) => {
      results.push({
        scope: record.scope,
        key: record.key,
        action: record.action,
        outcome,
        ...(detail ? { detail } : {}),
      });
      options.events?.reconciled?.(record.action, outcome, dryRun);
    };
    const action = options.actions[record.action];
    const lookup = options.lookups[record.action];
    if (!action || !lookup) {
      note('no-lookup', 'no provider lookup for this action: a retry with the same key reclaims it');
      continue;
    }
    let verdict: ProviderVerdict;
    try {
      verdict = await lookup.lookup(record);
    } catch (error) {
      verdict = { verdict: 'unknown', reason: error instanceof Error ? error.message : String(error) };
    }
    if (verdict.verdict === 'unknown') {
      note('left', verdict.reason);
      continue;
    }
    if (dryRun) {
      note(
        verdict.verdict === 'found' ? 'completed' : 'released',
        `dry run: ${verdict.verdict}${verdict.verdict === 'found' && verdict.reference ? ` ${verdict.reference}` : ''}`,
      );
      continue;
    }
    const claim = await store.claim({
      scope: record.scope,
      key: record.key,
      action: record.action,
      fingerprint: record.fingerprint,
      algorithm: record.algorithm,
      leaseMs: action.leaseMs,
      retentionMs: policy.retentionMs,
    });
    if (claim.outcome !== 'claimed') {
      note('raced', 'taken over or finished while the provider was asked');
      continue;
    }
    if (verdict.verdict === 'absent') {
      await store.release(claim.ref);
      note('released');
      continue;
    }
    const { status, body } = verdict.response;
    const stored = await store.complete(
      claim.ref,
      status < 400 ? 'COMPLETED' : 'FAILED',
      {
        status,
        headers: { 'content-type': 'application/json' },
        body: Buffer.from(JSON.stringify(body), 'utf8'),
      },
      policy.retentionMs,
    );
    note(stored ? 'completed' : 'raced', verdict.reference);
  }
  return { dryRun, results };
}
