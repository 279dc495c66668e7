import type * as TsMorph from 'ts-morph';

type Ts = typeof TsMorph.ts;

/**
 * `new URL('./x.sql', import.meta.url)`, the ES module way to name a file beside the module, as CommonJS writes it:
 * `require('node:path').join(__dirname, './x.sql')`. Both are accepted by readFileSync and name the same file, so a
 * suite that reads its migration this way runs in either module system. Any other use of import.meta is undefined.
 */
export function fileBesideModule(ts: Ts, node: TsMorph.ts.Node): string | undefined {
  if (!ts.isNewExpression(node) || !ts.isIdentifier(node.expression) || node.expression.text !== 'URL') return undefined;
  const [relative, base] = node.arguments ?? [];
  if (!relative || !base || node.arguments?.length !== 2 || !ts.isStringLiteralLike(relative)) return undefined;
  const isImportMetaUrl =
    ts.isPropertyAccessExpression(base) &&
    base.name.text === 'url' &&
    ts.isMetaProperty(base.expression) &&
    base.expression.keywordToken === ts.SyntaxKind.ImportKeyword;
  return isImportMetaUrl ? `require('node:path').join(__dirname, ${JSON.stringify(relative.text)})` : undefined;
}
