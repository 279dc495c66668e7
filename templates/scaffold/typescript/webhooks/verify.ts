import { createHmac, timingSafeEqual } from 'node:crypto';

/** The raw request as the provider sent it: signatures cover the exact bytes, never re-serialised JSON. */
export interface WebhookRequest {
  readonly rawBody: Buffer;
  /** Header names in lower case, as Node delivers them. */
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
}

/** Thrown when a delivery is not provably from the provider: answered 400, never claimed, never handled. */
export class SignatureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SignatureError';
  }
}

/**
 * One provider: how a delivery is verified, and what identifies each event in it. `verify` runs first, on the raw
 * body; only a verified delivery is parsed and deduplicated.
 */
export interface WebhookSource<E> {
  readonly provider: string;
  verify(request: WebhookRequest): Promise<readonly E[]> | readonly E[];
  /** The provider's identity of the event: the dedupe key, the same on every resend of that event. */
  eventId(event: E, request: WebhookRequest): string;
  eventType(event: E): string;
  /** Out-of-order protection (opt-in): the object the event is about and a version that grows with it. */
  orderingOf?(event: E): { readonly object: string; readonly version: number } | undefined;
  /** What the provider expects in a 2xx body (Adyen: "[accepted]"). */
  readonly acceptedBody?: string;
}

export function header(request: WebhookRequest, name: string): string | undefined {
  const value = request.headers[name.toLowerCase()];
  return Array.isArray(value) ? (value.length === 1 ? value[0] : undefined) : (value as string | undefined);
}

