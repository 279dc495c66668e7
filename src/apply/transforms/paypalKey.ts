import { Node } from 'ts-morph';
import { hasProperty, type ProviderKeying } from './adyenKey.js';

/**
 * @paypal/paypal-server-sdk: `ordersController.createOrder({ body, paypalRequestId })`, the SDK's spelling of the
 * PayPal-Request-Id header. apply adds the property to the request literal that holds `body`.
 */
export const PAYPAL: ProviderKeying = {
  provider: 'paypal',
  helper: 'paypalRequestId',
  dependency: '@paypal/paypal-server-sdk',
  where: 'paypalRequestId (the PayPal-Request-Id header)',
  keyed: (call) => call.getArguments().some((a) => Node.isObjectLiteralExpression(a) && (hasProperty(a, 'paypalRequestId') || hasProperty(a, 'payPalRequestId') || hasProperty(a, 'PayPal-Request-Id'))),
  place(call, key, step) {
    const request = call.getArguments().find((a) => Node.isObjectLiteralExpression(a) && hasProperty(a, 'body'));
    if (!request || !Node.isObjectLiteralExpression(request)) return false;
    request.addPropertyAssignment({ name: 'paypalRequestId', initializer: key(step) });
    return true;
  },
};
