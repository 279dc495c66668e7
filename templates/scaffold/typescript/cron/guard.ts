import { performance } from 'node:perf_hooks';
import type { IdempotencyCore } from '../core.js';
import { canonicalJson, sha256Hex } from '../fingerprint.js';
import type { ActionSettings, IdempotencyContext } from '../types.js';

/**
 * What a scheduler run did with its slot. 'ran': this instance owned the slot and the job finished. 'duplicate':
 * another instance (or an earlier fire) already finished it. 'overlap': another run holds the slot right now.
 */
export type SlotOutcome = 'ran' | 'duplicate' | 'overlap';

export interface CronEvents {
  slot?(job: string, outcome: SlotOutcome | 'failed', durationMs: number): void;
  /** The previous slot never ran ('missed') or its run died without finishing ('crashed'). */
  missed?(job: string, slotStart: Date, reason: 'missed' | 'crashed'): void;
}

export interface CronGuardOptions {
  readonly core: IdempotencyCore;
  readonly events?: CronEvents;
}

/**
 * Which slot a fire belongs to: floor((firedAt + tolerance) / interval). The tolerance (default half the
 * interval, at most 30 s) absorbs schedulers that fire a little early or late on another host's clock, so two
 * instances firing "the same" 10:00 run always land on the same slot.
 */
export function slotStart(
  intervalMs: number,
  firedAt: Date | number = Date.now(),
  toleranceMs = Math.min(intervalMs / 2, 30_000),
): Date {
  const at = typeof firedAt === 'number' ? firedAt : firedAt.getTime();
  return new Date(Math.floor((at + toleranceMs) / intervalMs) * intervalMs);
}