export function safeEqual(a: string | Buffer, b: string | Buffer): boolean {
  const left = Buffer.isBuffer(a) ? a : Buffer.from(a, 'utf8');
  const right = Buffer.isBuffer(b) ? b : Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

function parseJson(rawBody: Buffer): unknown {
  try {
    return JSON.parse(rawBody.toString('utf8')) as unknown;
  } catch {
    throw new SignatureError('the signed body is not JSON');
  }
}

/** Reads a dotted path ("data.object.id") from parsed JSON; undefined when any step is missing. */
export function readPath(value: unknown, path: string): unknown {
  let current = value;
  for (const part of path.split('.')) {
    if (
      current === null ||
      typeof current !== 'object' ||
      !Object.prototype.hasOwnProperty.call(current, part)
    )
      return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

/**
 * What identifies one event of a delivery the route has already verified: `id`, the dedupe key (the same on every
 * resend of that event), and `type`. The *EventOf functions below read it from a provider's event, for routes that
 * keep their own signature check and only hand the event to the processor.
 */
export interface WebhookEventIdentity {
  readonly id: string;
  readonly type: string;
}

// ---------------------------------------------------------------------------------------------------------------
// Stripe

export interface StripeEvent {
  readonly id: string;
  readonly type: string;
  /** Seconds since the epoch, set by Stripe when the event was created. */
  readonly created: number;
  readonly data: { readonly object: { readonly id?: string } & Record<string, unknown> };
  readonly [field: string]: unknown;
}

/**
 * The check stripe.webhooks.constructEvent performs, with node:crypto only: the Stripe-Signature header carries
 * `t=<unix seconds>` and one or more `v1=<hex HMAC-SHA256 of "t.rawBody" under the endpoint secret>`; the
 * timestamp must be within `toleranceSeconds` (Stripe's default 300) so a captured delivery cannot be replayed later.
 */
export function verifyStripeSignature(
  request: WebhookRequest,
  endpointSecret: string,
  toleranceSeconds = 300,
  nowSeconds = Math.floor(Date.now() / 1000),
): StripeEvent {
  const signature = header(request, 'stripe-signature');
  if (!signature) throw new SignatureError('missing Stripe-Signature header');
  let timestamp: number | undefined;
  const candidates: string[] = [];
  for (const part of signature.split(',')) {
    const [name, value] = part.split('=', 2) as [string, string | undefined];
    if (name.trim() === 't' && value !== undefined) timestamp = Number(value);
    if (name.trim() === 'v1' && value !== undefined) candidates.push(value.trim());
  }
  if (timestamp === undefined || !Number.isFinite(timestamp) || candidates.length === 0)
    throw new SignatureError('malformed Stripe-Signature header');
  const expected = createHmac('sha256', endpointSecret)
    .update(`${timestamp}.`, 'utf8')
    .update(request.rawBody)
    .digest('hex');
  if (!candidates.some((candidate) => safeEqual(candidate, expected)))
    throw new SignatureError('Stripe signature does not match the body');
  if (toleranceSeconds > 0 && Math.abs(nowSeconds - timestamp) > toleranceSeconds)
    throw new SignatureError('Stripe signature timestamp outside the tolerance');
  const event = parseJson(request.rawBody) as StripeEvent;
  if (typeof event?.id !== 'string' || typeof event.type !== 'string')
    throw new SignatureError('Stripe event without id or type');
  return event;
}

/** A verified Stripe event (stripe.webhooks.constructEvent or verifyStripeSignature): keyed by its id (evt_...). */
export function stripeEventOf(event: { readonly id: string; readonly type: string }): WebhookEventIdentity {
  return { id: event.id, type: event.type };
}

/** Stripe: keyed by event.id; ordering by the event's `created` time per data.object.id. */
export function stripeSource(endpointSecret: string, toleranceSeconds = 300): WebhookSource<StripeEvent> {
  return {
    provider: 'stripe',
    verify: (request) => [verifyStripeSignature(request, endpointSecret, toleranceSeconds)],
    eventId: (event) => stripeEventOf(event).id,
    eventType: (event) => event.type,
    orderingOf: (event) =>
      typeof event.data?.object?.id === 'string' && Number.isFinite(event.created)
        ? { object: `stripe:${event.data.object.id}`, version: event.created }
        : undefined,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Adyen

export interface AdyenNotificationItem {
  readonly pspReference: string;
  readonly originalReference?: string;
  readonly merchantAccountCode: string;
  readonly merchantReference: string;
  readonly amount: { readonly value: number; readonly currency: string };
  readonly eventCode: string;
  readonly eventDate?: string;
  readonly success: string;
  readonly additionalData?: Readonly<Record<string, string>>;
  readonly [field: string]: unknown;
}

/**
 * Adyen's HMAC for standard notifications: base64 HMAC-SHA256, under the hex-decoded HMAC key, of
 * pspReference:originalReference:merchantAccountCode:merchantReference:value:currency:eventCode:success
 * (additionalData.hmacSignature). Every item of a batch is checked; one bad item rejects the delivery.
 */
export function verifyAdyenItem(item: AdyenNotificationItem, hmacKeyHex: string): boolean {
  const given = item.additionalData?.hmacSignature;
  if (!given) return false;
  const payload = [
    item.pspReference ?? '',
    item.originalReference ?? '',
    item.merchantAccountCode ?? '',
    item.merchantReference ?? '',
    String(item.amount?.value ?? ''),
    item.amount?.currency ?? '',
    item.eventCode ?? '',
    item.success ?? '',
  ].join(':');
  const expected = createHmac('sha256', Buffer.from(hmacKeyHex, 'hex'))
    .update(payload, 'utf8')
    .digest('base64');
  return safeEqual(given, expected);
}

/**
 * A verified Adyen NotificationRequestItem (your own hmacValidator check, or verifyAdyenItem): keyed by pspReference +
 * eventCode + success, the same on every resend (a failed and a later successful AUTHORISATION are two events).
 * Typed structurally, so @adyen/api-library's NotificationRequestItem and the parsed JSON both fit.
 */
export function adyenEventOf(item: {
  readonly pspReference?: string;
  readonly eventCode?: string;
  readonly success?: string;
}): WebhookEventIdentity {
  if (!item.pspReference || !item.eventCode)
    throw new SignatureError('Adyen notification item without pspReference or eventCode');
  return { id: `${item.pspReference}:${item.eventCode}:${item.success ?? ''}`, type: item.eventCode };
}

/** Adyen: keyed by pspReference + eventCode + success (a failed and a later successful AUTHORISATION differ). */
export function adyenSource(hmacKeyHex: string): WebhookSource<AdyenNotificationItem> {
  return {
    provider: 'adyen',
    acceptedBody: '[accepted]',
    verify(request) {
      const body = parseJson(request.rawBody) as {
        notificationItems?: Array<{ NotificationRequestItem?: AdyenNotificationItem }>;
      };
      const items = (body?.notificationItems ?? []).map((entry) => entry.NotificationRequestItem);
      if (items.length === 0) throw new SignatureError('Adyen notification without items');
      for (const item of items) {
        if (!item || !verifyAdyenItem(item, hmacKeyHex))
          throw new SignatureError('Adyen HMAC signature does not match');
      }
      return items as AdyenNotificationItem[];
    },
    eventId: (item) => adyenEventOf(item).id,
    eventType: (item) => item.eventCode,
    orderingOf: (item) => {
      const at = item.eventDate ? Date.parse(item.eventDate) : Number.NaN;
      return Number.isFinite(at)
        ? { object: `adyen:${item.originalReference || item.pspReference}`, version: at }
        : undefined;
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// PayPal

export interface PayPalEvent {
  readonly id: string;
  readonly event_type: string;
  readonly create_time?: string;
  readonly resource?: { readonly id?: string } & Record<string, unknown>;
  readonly [field: string]: unknown;
}

/**
 * A verified PayPal event (your own verify-webhook-signature call, or paypalSource's verifier): keyed by the event
 * id (WH-...), the same on every resend; `transmissionId` (the paypal-transmission-id header) only when the event
 * has none.
 */
export function paypalEventOf(
  event: { readonly id?: unknown; readonly event_type?: unknown },
  transmissionId?: string,
): WebhookEventIdentity {
  const id = typeof event.id === 'string' && event.id ? event.id : transmissionId;
  if (!id) throw new SignatureError('PayPal event without id or transmission id');
  return { id, type: typeof event.event_type === 'string' ? event.event_type : 'unknown' };
}

/**
 * PayPal signs with a certificate chain; verifying it needs PayPal's verify-webhook-signature API (or the cert
 * check), which you supply as `verifier` (it receives the raw body and the paypal-transmission-* headers).
 * Keyed by the event id (WH-...), falling back to paypal-transmission-id.
 */
export function paypalSource(
  verifier: (request: WebhookRequest) => Promise<boolean>,
): WebhookSource<PayPalEvent> {
  return {
    provider: 'paypal',
    async verify(request) {
      if (!(await verifier(request))) throw new SignatureError('PayPal signature verification failed');
      const event = parseJson(request.rawBody) as PayPalEvent;
      if (typeof event?.event_type !== 'string') throw new SignatureError('PayPal event without event_type');
      return [event];
    },
    eventId: (event, request) => paypalEventOf(event, header(request, 'paypal-transmission-id')).id,
    eventType: (event) => event.event_type,
    orderingOf: (event) => {
      const at = event.create_time ? Date.parse(event.create_time) : Number.NaN;
      return typeof event.resource?.id === 'string' && Number.isFinite(at)
        ? { object: `paypal:${event.resource.id}`, version: at }
        : undefined;
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// GitHub and generic HMAC senders

/** GitHub: X-Hub-Signature-256 = "sha256=" + hex HMAC-SHA256 of the raw body; keyed by X-GitHub-Delivery. */
export function githubSource(
  secret: string,
): WebhookSource<{ readonly event: string; readonly payload: unknown; readonly delivery: string }> {
  return {
    provider: 'github',
    verify(request) {
      const given = header(request, 'x-hub-signature-256');
      const expected = `sha256=${createHmac('sha256', secret).update(request.rawBody).digest('hex')}`;
      if (!given || !safeEqual(given, expected))
        throw new SignatureError('GitHub signature does not match the body');
      const delivery = header(request, 'x-github-delivery');
      if (!delivery) throw new SignatureError('missing X-GitHub-Delivery header');
      return [
        {
          event: header(request, 'x-github-event') ?? 'unknown',
          payload: parseJson(request.rawBody),
          delivery,
        },
      ];
    },
    eventId: (event) => event.delivery,
    eventType: (event) => event.event,
  };
}

export interface GenericSourceOptions {
  readonly provider: string;
  readonly secret: string;
  /** Header holding the hex (or "sha256=" + hex) HMAC-SHA256 of the raw body. */
  readonly signatureHeader: string;
  /** Where the event id is: a header name, or a dotted JSON path in the body. */
  readonly eventId: { readonly header: string } | { readonly path: string };
  /** Dotted JSON path of the event type; "event" when absent. */
  readonly typePath?: string;
}

/** Any sender that signs the raw body with a shared secret; the event id comes from a header or a JSON path. */
export function genericHmacSource(
  options: GenericSourceOptions,
): WebhookSource<{ readonly id: string; readonly type: string; readonly payload: unknown }> {
  return {
    provider: options.provider,
    verify(request) {
      const given = (header(request, options.signatureHeader) ?? '').replace(/^sha256=/, '');
      const expected = createHmac('sha256', options.secret).update(request.rawBody).digest('hex');
      if (!given || !safeEqual(given, expected))
        throw new SignatureError(`${options.provider} signature does not match the body`);
      const payload = parseJson(request.rawBody);
      const id =
        'header' in options.eventId
          ? header(request, options.eventId.header)
          : readPath(payload, options.eventId.path);
      if (typeof id !== 'string' && typeof id !== 'number')
        throw new SignatureError(`${options.provider} event without an id`);
      const type = options.typePath ? readPath(payload, options.typePath) : 'event';
      return [{ id: String(id), type: typeof type === 'string' ? type : 'event', payload }];
    },
    eventId: (event) => event.id,
    eventType: (event) => event.type,
  };
}
