import { printModule } from './javascript/printModule.js';
import type { ModuleType } from './javascript/transpile.js';
import type { ScaffoldView } from './scaffoldView.js';
import { quote } from './tsLiteral.js';

/**
 * providers.ts, with helpers only for the providers in the design. Every provider key is a pure function of the
 * (principal scope, local key, action, saga step), so a re-executed action sends the provider the same key and
 * cannot charge twice, and two principals never share one.
 */
export function renderProviders(view: ScaffoldView): string | undefined {
  const ids = new Set(view.providers.map((provider) => provider.id));
  if (ids.size === 0) return undefined;
  const parts: string[] = [
    `import { createHash } from 'node:crypto';
import { providerKeyBase } from './keys.js';

const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * Where a provider key comes from: the handler's context (\`idempotencyOf(request)\`) or a saga step's context.
 * A step context carries its index, so each step gets its own key; pass \`step\` to override.
 */
export interface ProviderKeySource {
  readonly scope: string;
  readonly key: string;
  readonly action: string;
  readonly index?: number;
}

/**
 * Every provider key is providerKeyBase(source, step): SHA-256 hex of the canonical JSON array
 * [scope, key, action, step]. A re-execution or a takeover sends the same key, so the provider deduplicates;
 * two principals who send the same Idempotency-Key get different provider keys.
 */
export function providerKey(source: ProviderKeySource, step = source.index ?? 0): string {
  return providerKeyBase(source, step);
}`,
  ];
  if (ids.has('stripe')) {
    parts.push(`/** Stripe keeps an Idempotency-Key (max 255 characters) for 24 hours; ours are 64. */
export const STRIPE_MAX_KEY = 255;

/** Request options for stripe-node: \`stripe.paymentIntents.create(params, stripeRequestOptions(context))\`. */
export function stripeRequestOptions(source: ProviderKeySource, step?: number): { idempotencyKey: string } {
  return { idempotencyKey: providerKey(source, step) };
}

/**
 * Metadata for every Stripe object you create. Stripe cannot be searched by idempotency key, so this is how
 * reconciliation finds the object behind a local record:
 * \`stripe.paymentIntents.search({ query: \`metadata['idempotency_key_hash']:'\${hash}'\` })\`.
 * A hash rather than the key itself, so keys stay out of third-party dashboards and exports.
 */
export function stripeMetadata(source: ProviderKeySource, step?: number): { idempotency_key_hash: string } {
  return { idempotency_key_hash: sha256Hex(providerKey(source, step)).slice(0, 32) };
}`);
  }
  if (ids.has('adyen')) {
    parts.push(`/** Adyen merchant references and idempotency keys are limited to 64 characters; ours are exactly 64. */
export const ADYEN_MAX_REFERENCE = 64;

/**
 * The derived key as both the merchant reference and the Idempotency-Key. With @adyen/api-library:
 * \`checkout.PaymentsApi.payments({ ...request, reference }, { idempotencyKey })\`.
 */
export function adyenIdempotency(
  source: ProviderKeySource,
  step?: number,
): { reference: string; idempotencyKey: string } {
  const reference = providerKey(source, step).slice(0, ADYEN_MAX_REFERENCE);
  return { reference, idempotencyKey: reference };
}`);
  }
  if (ids.has('paypal')) {
    const namespace = paypalNamespace(view);
    parts.push(`/** Fixed for this project: changing it would give every retry a new PayPal-Request-Id. */
export const PAYPAL_REQUEST_ID_NAMESPACE = ${quote(namespace)};

/** RFC 4122 version 5 (SHA-1, name-based) UUID, so the same name always yields the same id. */
export function uuidV5(name: string, namespace: string): string {
  const bytes = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  if (bytes.length !== 16) throw new Error('namespace must be a UUID');
  const hash = createHash('sha1').update(bytes).update(name, 'utf8').digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return \`\${hex.slice(0, 8)}-\${hex.slice(8, 12)}-\${hex.slice(12, 16)}-\${hex.slice(16, 20)}-\${hex.slice(20)}\`;
}

/**
 * The PayPal-Request-Id for a local key (and saga step): send it as the \`PayPal-Request-Id\` header, or as
 * \`paypalRequestId\` with @paypal/paypal-server-sdk (\`ordersController.createOrder({ body, paypalRequestId })\`).
 */
export function paypalRequestId(source: ProviderKeySource, step?: number): string {
  return uuidV5(providerKey(source, step), PAYPAL_REQUEST_ID_NAMESPACE);
}`);
  }
  if (ids.has('bank-transfer')) {
    parts.push(`/**
 * Banks do not deduplicate: put this reference in the remittance information and reconcile on it before any
 * manual resubmission. 21 characters fits SEPA's 35-character end-to-end id.
 */
export function bankTransferReference(source: ProviderKeySource, step?: number): string {
  return \`IDEM-\${providerKey(source, step).slice(0, 16).toUpperCase()}\`;
}`);
  }
  return `${parts.join('\n\n')}\n`;
}

/**
 * providers.ts as JavaScript (types as JSDoc), as the compiler and prettier would give it; undefined when the design
 * has no provider. The interface's doc comment gives way to its @typedef, as in the transpiled file.
 */
