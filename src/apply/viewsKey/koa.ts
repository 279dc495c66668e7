import { Node, SyntaxKind, type SourceFile, type VariableDeclaration, type WriterFunction } from 'ts-morph';
import { ensureNamedImport, fitStatement } from '../sourceFile.js';
import { assignsLocal, keyFunctionStatement, loadsModule, moduleBindings } from './bindings.js';
import { FORM_KEY_LOCAL, KEY_FUNCTION, type ViewsKeyResult, type ViewsKeyWiring, type ViewsSource } from './types.js';

const KOA = new Set(['koa']);

/** Koa's view integrations: each renders with `ctx.state` merged under the render call's own locals. */
const VIEW_MODULES = new Set(['koa-views', '@ladjs/koa-views', 'koa-ejs', '@koa/ejs']);

const BY_HAND = `app.use((ctx, next) => { ctx.state.${FORM_KEY_LOCAL} = ${KEY_FUNCTION}; return next(); });`;

/**
 * Koa: koa-views, @ladjs/koa-views and koa-ejs all merge `ctx.state` into what a template sees, and Koa makes a new
 * `ctx.state` for every request (so `app.context.state` would not reach the views): a first middleware puts the key
 * function there, right after the app is created and so before any router renders.
 */
export const koaViewsKey: ViewsKeyWiring = {
  mentions: /['"]koa['"]/,
  wire(sources: readonly ViewsSource[]): ViewsKeyResult {
    const found: Array<{ source: ViewsSource; binding: string; views: boolean }> = [];
    for (const source of sources) {
      const { sf } = source.parse();
      const app = koaApp(sf);
      if (app) found.push({ source, binding: app.getName(), views: loadsModule(sf, VIEW_MODULES) });
    }
    const chosen = found.find((f) => f.views) ?? (found.length === 1 ? found[0] : undefined);
    if (!chosen) {
      return { changed: [], manual: [{ reason: `no Koa app (\`new Koa()\`) found to give its views the key function: add \`${BY_HAND}\` (${KEY_FUNCTION} from the scaffold's index) right after the app is created, before the routers; koa-views and koa-ejs pass ctx.state to every template` }] };
    }
    const { file } = chosen.source;
    const { sf, specifier } = chosen.source.parse();
    if (assignsLocal(sf, 'state', FORM_KEY_LOCAL)) return { changed: [], manual: [] };
    const byHand = BY_HAND.replace(/^app\./, `${chosen.binding}.`);
    if (!placeMiddleware(sf)) return { changed: [], manual: [{ file, reason: `add \`${byHand}\` (${KEY_FUNCTION} from the scaffold's index) right after the app is created, before the routers` }] };
    if (!ensureNamedImport(sf, specifier, KEY_FUNCTION)) return { changed: [], manual: [{ file, reason: `the file already binds "${KEY_FUNCTION}": add \`${byHand}\` with the scaffold's ${KEY_FUNCTION} by hand` }] };
    placeMiddleware(sf, true);
    return { changed: [{ file, text: sf.getFullText(), summary: `gives the views ${FORM_KEY_LOCAL}(), a fresh key per rendered form (a first middleware sets ctx.state.${FORM_KEY_LOCAL} = ${KEY_FUNCTION})` }], manual: [] };
  },
};

/** The first `const app = new Koa(…)` of the file, Koa as the file imports or requires it. */
function koaApp(sf: SourceFile): VariableDeclaration | undefined {
  const constructors = new Set(moduleBindings(sf, KOA));
  if (constructors.size === 0) return undefined;
  return sf.getDescendantsOfKind(SyntaxKind.VariableDeclaration).find((d) => {
    const init = d.getInitializer();
    return Node.isIdentifier(d.getNameNode()) && Node.isNewExpression(init) && constructors.has(init.getExpression().getText());
  });
}

/**
 * The middleware right after the app's declaration (after the `require` binding the function, in CommonJS, when that
 * comes later in the same block). Without `insert`, only says whether the declaration sits in a block.
 */
function placeMiddleware(sf: SourceFile, insert = false): boolean {
  const app = koaApp(sf);
  const declared = app?.getFirstAncestorByKind(SyntaxKind.VariableStatement);
  const block = declared?.getParent();
  if (!app || !declared || !block || !(Node.isSourceFile(block) || Node.isBlock(block))) return false;
  if (!insert) return true;
  const statements = block.getStatementsWithComments();
  const end = fitStatement(sf, ';');
  const middleware: WriterFunction = (writer) =>
    writer
      .write(`${app.getName()}.use((ctx, next) => `)
      .inlineBlock(() => {
        writer.writeLine(`ctx.state.${FORM_KEY_LOCAL} = ${KEY_FUNCTION}${end}`);
        writer.writeLine(`return next()${end}`);
      })
      .write(`)${end}`);
  block.insertStatements(Math.max(statements.indexOf(declared), keyFunctionStatement(statements)) + 1, middleware);
  return true;
}
