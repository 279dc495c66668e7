import { Node, SyntaxKind, type CallExpression, type ObjectLiteralExpression, type SourceFile } from 'ts-morph';
import { appendProperty, ensureNamedImport, isCommonJs } from '../sourceFile.js';
import { keyFunctionStatement, moduleBindings, requiredModule } from './bindings.js';
import { FORM_KEY_LOCAL, KEY_FUNCTION, type ViewsKeyResult, type ViewsKeyWiring, type ViewsSource } from './types.js';

/** The view plugin and its former name: both take `defaultContext`, merged under every `reply.view()`'s own data. */
const VIEW_PLUGINS = new Set(['@fastify/view', 'point-of-view']);

const PROPERTY = `${FORM_KEY_LOCAL}: ${KEY_FUNCTION}`;
const CONTEXT = `defaultContext: { ${PROPERTY} }`;

type Plan = { kind: 'present' } | { kind: 'context' } | { kind: 'options' } | { kind: 'manual'; reason: string };

/**
 * Fastify: every `register(view, { engine, … })` of @fastify/view (or point-of-view) gets `idempotencyKey:
 * newIdempotencyKey` in its `defaultContext`, which the plugin merges into every template's data. Each registration
 * is its own encapsulated scope, so each gets it. Options apply cannot see into are a step saying what to add.
 */
export const fastifyViewsKey: ViewsKeyWiring = {
  mentions: /['"](?:@fastify\/view|point-of-view)['"]/,
  wire(sources: readonly ViewsSource[]): ViewsKeyResult {
    const result: ViewsKeyResult = { changed: [], manual: [] };
    let registered = false;
    for (const source of sources) {
      const { sf, specifier } = source.parse();
      const plans = registrations(sf).map((call) => ({ line: call.getStartLineNumber(), plan: planOf(call) }));
      registered ||= plans.length > 0;
      for (const { line, plan } of plans) if (plan.kind === 'manual') result.manual.push({ file: source.file, line, reason: plan.reason });
      if (!plans.some(({ plan }) => plan.kind === 'context' || plan.kind === 'options')) continue;
      if (!ensureNamedImport(sf, specifier, KEY_FUNCTION)) {
        result.manual.push({ file: source.file, line: plans[0]!.line, reason: `the file already binds "${KEY_FUNCTION}": add \`${CONTEXT}\` to the options @fastify/view is registered with, ${KEY_FUNCTION} from the scaffold's index` });
        continue;
      }
      // Each edit replaces an options object: find the registrations again on the tree as it now is.
      plans.forEach(({ plan }, i) => {
        const options = registrations(sf)[i]?.getArguments()[1];
        if (!options || !Node.isObjectLiteralExpression(options)) return;
        if (plan.kind === 'options') appendProperty(options, CONTEXT);
        if (plan.kind === 'context') appendProperty(contextObject(options)!, PROPERTY);
      });
      if (isCommonJs(source.file, source.text)) requireFirst(sf);
      result.changed.push({ file: source.file, text: sf.getFullText(), summary: `gives the templates ${FORM_KEY_LOCAL}(), a fresh key per rendered form (${PROPERTY} in @fastify/view's defaultContext)` });
    }
    if (!registered) {
      result.manual.push({ reason: `no @fastify/view registration (\`app.register(view, { engine, … })\`) found to give its templates the key function: add \`${CONTEXT}\` to the options you register @fastify/view (or point-of-view) with, ${KEY_FUNCTION} from the scaffold's index` });
    }
    return result;
  },
};

/** `x.register(view, …)`, with the plugin as the file imports or requires it, or `require('@fastify/view')` in place. */
function registrations(sf: SourceFile): CallExpression[] {
  const plugins = new Set(moduleBindings(sf, VIEW_PLUGINS));
  for (const declaration of sf.getImportDeclarations()) {
    if (declaration.isTypeOnly() || !VIEW_PLUGINS.has(declaration.getModuleSpecifierValue())) continue;
    for (const named of declaration.getNamedImports()) if (!named.isTypeOnly()) plugins.add(named.getAliasNode()?.getText() ?? named.getName());
  }
  return sf.getDescendantsOfKind(SyntaxKind.CallExpression).filter((call) => {
    const callee = call.getExpression();
    const [plugin] = call.getArguments();
    if (!Node.isPropertyAccessExpression(callee) || callee.getName() !== 'register' || !plugin) return false;
    return (Node.isIdentifier(plugin) && plugins.has(plugin.getText())) || VIEW_PLUGINS.has(requiredModule(plugin) ?? '');
  });
}

/** `defaultContext: { … }` of the options, when it is written in place. */
function contextObject(options: ObjectLiteralExpression): ObjectLiteralExpression | undefined {
  const property = options.getProperty('defaultContext');
  const value = property && Node.isPropertyAssignment(property) ? property.getInitializer() : undefined;
  return value && Node.isObjectLiteralExpression(value) ? value : undefined;
}

function planOf(call: CallExpression): Plan {
  const options = call.getArguments()[1];
  if (!options || !Node.isObjectLiteralExpression(options)) {
    return { kind: 'manual', reason: `@fastify/view is registered here with options apply cannot edit in place: add \`${CONTEXT}\` to them (or \`${PROPERTY}\` to the defaultContext they have), ${KEY_FUNCTION} from the scaffold's index` };
  }
  if (!options.getProperty('defaultContext')) {
    if (options.getProperties().some((p) => Node.isSpreadAssignment(p))) {
      return { kind: 'manual', reason: `the options @fastify/view is registered with spread another object, which may hold a defaultContext: add \`${PROPERTY}\` to that defaultContext (or \`${CONTEXT}\` to the options), ${KEY_FUNCTION} from the scaffold's index` };
    }
    return { kind: 'options' };
  }
  const context = contextObject(options);
  if (!context) return { kind: 'manual', reason: `the defaultContext @fastify/view is registered with here is no object literal apply can extend: add \`${PROPERTY}\` to it, ${KEY_FUNCTION} from the scaffold's index` };
  return context.getProperty(FORM_KEY_LOCAL) ? { kind: 'present' } : { kind: 'context' };
}

/**
 * CommonJS: the `require` binding the function went after the file's last top-level require; a registration
 * evaluated before it would read the `const` in its dead zone at startup. Moves the require above the first
 * top-level statement holding a registration.
 */
function requireFirst(sf: SourceFile): void {
  const statements = sf.getStatementsWithComments();
  const required = keyFunctionStatement(statements);
  const first = statements.findIndex((s) => registrations(sf).some((call) => call.getFirstAncestor((a) => a.getParent() === sf) === s || call.getParent() === s));
  if (required < 0 || first < 0 || required < first) return;
  const text = statements[required]!.getText();
  statements[required]!.remove();
  sf.insertStatements(first, text);
}
