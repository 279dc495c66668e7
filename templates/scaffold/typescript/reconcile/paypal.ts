import { paypalRequestId } from '../providers.js';
import type { StuckRecord } from '../types.js';
import type { ProviderLookup, ProviderVerdict } from './reconcile.js';

/**
 * PayPal answers a repeated create with the same PayPal-Request-Id with the original resource, and orders can be
 * found by the invoice_id you set; `findByRequestId` does one of those with the derived request id (a UUIDv5 of
 * our key) and returns the order id and status, 'absent', or 'unknown'.
 */
export function paypalLookup(
  findByRequestId: (requestId: string) => Promise<{ id: string; status: string } | 'absent' | 'unknown'>,
): ProviderLookup {
  return {
    provider: 'paypal',
    async lookup(record: StuckRecord): Promise<ProviderVerdict> {
      const requestId = paypalRequestId({ scope: record.scope, key: record.key, action: record.action });
      const found = await findByRequestId(requestId);
      if (found === 'absent') return { verdict: 'absent' };
      if (found === 'unknown')
        return { verdict: 'unknown', reason: `no PayPal answer yet for request id ${requestId}` };
      const failed = found.status === 'VOIDED';
      return {
        verdict: 'found',
        reference: found.id,
        response: {
          status: failed ? 402 : 200,
          body: { reconciled: true, provider: 'paypal', id: found.id, status: found.status },
        },
      };
    },
  };
}
