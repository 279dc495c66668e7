import { Node, QuoteKind, SyntaxKind, type ArrayLiteralExpression, type Block, type CallExpression, type SourceFile } from 'ts-morph';
import { ensureNamedImport, fitStatement } from '../sourceFile.js';
import type { ManualStep } from '../types.js';
import type { TransformContext, TransformOutcome } from './context.js';

/** The instance module's export that ends the store's pool once, however often it is called (renderInstance.ts). */
export const CLOSE = 'closeIdempotency';

const quoteOf = (sf: SourceFile) => (sf.getProject().manipulationSettings.getQuoteKind() === QuoteKind.Double ? '"' : "'");

/** `x.addHook('onClose', closeIdempotency)`, whatever the instance is called. */
function isCloseHook(call: CallExpression): boolean {
  const callee = call.getExpression();
  const [event, hook] = call.getArguments();
  return Node.isPropertyAccessExpression(callee) && callee.getName() === 'addHook' && event !== undefined && Node.isStringLiteral(event) && event.getLiteralValue() === 'onClose' && hook?.getText() === CLOSE;
}

interface Where {
  action: string;
  file: string;
}

/**
 * Fastify: `fastify.addHook('onClose', closeIdempotency)` first in the plugin that registers a route apply wired (the
 * instance named as the plugin names its parameter), so app.close(), in a graceful shutdown or a test's teardown,
 * ends the store's pool: the onClose hooks of an encapsulated plugin run when the root instance closes. A route on an
 * instance made where it is used (`const app = Fastify()` in a buildApp(), or at the top of the file) gets the hook
 * just before its statement, where that name is the same instance. Once per plugin, function or file: a second
 * wired route or a second apply finds it there; two plugins each adding one is harmless, as the close is idempotent.
 */
export function closeFastifyWithApp(sf: SourceFile, route: CallExpression, where: Where, context: TransformContext): TransformOutcome {
  if (!context.closeExported) return { edits: [], manual: [] };
  const line = route.getStartLineNumber();
  const step = (reason: string): TransformOutcome => ({ edits: [], manual: [{ action: where.action, file: where.file, line, reason }] });
  const callee = route.getExpression();
  const instance = Node.isPropertyAccessExpression(callee) ? callee.getExpression() : undefined;
  const manual = `call ${CLOSE}() from the instance module when the Fastify app closes: app.addHook('onClose', ${CLOSE}), so app.close() ends the store's connections`;
  if (!instance || !Node.isIdentifier(instance)) return step(manual);
  const name = instance.getText();
  const scope = route.getFirstAncestor((node) => Node.isArrowFunction(node) || Node.isFunctionExpression(node) || Node.isFunctionDeclaration(node) || Node.isMethodDeclaration(node));
  const scopeBody = scope && (Node.isArrowFunction(scope) || Node.isFunctionExpression(scope) || Node.isFunctionDeclaration(scope) || Node.isMethodDeclaration(scope)) ? scope.getBody() : undefined;
  const plugin = scopeBody && Node.isBlock(scopeBody) && scope?.getParameters().some((p) => p.getName() === name);
  // The statement holding the route, in the block (or file) it stands in.
  const statement = route.getFirstAncestor((node) => {
    const parent = node.getParent();
    return parent !== undefined && (Node.isBlock(parent) || Node.isSourceFile(parent));
  });
  const parent = statement?.getParent();
  const block: Block | SourceFile | undefined = plugin && scopeBody && Node.isBlock(scopeBody) ? scopeBody : parent && (Node.isBlock(parent) || Node.isSourceFile(parent)) ? parent : undefined;
  // An arrow returning the route call (`(app) => app.post(…)`) has no statement of its own to put the hook beside.
  if (!block || (scope && !(scopeBody && Node.isBlock(scopeBody)))) return step(manual);
  const searched = scopeBody ?? sf;
  if (searched.getDescendantsOfKind(SyntaxKind.CallExpression).some(isCloseHook)) return { edits: [], manual: [] };
  if (!ensureNamedImport(sf, context.style.specifier('instance'), CLOSE)) return step(`the file already has its own binding named "${CLOSE}"; ${manual}`);
  // First in the plugin; elsewhere just before the route's statement (found again: an import added at the top of the
  // file moved it down), above the comments over it, as they speak of that statement.
  const statements = block.getStatementsWithComments();
  let index = plugin ? 0 : statements.findIndex((candidate) => candidate.containsRange(route.getPos(), route.getEnd()));
  if (index < 0) return step(manual);
  while (index > 0 && Node.isCommentStatement(statements[index - 1])) index--;
  const quote = quoteOf(sf);
  block.insertStatements(index, fitStatement(sf, `${name}.addHook(${quote}onClose${quote}, ${CLOSE});`));
  return { edits: [{ action: where.action, file: where.file, summary: `closes the store's pool with the app: ${name}.addHook('onClose', ${CLOSE})` }], manual: [] };
}

/**
 * NestJS: a value provider beside `...idempotencyProviders(idempotency)` in the root module,
 * `{ provide: 'closeIdempotency', useValue: { onApplicationShutdown: closeIdempotency } }`. Nest calls the lifecycle
 * hooks of every static provider instance, a value provider's object included, on app.close() (a test's teardown, or
 * the signal handling enableShutdownHooks() installs). onApplicationShutdown rather than onModuleDestroy: it runs after
 * the HTTP server stopped, so no request still in flight loses its store. Chosen over the root module class or a
 * controller implementing the hook: one array element and one import, nothing of the user's classes changes, and it
 * sits next to the interceptor registration apply already owns there. Returns no edit when it is there already.
 */
export function closeNestWithApp(sf: SourceFile, providers: ArrayLiteralExpression, where: Where & { line: number }, context: TransformContext): { edits: TransformOutcome['edits']; manual: ManualStep[] } {
  if (!context.closeExported) return { edits: [], manual: [] };
  if (providers.getElements().some((element) => element.getText().includes(CLOSE))) return { edits: [], manual: [] };
  const quote = quoteOf(sf);
  const provider = `{ provide: ${quote}${CLOSE}${quote}, useValue: { onApplicationShutdown: ${CLOSE} } }`;
  if (!ensureNamedImport(sf, context.style.specifier('instance'), CLOSE)) {
    return { edits: [], manual: [{ action: where.action, file: where.file, line: where.line, reason: `the file already has its own binding named "${CLOSE}"; add ${provider} (${CLOSE} from the instance module) to the providers by hand, so app.close() ends the store's connections` }] };
  }
  providers.addElement(provider);
  return { edits: [{ action: where.action, file: where.file, summary: `closes the store's pool on application shutdown (providers: onApplicationShutdown → ${CLOSE})` }], manual: [] };
}