/** The key of one job's slot: the scheduled time, never the time the run actually started. */
export function slotKey(job: string, slot: Date): string {
  const readable = `cron:${job}:${slot.toISOString()}`;
  return /^[\x21-\x7e]{1,200}$/.test(readable)
    ? readable
    : `cron:sha256:${sha256Hex(canonicalJson([job, slot.toISOString()]))}`;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Overlap and duplicate guard for scheduled jobs: each (job, slot) runs at most once across every instance,
 * through the same claim / lease / fencing as HTTP. A run that dies mid-job leaves the slot PROCESSING; after the
 * lease a re-fire of that slot (or the reconciliation job's report) sees it, and the next slot reports it as
 * 'crashed'. Inside a batch, `context` carries the slot key: derive per-item keys from it so a re-run skips
 * items already done.
 */
export class CronGuard {
  constructor(private readonly options: CronGuardOptions) {}

  async run(
    action: ActionSettings,
    job: string,
    slot: Date,
    work: (context: IdempotencyContext, slot: Date) => Promise<void>,
    previousSlot?: Date,
  ): Promise<SlotOutcome> {
    const { core } = this.options;
    const started = performance.now();
    const key = slotKey(job, slot);
    const fingerprint = sha256Hex(canonicalJson({ job, slot: slot.toISOString() }));
    const decision = await core.begin(action, { scope: 'global', key, fingerprint });
    if (decision.kind !== 'execute') {
      const outcome: SlotOutcome = decision.kind === 'in-flight' ? 'overlap' : 'duplicate';
      this.options.events?.slot?.(job, outcome, performance.now() - started);
      return outcome;
    }
    if (previousSlot) await this.checkPrevious(job, previousSlot, slot);
    const { claim } = decision;
    try {
      await work(claim.context, slot);
    } catch (error) {
      await claim.release();
      this.options.events?.slot?.(job, 'failed', performance.now() - started);
      throw error;
    }
    const body = Buffer.from(JSON.stringify({ job, slot: slot.toISOString() }), 'utf8');
    await claim.complete({ status: 200, headers: { 'content-type': 'application/json' }, body });
    this.options.events?.slot?.(job, 'ran', performance.now() - started);
    return 'ran';
  }

  /**
   * One item of a batch, at most once per slot: keyed by the slot's key plus the item id, claimed and committed on
   * its own, so a run that crashed halfway and is re-run for the same slot skips the items already done.
   * Returns false when the item had already been done (or is being done right now by another run).
   */
  async runItem(
    action: ActionSettings,
    slotContext: Pick<IdempotencyContext, 'key'>,
    itemId: string,
    work: (context: IdempotencyContext) => Promise<void>,
  ): Promise<boolean> {
    const readable = `${slotContext.key}:item:${itemId}`;
    const key = /^[\x21-\x7e]{1,200}$/.test(readable) ? readable : `cron:item:sha256:${sha256Hex(readable)}`;
    const fingerprint = sha256Hex(canonicalJson({ slot: slotContext.key, item: itemId }));
    const decision = await this.options.core.begin(action, { scope: 'global', key, fingerprint });
    if (decision.kind !== 'execute') return false;
    const { claim } = decision;
    try {
      await work(claim.context);
    } catch (error) {
      await claim.release();
      throw error;
    }
    await claim.complete({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: Buffer.from('{"done":true}'),
    });
    return true;
  }

  /** A fixed-interval job: the slot is derived from the fire time (see slotStart). */
  runInterval(
    action: ActionSettings,
    job: string,
    intervalMs: number,
    work: (context: IdempotencyContext, slot: Date) => Promise<void>,
    firedAt: Date | number = Date.now(),
  ): Promise<SlotOutcome> {
    const slot = slotStart(intervalMs, firedAt);
    return this.run(action, job, slot, work, new Date(slot.getTime() - intervalMs));
  }

  /**
   * Metrics for the slot before this one: no record while the one before it exists means the slot was skipped
   * (scheduler down); a PROCESSING record with a lapsed lease means its run died. Reads only, never blocks the run.
   */
  private async checkPrevious(job: string, previous: Date, current: Date): Promise<void> {
    const hooks = this.options.events;
    if (!hooks?.missed) return;
    try {
      const store = this.options.core.store;
      const record = await store.read('global', slotKey(job, previous));
      if (record?.status === 'PROCESSING' && !record.leaseLive) hooks.missed(job, previous, 'crashed');
      if (!record) {
        const before = new Date(previous.getTime() - (current.getTime() - previous.getTime()));
        if (await store.read('global', slotKey(job, before))) hooks.missed(job, previous, 'missed');
      }
    } catch {
      // Metrics only: a store hiccup here must not fail the job.
    }
  }
}

/** node-cron: `cron.schedule('*\/5 * * * *', nodeCronTask(guard, ACTIONS.x, 'x', 300_000, work))`. */
export function nodeCronTask(
  guard: CronGuard,
  action: ActionSettings,
  job: string,
  intervalMs: number,
  work: (context: IdempotencyContext, slot: Date) => Promise<void>,
) {
  return (): Promise<SlotOutcome> => guard.runInterval(action, job, intervalMs, work);
}

/**
 * setInterval: `setInterval(intervalTask(guard, ACTIONS.x, 'x', 60_000, work), 60_000)`, the same period in both
 * places. setInterval drops the promise its callback returns, so a failed run (the job's own error, or the store
 * unreachable: the slot is then skipped, never run unguarded) goes to `onError`; by default its message is printed
 * with the job's name, and the next tick runs as before.
 */
export function intervalTask(
  guard: CronGuard,
  action: ActionSettings,
  job: string,
  intervalMs: number,
  work: (context: IdempotencyContext, slot: Date) => Promise<void>,
  onError: (error: unknown) => void = (error) =>
    console.error(`scheduled job ${job} failed:`, error instanceof Error ? error.message : String(error)),
) {
  return (): void => {
    guard.runInterval(action, job, intervalMs, work).catch(onError);
  };
}

/**
 * node-schedule passes the scheduled fire date (not the actual start): the slot is exactly that date, so cron
 * expressions with uneven gaps keep their own slots. `schedule.scheduleJob('0 3 1 * *', nodeScheduleTask(...))`.
 */
export function nodeScheduleTask(
  guard: CronGuard,
  action: ActionSettings,
  job: string,
  work: (context: IdempotencyContext, slot: Date) => Promise<void>,
) {
  return (fireDate: Date): Promise<SlotOutcome> =>
    guard.run(action, job, new Date(Math.floor(fireDate.getTime() / 1000) * 1000), work);
}

/** cron (CronJob): `CronJob.from({ cronTime, onTick: cronOnTick(guard, ACTIONS.x, 'x', 60_000, work), start: true })`. */
export function cronOnTick(
  guard: CronGuard,
  action: ActionSettings,
  job: string,
  intervalMs: number,
  work: (context: IdempotencyContext, slot: Date) => Promise<void>,
) {
  return async (): Promise<void> => {
    await guard.runInterval(action, job, intervalMs, work);
  };
}

/**
 * @nestjs/schedule: call the guard from the decorated method, e.g.
 * `@Cron(CronExpression.EVERY_5_MINUTES) tick() { return this.guard.runInterval(ACTIONS.x, 'x', 300_000, work); }`.
 * Vercel cron routes: `export const GET = vercelCronRoute(guard, ACTIONS.x, 'x', 86_400_000, work)`; Vercel
 * sends `Authorization: Bearer $CRON_SECRET`, and anything else is 401 before the guard is touched.
 */
export function vercelCronRoute(
  guard: CronGuard,
  action: ActionSettings,
  job: string,
  intervalMs: number,
  work: (context: IdempotencyContext, slot: Date) => Promise<void>,
  secret: string | undefined = process.env.CRON_SECRET,
) {
  // The request typed by what is read of it, and the Response read by shape (below): typings before
  // @types/node 18 declare no Request or Response global.
  return async (request: { readonly headers: { get(name: string): string | null } }) => {
    if (!secret || request.headers.get('authorization') !== `Bearer ${secret}`)
      return newResponse('unauthorized', { status: 401 });
    try {
      const outcome = await guard.runInterval(action, job, intervalMs, work);
      return jsonResponse({ outcome }, 200);
    } catch (error) {
      return jsonResponse({ error: error instanceof Error ? error.message : String(error) }, 500);
    }
  };
}

/** The platform's Response where the typings declare one; before @types/node 18 (and no DOM lib), its status. */
type WebResponse =
  typeof globalThis extends Record<'Response', { prototype: infer R }> ? R : { readonly status: number };

interface WebResponseInit {
  readonly status: number;
  readonly headers?: Record<string, string>;
}

type WebResponseConstructor = new (body: string, init: WebResponseInit) => WebResponse;

/** Read by shape, for the same typings; Node 18 and every runtime with cron routes has the global. */
function newResponse(body: string, init: WebResponseInit): WebResponse {
  const Platform = (globalThis as unknown as { Response: WebResponseConstructor }).Response;
  return new Platform(body, init);
}

/** Response.json() spelled out: typings declare that static later than Response itself. */
function jsonResponse(body: unknown, status: number): WebResponse {
  return newResponse(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

/** Waits until the next slot boundary; for hand-rolled loops (`while (running) { await untilNextSlot(ms); ... }`). */
export function untilNextSlot(intervalMs: number, now = Date.now()): Promise<void> {
  return sleep(intervalMs - (now % intervalMs));
}
