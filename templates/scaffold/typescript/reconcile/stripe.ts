import { stripeMetadata } from '../providers.js';
import type { LeaseSignal, StuckRecord } from '../types.js';
import type { ProviderLookup, ProviderVerdict } from './reconcile.js';

export interface StripeLookupOptions {
  readonly secretKey: string;
  /** Default https://api.stripe.com; point it at stripe-mock or a test double in tests. */
  readonly baseUrl?: string;
  /** The Search API resource the action creates; default payment_intents. */
  readonly resource?: 'payment_intents' | 'charges' | 'customers' | 'invoices' | 'subscriptions';
  readonly timeoutMs?: number;
}

const FAILED_STATES = new Set(['canceled', 'requires_payment_method']);

/** The part of fetch the lookup uses: typings before @types/node 18 (and no DOM lib) declare no fetch global. */
type SearchFetch = (
  url: string,
  init: { headers: Record<string, string>; signal: LeaseSignal },
) => Promise<{ readonly ok: boolean; readonly status: number; json(): Promise<unknown> }>;

/**
 * Finds the Stripe object behind a stuck record by the metadata every create call carries
 * (stripeMetadata(context): idempotency_key_hash), with the Search API: read-only, so it can never charge.
 * Search is eventually consistent (new objects can take about a minute to appear), hence the job's minimum age.
 */
export function stripeLookup(options: StripeLookupOptions): ProviderLookup {
  const base = (options.baseUrl ?? 'https://api.stripe.com').replace(/\/+$/, '');
  const resource = options.resource ?? 'payment_intents';
  return {
    provider: 'stripe',
    async lookup(record: StuckRecord): Promise<ProviderVerdict> {
      const hash = stripeMetadata({
        scope: record.scope,
        key: record.key,
        action: record.action,
      }).idempotency_key_hash;
      const query = `metadata['idempotency_key_hash']:'${hash}'`;
      const search = (globalThis as unknown as { fetch: SearchFetch }).fetch;
      const response = await search(
        `${base}/v1/${resource}/search?query=${encodeURIComponent(query)}&limit=1`,
        {
          headers: { authorization: `Bearer ${options.secretKey}` },
          signal: timeoutSignal(options.timeoutMs ?? 10_000),
        },
      );
      if (!response.ok) return { verdict: 'unknown', reason: `Stripe search answered ${response.status}` };
      const page = (await response.json()) as { data?: Array<{ id: string; status?: string }> };
      const object = page.data?.[0];
      if (!object) return { verdict: 'absent' };
      const failed = object.status !== undefined && FAILED_STATES.has(object.status);
      return {
        verdict: 'found',
        reference: object.id,
        response: {
          status: failed ? 402 : 200,
          body: { reconciled: true, provider: 'stripe', id: object.id, status: object.status ?? null },
        },
      };
    },
  };
}

/** AbortSignal.timeout() by hand: typings before @types/node 17.3 do not declare it. The timer keeps no process alive. */
function timeoutSignal(ms: number): LeaseSignal {
  const controller = new AbortController();
  const timer: unknown = setTimeout(() => controller.abort(), ms);
  (timer as { unref?: () => void }).unref?.();
  return controller.signal;
}
