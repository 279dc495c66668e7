/** PayPal request classes and controller methods by REST path, and the provider API hosts raw HTTP calls go to. */

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
