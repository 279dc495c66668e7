import { ts } from 'ts-morph';
import { isPagesApiFile } from '../model/labels.js';

/** Next.js route handlers, pages/api, and files that register HTTP routes or verify webhooks: code a caller waits on. */
export function isRequestPathFile(rel: string, text: string): boolean {
  if (/(^|\/)app\/(.+\/)?route\.[cm]?[jt]sx?$/.test(rel) || isPagesApiFile(rel)) return true;
  if (/constructEvent|\.(post|put|patch|delete|get|all)\(\s*['"`]\//.test(text)) return true;
  return /@(Post|Put|Patch|Delete|Get)\(/.test(text);
}

/** `req.body`, `await req.json()`, `request.body`, `ctx.request.body`, `c.req.json()`, `formData()`. */
export const REQUEST_BODY = /\b(req|request|ctx\.request|c\.req)\.(body|json\(\)|formData\(\))|\bawait\s+\w+\.json\(\)|@Body\(/;

/** Identifiers that hold client input in `fn`: destructured from or assigned the request body, or `@Body()` parameters. */
export function clientInputNames(fn: ts.Node): Set<string> {
  const names = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && node.initializer && REQUEST_BODY.test(node.initializer.getText())) bindNames(node.name, names);
    if (ts.isParameter(node) && /@Body\(/.test(node.getText())) bindNames(node.name, names);
    ts.forEachChild(node, visit);
  };
  visit(fn);
  return names;
}

function bindNames(name: ts.BindingName, out: Set<string>): void {
  if (ts.isIdentifier(name)) out.add(name.text);
  else for (const el of name.elements) if (!ts.isOmittedExpression(el)) bindNames(el.name, out);
}
