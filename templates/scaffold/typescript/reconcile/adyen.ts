import { adyenIdempotency } from '../providers.js';
import type { StuckRecord } from '../types.js';
import type { ProviderLookup, ProviderVerdict } from './reconcile.js';

/**
 * Adyen has no search by idempotency key; every payment carries our derived value as its merchant reference, and
 * Adyen's notifications (and reports) carry it back. `findByReference` answers from wherever you keep those
 * (e.g. the AUTHORISATION notifications your webhook stored): the payment's pspReference and whether it succeeded,
 * 'absent' when Adyen never reported it, or 'unknown' when it is too early to tell.
 */
export function adyenLookup(
  findByReference: (
    merchantReference: string,
  ) => Promise<{ pspReference: string; success: boolean } | 'absent' | 'unknown'>,
): ProviderLookup {
  return {
    provider: 'adyen',
    async lookup(record: StuckRecord): Promise<ProviderVerdict> {
      const { reference } = adyenIdempotency({ scope: record.scope, key: record.key, action: record.action });
      const found = await findByReference(reference);
      if (found === 'absent') return { verdict: 'absent' };
      if (found === 'unknown')
        return { verdict: 'unknown', reason: `no Adyen answer yet for reference ${reference}` };
      return {
        verdict: 'found',
        reference: found.pspReference,
        response: {
          status: found.success ? 200 : 402,
          body: {
            reconciled: true,
            provider: 'adyen',
            pspReference: found.pspReference,
            success: found.success,
          },
        },
      };
    },
  };
}
