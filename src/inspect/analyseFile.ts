import { ts } from 'ts-morph';
import { emptyFacts, type FileContext } from './detectors/detectorTypes.js';
import { detectorsFor } from './detectors/registry.js';
import { lineOf } from './parse/astHelpers.js';
import type { ImportBinding } from './parse/indexSource.js';
import { indexSource } from './parse/indexSource.js';
import { parseSource } from './parse/parseSource.js';
import type { FileRecord } from './resolve/projectRecords.js';
import type { PackageStack } from './stack/detectStack.js';

/**
 * Files that no detector mentions can still matter across files: DTOs name body fields, services sit between a
 * route and a payment call, handler modules (a Hono handler reads `c.req.valid('json')`) sit between a router file and
 * the writes. Anything else is not parsed at all, which is what keeps inspection near parse speed.
 */
// A middleware's own file (a parameter list ending in `, next)`) and a session reader's (`getUser()` verifying the
// session token, which a Server Action's builder calls): the route-authentication reader judges them by their body.
// A handler a Pages API route hands the request to (`req.method === "POST"` there) tells the route's methods.
const CROSS_FILE_HINT = /\b(?:req|request)\s*\.\s*method\b|payment|charge|checkout|refund|billing|invoice|subscription|webhook|(Dto|Input|Body|Request|Payload|Schema)\b|\.object\(|Type\.Object|\.req\.(valid|json|parseBody|formData)\s*\(|,\s*next\s*(?::\s*[\w.]+\s*)?\)|\bverify(?:Id)?Token\s*\(|\bjwtVerify\s*\(|\b(?:jwt|jsonwebtoken)\s*\.\s*verify\s*\(/i;

/**
 * A barrel (`export * from './tasks'`, or CommonJS `module.exports.emailService = require('./email.service')`): imports
 * through it reach the router or handler only if it is parsed.
 */
const RE_EXPORT = /\bexport\s*(\*|\{[^}]*\})\s*from\s*['"]|\bexports\.[\w$]+\s*=\s*require\s*\(|\bmodule\.exports\s*=\s*\{[^}]*\brequire\s*\(/;

export interface AnalysedFile {
  record?: FileRecord;
  warning?: string;
}

export function analyseFile(rel: string, text: string, pkg: { dir: string; name?: string; stack: PackageStack }): AnalysedFile {
  const { mentioned, wanted } = detectorsFor(rel, text);
  if (!mentioned && !CROSS_FILE_HINT.test(text) && !RE_EXPORT.test(text)) return {};
  // indexSource links the parents in its own walk, before any detector looks at the tree.
  const { sf, syntaxError } = parseSource(rel, text, { parents: false });
  const index = indexSource(sf, rel);
  const ctx: FileContext = {
    rel,
    text,
    sf,
    index,
    pkg,
    line: (node) => lineOf(sf, node),
    originOf: (expr) => originOf(expr, index.imports),
  };
  const facts = emptyFacts();
  for (const detector of wanted) detector.detect(ctx, facts);
  const record: FileRecord = {
    rel, text, pkgDir: pkg.dir, imports: index.imports, exports: index.exports, reExports: index.reExports,
    functions: index.functions, shapes: index.shapes, stringConsts: stringConstants(index.consts), facts,
  };
  const warning = syntaxError ? `${rel}:${syntaxError.line}: syntax error (${syntaxError.message}); analysed what could be parsed.` : undefined;
  return { record, ...(warning ? { warning } : {}) };
}

function stringConstants(consts: ReadonlyMap<string, ts.Expression>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [name, value] of consts) if (ts.isStringLiteral(value) || ts.isNoSubstitutionTemplateLiteral(value)) out.set(name, value.text);
  return out;
}

/** Which module an identifier, `ns.member` or `require('x')` comes from, by the file's imports. */
export function originOf(expr: ts.Expression, imports: ReadonlyMap<string, ImportBinding>): ImportBinding | undefined {
  let node = expr;
  while (ts.isParenthesizedExpression(node) || ts.isAsExpression(node) || ts.isNonNullExpression(node)) node = node.expression;
  if (ts.isIdentifier(node)) return imports.get(node.text);
  if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'require') {
    const arg = node.arguments[0];
    return arg && ts.isStringLiteral(arg) ? { module: arg.text, imported: '*' } : undefined;
  }
  if (ts.isPropertyAccessExpression(node)) {
    const base = originOf(node.expression, imports);
    if (base && (base.imported === '*' || base.imported === 'default')) return { module: base.module, imported: node.name.text };
  }
  return undefined;
}
