import { Node, SyntaxKind, VariableDeclarationKind, type CallExpression, type ObjectLiteralExpression } from 'ts-morph';
import { hasProperty, type ProviderKeying } from './adyenKey.js';
import { guarded } from './guardedKey.js';

/**
 * @paypal/paypal-server-sdk: `ordersController.createOrder({ body, paypalRequestId })`, the SDK's spelling of the
 * PayPal-Request-Id header. apply adds the property to the request literal that holds `body` or the order's `id`.
 */
export const PAYPAL: ProviderKeying = {
  provider: 'paypal',
  helper: 'paypalRequestId',
  dependency: '@paypal/paypal-server-sdk',
  where: 'paypalRequestId (the PayPal-Request-Id header)',
  keyed: (call) => requestsOf(call).some((a) => hasProperty(a, 'paypalRequestId') || hasProperty(a, 'payPalRequestId') || hasProperty(a, 'PayPal-Request-Id')),
  placement(call) {
    // The request holds `body` (createOrder) or the order's `id` (captureOrder, authorizeOrder).
    const request = requestsOf(call).find((a) => hasProperty(a, 'body') || hasProperty(a, 'id'));
    if (!request) return undefined;
    return (key, guard) => void request.addPropertyAssignment({ name: 'paypalRequestId', initializer: guarded(key, guard) });
  },
};

/**
 * The request literals a call passes: written in the call, or a `const collect = { body, prefer }` of the same function
 * that only this call uses (paypal-examples' servers), so the key added to it reaches no other request.
 */
function requestsOf(call: CallExpression): ObjectLiteralExpression[] {
  return call.getArguments().flatMap((arg) => {
    if (Node.isObjectLiteralExpression(arg)) return [arg];
    if (!Node.isIdentifier(arg)) return [];
    const fn = call.getFirstAncestor((a) => Node.isFunctionDeclaration(a) || Node.isFunctionExpression(a) || Node.isArrowFunction(a) || Node.isMethodDeclaration(a));
    if (!fn) return [];
    const name = arg.getText();
    const declaration = fn.getDescendantsOfKind(SyntaxKind.VariableDeclaration).find((d) => d.getName() === name);
    const list = declaration?.getParent();
    const value = declaration?.getInitializer();
    if (!declaration || !Node.isVariableDeclarationList(list) || list.getDeclarationKind() !== VariableDeclarationKind.Const || !value || !Node.isObjectLiteralExpression(value)) return [];
    const uses = fn.getDescendantsOfKind(SyntaxKind.Identifier).filter((id) => {
      if (id.getText() !== name) return false;
      const parent = id.getParent();
      // `other.collect`, `{ collect: … }`: a property of that name, not the variable.
      return !((Node.isPropertyAccessExpression(parent) || Node.isPropertyAssignment(parent)) && parent.getNameNode() === id);
    });
    // The declaration's name and this argument: any other use could see (or send) the key too.
    return uses.length === 2 ? [value] : [];
  });
}