export function renderProvidersJavaScript(view: ScaffoldView, moduleType: ModuleType): string | undefined {
  const ids = new Set(view.providers.map((provider) => provider.id));
  if (ids.size === 0) return undefined;
  const parts: string[] = [
    `import { createHash } from 'node:crypto';
import { providerKeyBase } from './keys.js';

/** @param {string} text */
const sha256Hex = (text) => createHash('sha256').update(text, 'utf8').digest('hex');
/**
 * @typedef {object} ProviderKeySource
 * @property {string} scope
 * @property {string} key
 * @property {string} action
 * @property {number} [index]
 */

/**
 * Every provider key is providerKeyBase(source, step): SHA-256 hex of the canonical JSON array
 * [scope, key, action, step]. A re-execution or a takeover sends the same key, so the provider deduplicates;
 * two principals who send the same Idempotency-Key get different provider keys.
 *
 * @param {ProviderKeySource} source
 * @returns {string}
 */
export function providerKey(source, step = source.index ?? 0) {
  return providerKeyBase(source, step);
}`,
  ];
  if (ids.has('stripe')) {
    parts.push(`/** Stripe keeps an Idempotency-Key (max 255 characters) for 24 hours; ours are 64. */
export const STRIPE_MAX_KEY = 255;

/**
 * Request options for stripe-node: \`stripe.paymentIntents.create(params, stripeRequestOptions(context))\`.
 *
 * @param {ProviderKeySource} source
 * @param {number} [step]
 * @returns {{ idempotencyKey: string; }}
 */
export function stripeRequestOptions(source, step) {
  return { idempotencyKey: providerKey(source, step) };
}

/**
 * Metadata for every Stripe object you create. Stripe cannot be searched by idempotency key, so this is how
 * reconciliation finds the object behind a local record:
 * \`stripe.paymentIntents.search({ query: \`metadata['idempotency_key_hash']:'\${hash}'\` })\`.
 * A hash rather than the key itself, so keys stay out of third-party dashboards and exports.
 *
 * @param {ProviderKeySource} source
 * @param {number} [step]
 * @returns {{ idempotency_key_hash: string; }}
 */
export function stripeMetadata(source, step) {
  return { idempotency_key_hash: sha256Hex(providerKey(source, step)).slice(0, 32) };
}`);
  }
  if (ids.has('adyen')) {
    parts.push(`/** Adyen merchant references and idempotency keys are limited to 64 characters; ours are exactly 64. */
export const ADYEN_MAX_REFERENCE = 64;

/**
 * The derived key as both the merchant reference and the Idempotency-Key. With @adyen/api-library:
 * \`checkout.PaymentsApi.payments({ ...request, reference }, { idempotencyKey })\`.
 *
 * @param {ProviderKeySource} source
 * @param {number} [step]
 * @returns {{ reference: string; idempotencyKey: string; }}
 */
export function adyenIdempotency(source, step) {
  const reference = providerKey(source, step).slice(0, ADYEN_MAX_REFERENCE);
  return { reference, idempotencyKey: reference };
}`);
  }
  if (ids.has('paypal')) {
    const namespace = paypalNamespace(view);
    parts.push(`/** Fixed for this project: changing it would give every retry a new PayPal-Request-Id. */
export const PAYPAL_REQUEST_ID_NAMESPACE = ${quote(namespace)};

/**
 * RFC 4122 version 5 (SHA-1, name-based) UUID, so the same name always yields the same id.
 *
 * @param {string} name
 * @param {string} namespace
 * @returns {string}
 */
export function uuidV5(name, namespace) {
  const bytes = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  if (bytes.length !== 16) throw new Error('namespace must be a UUID');
  const hash = createHash('sha1').update(bytes).update(name, 'utf8').digest();
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return \`\${hex.slice(0, 8)}-\${hex.slice(8, 12)}-\${hex.slice(12, 16)}-\${hex.slice(16, 20)}-\${hex.slice(20)}\`;
}

/**
 * The PayPal-Request-Id for a local key (and saga step): send it as the \`PayPal-Request-Id\` header, or as
 * \`paypalRequestId\` with @paypal/paypal-server-sdk (\`ordersController.createOrder({ body, paypalRequestId })\`).
 *
 * @param {ProviderKeySource} source
 * @param {number} [step]
 * @returns {string}
 */
export function paypalRequestId(source, step) {
  return uuidV5(providerKey(source, step), PAYPAL_REQUEST_ID_NAMESPACE);
}`);
  }
  if (ids.has('bank-transfer')) {
    parts.push(`/**
 * Banks do not deduplicate: put this reference in the remittance information and reconcile on it before any
 * manual resubmission. 21 characters fits SEPA's 35-character end-to-end id.
 *
 * @param {ProviderKeySource} source
 * @param {number} [step]
 * @returns {string}
 */
export function bankTransferReference(source, step) {
  return \`IDEM-\${providerKey(source, step).slice(0, 16).toUpperCase()}\`;
}`);
  }
  return printModule(`${parts.join('\n\n')}\n`, moduleType);
}

/** The project's PayPal-Request-Id namespace (the design fixes one per project). */
function paypalNamespace(view: ScaffoldView): string {
  return view.providers.find((provider) => provider.id === 'paypal')?.namespace ?? '2a5d0a5e-5f4c-5b8e-9d3f-0c1e6a7b8c9d';
}
