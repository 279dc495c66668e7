import { Node, SyntaxKind, type ArrowFunction, type FunctionDeclaration, type FunctionExpression, type MethodDeclaration } from 'ts-morph';

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const ID_NAMES = new Set(['id', 'userId', 'sub', 'accountId', 'tenantId']);
const FLAT_ID = /^(?:user|account|tenant|customer|member)_?id$/i;

/**
 * How the handler itself reads the caller's id (`req.auth?.user?.id`, `req.user.id`): the path below the request
 * object, so the instance's principal reads the same thing. Only plain identifiers, at most three deep; one deep only
 * for a caller's id by name (`req.userId`).
 */
export function principalPathIn(handler: ArrowFunction | FunctionExpression | FunctionDeclaration | MethodDeclaration, express = false): string[] | undefined {
  const request = handler.getParameters()[0]?.getNameNode();
  if (!request || !Node.isIdentifier(request)) return undefined;
  const name = request.getText();
  // Express: what authentication middleware left in `res.locals` (`res.locals.user.id`), read as `req.res.locals…`.
  const response = express ? handler.getParameters()[1]?.getNameNode() : undefined;
  const responseName = response && Node.isIdentifier(response) ? response.getText() : undefined;
  for (const access of handler.getDescendantsOfKind(SyntaxKind.PropertyAccessExpression)) {
    if (Node.isPropertyAccessExpression(access.getParent())) continue;
    const path: string[] = [];
    let node: Node = access;
    while (Node.isPropertyAccessExpression(node)) {
      path.unshift(node.getName());
      node = node.getExpression();
    }
    if (Node.isIdentifier(node) && responseName !== undefined && node.getText() === responseName) {
      if (path[0] === 'locals' && path.length >= 3 && path.length <= 4 && ID_NAMES.has(path[path.length - 1]!) && path.every((p) => IDENTIFIER.test(p))) return ['res', ...path];
      continue;
    }
    if (!Node.isIdentifier(node) || node.getText() !== name) continue;
    if (path.length >= 2 && path.length <= 3 && ID_NAMES.has(path[path.length - 1]!) && path.every((p) => IDENTIFIER.test(p)) && path[0] !== 'params' && path[0] !== 'body' && path[0] !== 'query') return path;
    // A flat id an authentication middleware set on the request (`req.userId = decoded.id`, `req.UserId`).
    if (path.length === 1 && FLAT_ID.test(path[0]!)) return path;
  }
  return undefined;
}
