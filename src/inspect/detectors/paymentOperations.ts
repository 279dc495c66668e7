/**
 * Provider operations that move money or create billable objects. Reads (retrieve/list) and pure configuration
 * are not here: repeating them is harmless.
 */

/** Stripe resource path → methods. `specific` resources are unmistakably Stripe even on an unknown receiver. */
export const STRIPE_OPERATIONS: Array<{ resource: string[]; methods: string[]; specific: boolean }> = [
  { resource: ['paymentIntents'], methods: ['create', 'confirm', 'capture', 'incrementAuthorization'], specific: true },
  { resource: ['checkout', 'sessions'], methods: ['create'], specific: true },
  { resource: ['paymentLinks'], methods: ['create'], specific: true },
  { resource: ['invoiceItems'], methods: ['create'], specific: true },
  { resource: ['subscriptionItems'], methods: ['create'], specific: true },
  { resource: ['subscriptionSchedules'], methods: ['create'], specific: true },
  { resource: ['creditNotes'], methods: ['create'], specific: true },
  { resource: ['topups'], methods: ['create'], specific: true },
  { resource: ['refunds'], methods: ['create'], specific: false },
  { resource: ['charges'], methods: ['create', 'capture'], specific: false },
  { resource: ['subscriptions'], methods: ['create', 'update', 'resume'], specific: false },
  { resource: ['invoices'], methods: ['create', 'pay', 'finalizeInvoice'], specific: false },
  { resource: ['payouts'], methods: ['create'], specific: false },
  { resource: ['transfers'], methods: ['create', 'createReversal'], specific: false },
  // Duplicate customers are the classic double-submit symptom and are billed against.
  { resource: ['customers'], methods: ['create'], specific: false },
];

/** Adyen Checkout / Modifications / Payment Links / classic Payments API methods. */
export const ADYEN_METHODS = new Set([
  'payments', 'sessions', 'paymentLinks', 'donations', 'refundCapturedPayment', 'captureAuthorisedPayment',
  'refundOrCancelPayment', 'authorise', 'authorise3d', 'capture', 'refund', 'makeInstantCardPayout', 'storeDetailAndSubmitThirdParty',
]);

/** @paypal/checkout-server-sdk request classes → REST operation. */
export const PAYPAL_REQUESTS: Record<string, string> = {
  OrdersCreateRequest: 'v2/checkout/orders',
  OrdersCaptureRequest: 'v2/checkout/orders/{id}/capture',
  OrdersAuthorizeRequest: 'v2/checkout/orders/{id}/authorize',
  AuthorizationsCaptureRequest: 'v2/payments/authorizations/{id}/capture',
  AuthorizationsReauthorizeRequest: 'v2/payments/authorizations/{id}/reauthorize',
  CapturesRefundRequest: 'v2/payments/captures/{id}/refund',
  PayoutsPostRequest: 'v1/payments/payouts',
};

/** @paypal/paypal-server-sdk controller methods (both naming generations) → REST operation. */
export const PAYPAL_CONTROLLER_METHODS: Record<string, string> = {
  createOrder: 'v2/checkout/orders', ordersCreate: 'v2/checkout/orders',
  captureOrder: 'v2/checkout/orders/{id}/capture', ordersCapture: 'v2/checkout/orders/{id}/capture',
  authorizeOrder: 'v2/checkout/orders/{id}/authorize', ordersAuthorize: 'v2/checkout/orders/{id}/authorize',
  captureAuthorizedPayment: 'v2/payments/authorizations/{id}/capture', authorizationsCapture: 'v2/payments/authorizations/{id}/capture',
  refundCapturedPayment: 'v2/payments/captures/{id}/refund', capturesRefund: 'v2/payments/captures/{id}/refund',
};

export const PROVIDER_HOSTS: Array<{ provider: 'stripe' | 'adyen' | 'paypal'; host: RegExp }> = [
  { provider: 'stripe', host: /\bapi\.stripe\.com\b/i },
  { provider: 'adyen', host: /\b[\w-]*\.?adyen(payments)?\.com\b/i },
  { provider: 'paypal', host: /\bapi(-m)?(\.sandbox)?\.paypal\.com\b/i },
];
