import { createHash } from 'node:crypto';
import type { Config, Provider } from '../config/schema.js';
import { PROVIDER_LABELS } from './labels.js';
import { PROVIDER_WINDOWS } from './timing.js';
import type { ActionDesign, ProviderDesign } from './types.js';

/** RFC 4122 URL namespace; the PayPal namespace below is derived from it so it is reproducible. */
const NAMESPACE_URL = '6ba7b811-9dad-11d1-80b4-00c04fd430c8';

export function uuidV5(name: string, namespace: string): string {
  const ns = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  const hash = createHash('sha1').update(ns).update(name, 'utf8').digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Namespace for PayPal-Request-Id derivation: UUIDv5(URL, "urn:idempotency-builder:paypal-request-id"). */
export const PAYPAL_NAMESPACE = uuidV5('urn:idempotency-builder:paypal-request-id', NAMESPACE_URL);

export const ADYEN_MAX_REFERENCE = 64;
export const STRIPE_MAX_KEY = 255;

export function adyenReference(key: string, step: number): string {
  const reference = `${key}_${step}`;
  if (reference.length <= ADYEN_MAX_REFERENCE) return reference;
  // Too long for Adyen: a SHA-256 prefix stays deterministic and unique enough (128 bits) for one merchant.
  return `${createHash('sha256').update(key).digest('hex').slice(0, 32)}_${step}`;
}

/**
 * The generated runtime's providerKeyBase: SHA-256 hex of the JSON array [scope, key, action, step] (step 0 for a
 * single call). The document's examples are computed with the same function.
 */
export function providerKeyBase(scope: string, key: string, action: string, step = 0): string {
  return createHash('sha256').update(JSON.stringify([scope, key, action, step]), 'utf8').digest('hex');
}

export const PROVIDER_KEY_FORMULA = 'SHA-256 hex (64 characters) of the JSON array [principal scope, local key, action, step], step 0 for a single call and the step number inside a saga';

export function deriveProviderKeyExample(provider: Provider, key: string, step = 1, scope = 'user-42', action = 'createPayment'): string | undefined {
  const base = providerKeyBase(scope, key, action, step);
  switch (provider) {
    case 'stripe':
      return base;
    case 'adyen':
      return base.slice(0, ADYEN_MAX_REFERENCE);
    case 'paypal':
      return uuidV5(base, PAYPAL_NAMESPACE);
    case 'bank-transfer':
      return `IDEM-${base.slice(0, 16).toUpperCase()}`;
  }
}

const MECHANISMS: Record<Provider, { mechanism: string; derivation: string; coordination: string; maxLength?: number }> = {
  stripe: {
    mechanism: 'Idempotency-Key header (stripe-node: the idempotencyKey request option), up to 255 characters, kept for 24 hours',
    derivation: `${PROVIDER_KEY_FORMULA}; 64 characters fit Stripe's 255`,
    coordination:
      'Pass the local key on every create call, and tag the object with metadata.idempotency_key_hash (a SHA-256 prefix of the key), because Stripe cannot be searched by idempotency key and reconciliation needs to find the object. When Stripe answers from its cache (same key, same parameters) store the result locally as COMPLETED. A 400 idempotency_error from Stripe means the same key was sent with different parameters: a local bug, surfaced as a 500 and alerted on, never retried with a fresh key. So every parameter is the same on each attempt: a time such as a Checkout Session\'s expires_at counts from the handler context\'s startedAt (when the key was first claimed, kept by every takeover), never from the clock.',
    maxLength: 255,
  },
  adyen: {
    mechanism: 'merchant reference (unique per merchant account, deduplicated for about 30 days) plus the Idempotency-Key header (idempotencyKey request option in the Node library)',
    derivation: `${PROVIDER_KEY_FORMULA}; exactly ${ADYEN_MAX_REFERENCE} characters, Adyen's limit, whatever the length of the client's key`,
    coordination:
      'Send the derived value as both reference and idempotency key. Notifications carry the merchant reference back, which links each webhook to the local record without a lookup table.',
    maxLength: 64,
  },
  paypal: {
    mechanism: 'PayPal-Request-Id header on POST calls; how long PayPal keeps it depends on the API',
    derivation: `UUIDv5(namespace ${PAYPAL_NAMESPACE}, ${PROVIDER_KEY_FORMULA}): the same claim always yields the same request id`,
    coordination:
      'Send the derived id on every create and capture call. Two simultaneous calls with one id may fail the second one at PayPal; the local lease already prevents that, so such a failure signals a lease shorter than the call.',
  },
  'bank-transfer': {
    mechanism: 'none: banks do not deduplicate payment instructions',
    derivation: `IDEM- plus the first 16 hex characters (upper case) of the ${PROVIDER_KEY_FORMULA}, carried in the remittance information`,
    coordination:
      'Submit the instruction only from a claimed key and record the submission before sending; reconcile by the remittance reference on the statement before any manual resubmission.',
  },
};

export function buildProviders(config: Config, actions: readonly ActionDesign[]): ProviderDesign[] {
  const used = new Set<Provider>(config.payments);
  for (const action of actions) {
    if (action.provider) used.add(action.provider);
    for (const step of action.steps) if (step.provider) used.add(step.provider);
  }
  const order: Provider[] = ['stripe', 'adyen', 'paypal', 'bank-transfer'];
  return order
    .filter((provider) => used.has(provider))
    .map((provider) => {
      const users = actions.filter((action) => action.provider === provider || action.steps.some((step) => step.provider === provider));
      const sample = users[0]?.key.example ?? 'usr_7fQ9x_createPayment_0f8fad5b-d9cb-469f-a165-70867728950e';
      const window = PROVIDER_WINDOWS[provider];
      const info = MECHANISMS[provider];
      return {
        id: provider,
        label: PROVIDER_LABELS[provider],
        mechanism: info.mechanism,
        derivation: info.derivation,
        example: deriveProviderKeyExample(provider, sample, users[0]?.steps.length ? 1 : 0, users[0] && users[0].scope !== 'global' ? 'user-42' : 'global', users[0]?.codeName ?? 'createPayment') ?? sample,
        maxLength: info.maxLength,
        windowMs: window?.ms,
        windowLabel: window ? window.text : 'no provider-side window',
        coordination: info.coordination,
        namespace: provider === 'paypal' ? PAYPAL_NAMESPACE : undefined,
        actions: users.map((action) => action.name),
      };
    });
}
