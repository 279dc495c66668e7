import { Node, SyntaxKind, type SourceFile, type VariableDeclaration } from 'ts-morph';
import { ensureNamedImport, fitStatement } from '../sourceFile.js';
import { assignsLocal, keyFunctionStatement, moduleBindings } from './bindings.js';
import { FORM_KEY_LOCAL, KEY_FUNCTION, type ViewsKeyResult, type ViewsKeyWiring, type ViewsSource } from './types.js';

const EXPRESS = new Set(['express']);

/**
 * Express: `app.locals.idempotencyKey = newIdempotencyKey` where the app is created (`const app = express()`),
 * in the file that sets a view engine, or the only file that creates an app.
 */
export const expressViewsKey: ViewsKeyWiring = {
  mentions: /['"]express['"]/,
  wire(sources: readonly ViewsSource[]): ViewsKeyResult {
    const found: Array<{ source: ViewsSource; binding: string; views: boolean }> = [];
    for (const source of sources) {
      const { sf } = source.parse();
      const binding = expressAppBinding(sf);
      if (binding) found.push({ source, binding, views: setsViewEngine(sf) });
    }
    const chosen = found.find((f) => f.views) ?? (found.length === 1 ? found[0] : undefined);
    if (!chosen) {
      return { changed: [], manual: [{ reason: `no Express app (\`express()\`) found to give its views the key function: add \`app.locals.${FORM_KEY_LOCAL} = ${KEY_FUNCTION};\` (${KEY_FUNCTION} from the scaffold's index) where your app is created, before the routes render` }] };
    }
    const { file } = chosen.source;
    const { sf, specifier } = chosen.source.parse();
    if (assignsLocal(sf, 'locals', FORM_KEY_LOCAL)) return { changed: [], manual: [] };
    const added = addViewsKeyFunction(sf, chosen.binding, specifier);
    if (added === 'no-app') return { changed: [], manual: [{ file, reason: `add \`${chosen.binding}.locals.${FORM_KEY_LOCAL} = ${KEY_FUNCTION};\` (${KEY_FUNCTION} from the scaffold's index) after the app is created` }] };
    if (added === 'name-taken') return { changed: [], manual: [{ file, reason: `the file already binds "${KEY_FUNCTION}": set \`${chosen.binding}.locals.${FORM_KEY_LOCAL}\` to the scaffold's ${KEY_FUNCTION} by hand` }] };
    return { changed: [{ file, text: sf.getFullText(), summary: `gives the views ${FORM_KEY_LOCAL}(), a fresh key per rendered form (app.locals.${FORM_KEY_LOCAL} = ${KEY_FUNCTION})` }], manual: [] };
  },
};

/** The first `const app = express()` of the file (the factory as the file imports or requires it), by its name. */
function expressAppBinding(sf: SourceFile): string | undefined {
  const factories = new Set(moduleBindings(sf, EXPRESS));
  if (factories.size === 0) return undefined;
  const app = sf.getDescendantsOfKind(SyntaxKind.VariableDeclaration).find((d) => {
    const init = d.getInitializer();
    return Node.isIdentifier(d.getNameNode()) && Node.isCallExpression(init) && init.getArguments().length === 0 && factories.has(init.getExpression().getText());
  });
  return app?.getName();
}

/** `app.set('view engine', …)` anywhere in the file. */
function setsViewEngine(sf: SourceFile): boolean {
  return sf.getDescendantsOfKind(SyntaxKind.CallExpression).some((call) => {
    const callee = call.getExpression();
    const [first] = call.getArguments();
    return Node.isPropertyAccessExpression(callee) && callee.getName() === 'set' && first !== undefined && Node.isStringLiteral(first) && first.getLiteralValue() === 'view engine';
  });
}

/**
 * `app.locals.idempotencyKey = newIdempotencyKey` in the file that creates the app, with newIdempotencyKey imported
 * (or required) from the scaffold's index. Placed after the app's declaration, its view engine setting and, in
 * CommonJS, the `require` that binds the function (a `const` read before its line would throw at startup).
 */
export function addViewsKeyFunction(sf: SourceFile, binding: string, specifier: string): 'added' | 'no-app' | 'name-taken' {
  if (!placeLocals(sf, binding)) return 'no-app';
  if (!ensureNamedImport(sf, specifier, KEY_FUNCTION)) return 'name-taken';
  // The import went in above or below the app: place the statement on the new tree.
  placeLocals(sf, binding, fitStatement(sf, `${binding}.locals.${FORM_KEY_LOCAL} = ${KEY_FUNCTION};`));
  return 'added';
}

/**
 * Where `statement` goes: after the app's `set('view engine', …)` when it has one in the same block, else right after
 * the app's declaration. Without `statement`, only says whether there is such a place.
 */
function placeLocals(sf: SourceFile, binding: string, statement?: string): boolean {
  const declaration = appDeclaration(sf, binding);
  const declared = declaration?.getFirstAncestorByKind(SyntaxKind.VariableStatement);
  const block = declared?.getParent();
  if (!declared || !block || !(Node.isSourceFile(block) || Node.isBlock(block))) return false;
  if (statement === undefined) return true;
  // Indices as insertStatements counts them: comment-only lines are statements there.
  const statements = block.getStatementsWithComments();
  const viewEngine = statements.findIndex((s) => Node.isExpressionStatement(s) && new RegExp(`^${binding}\\.set\\(\\s*['"]view engine['"]`).test(s.getText()));
  const at = Math.max(viewEngine, statements.indexOf(declared), keyFunctionStatement(statements)) + 1;
  block.insertStatements(at, statement);
  return true;
}

function appDeclaration(sf: SourceFile, binding: string): VariableDeclaration | undefined {
  return sf.getDescendantsOfKind(SyntaxKind.VariableDeclaration).find((d) => d.getName() === binding && /^\w+\(\s*\)$/.test(d.getInitializer()?.getText() ?? ''));
}
