import { Node } from 'ts-morph';
import { hasProperty, type ProviderKeying } from './adyenKey.js';
import { guarded } from './guardedKey.js';

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
  placement(call) {
    const request = call.getArguments().find((a) => Node.isObjectLiteralExpression(a) && hasProperty(a, 'body'));
    if (!request || !Node.isObjectLiteralExpression(request)) return undefined;
    return (key, guard) => void request.addPropertyAssignment({ name: 'paypalRequestId', initializer: guarded(key, guard) });
  },
};
