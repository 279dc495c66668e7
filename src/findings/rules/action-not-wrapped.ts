import type { ProjectReport, Rule } from '../types.js';
import { actionSource } from '../configSources.js';
import { TRANSPORT_LABELS, transportName } from '../../model/labels.js';
import { referenceFramework } from '../../scaffold/registry.js';

/** The design and the generated layer protect nothing until the handler actually goes through them. */
export const actionNotWrapped: Rule = {
  id: 'action-not-wrapped',
  severity: 'error',
  title: 'Configured action not wrapped by the generated protection',
  description:
    'idempotency.config.json lists the action and the scaffold generated its protection, but no file outside the ' +
    'generated folder imports that layer and names the action, so requests still reach the handler unprotected.',
  fix: 'Mount the generated middleware on the route (e.g. `router.post(path, idempotency.middleware.<action>, handler)`), or the interceptor/hook for your framework; the generated README shows the line.',
  docsAnchor: 'finding-action-not-wrapped',
  checkProject(ctx) {
    const config = ctx.config;
    if (!config || config.scaffold === false) return [];
    const dir = config.scaffold.dir.replace(/^\.\//, '').replace(/\/$/, '');
    const base = dir.split('/').pop() ?? dir;
    const importsLayer = new RegExp(`(from\\s+|import\\(|require\\()\\s*['"][^'"]*\\b${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(/[^'"]*)?['"]`);
    const users = ctx.sources.filter((s) => !s.rel.startsWith(`${dir}/`) && importsLayer.test(s.text));
    // The scaffold is the plain idempotent(fn) wrapper (no web framework, or an unknown one serving no plain route).
    const plain = referenceFramework(config.stack, config.actions) === 'none';
    const out: ProjectReport[] = [];
    for (const action of config.actions) {
      if (action.trigger !== 'http') continue;
      if (users.some((s) => new RegExp(`\\b${action.name.replace(/[^\w$]/g, '')}\\b`).test(s.text))) continue;
      // Without the handler in the project (a design made before the code, a source in another repository) there is nothing to judge.
      const at = actionSource(ctx, action);
      if (!at.source) continue;
      const where = { file: at.source.rel, line: at.line };
      out.push({
        ...where,
        action: action.name,
        fix: ROUTING_CONTROLLERS.test(at.source.text) ? decoratedFix(action.name) : config.stack.framework === 'nestjs' && NEST_RESOLVERS.test(at.source.text) ? nestResolverFix(action.name) : GRAPHQL_RESOLVERS.test(at.source.text) ? (plain ? plainResolverFix(action.name) : resolverFix(action.name, action.scope === 'global')) : action.transport === 'server-action' ? serverActionFix(action.name) : wiringFix(config.stack.framework, action.name),
        evidence: at.source.text.split('\n')[at.line - 1]?.trim() ?? '',
        message: `Action ${action.name}${action.transport ? ` (${TRANSPORT_LABELS[action.transport]} ${transportName(action)})` : action.route ? ` (${action.route})` : ''} is configured but no file imports the generated layer in ${dir}/ and uses it for ${action.name}.`,
      });
    }
    return out;
  },
};

const ROUTING_CONTROLLERS = /\bfrom\s+['"]routing-controllers['"]|require\(\s*['"]routing-controllers['"]\s*\)/;

/** A routing-controllers controller: its @UseBefore middleware would run before body parsing and authorization. */
function decoratedFix(action: string): string {
  const name = action.replace(/[^\w$]/g, '');
  return `Claim the key inside the controller method: routing-controllers runs \`@UseBefore\` middleware before its body parser and authorizationChecker, so the generated middleware would see neither body nor caller. \`idempotency-builder apply\` does it for an async TypeScript method: the key from \`@HeaderParam('Idempotency-Key', { type: String })\`, the caller from \`@CurrentUser()\`, the response from \`@Res()\` (for the Idempotent-Replayed and Retry-After headers), and the body run through \`runOnceInController('${name}', …)\` from the scaffold; where it cannot, it says why.`;
}

const GRAPHQL_RESOLVERS = /\bfrom\s+['"](?:@nestjs\/graphql|type-graphql)['"]|\bMutation\s*:\s*\{/;
const NEST_RESOLVERS = /\bfrom\s+['"]@nestjs\/graphql['"]/;

/** A NestJS resolver: the generated interceptor protects a marked mutation as it does a controller route. */
function nestResolverFix(action: string): string {
  const name = action.replace(/[^\w$]/g, '');
  return `Mark the resolver method with \`@Idempotent(ACTIONS.${name})\` under its \`@Mutation()\`: the generated interceptor (registered with \`...idempotencyProviders(idempotency)\` in the root module) reads the Idempotency-Key header from the request in the GraphQL context and fingerprints the mutation's arguments; \`idempotency-builder apply\` can make the edit.`;
}

/** A GraphQL mutation: it arrives at the one GraphQL endpoint with every other operation. */
function resolverFix(action: string, global = false): string {
  const name = action.replace(/[^\w$]/g, '');
  return `Claim the key inside the resolver: a mutation arrives at the one GraphQL endpoint with every other operation, so no route middleware can tell it apart. Run its work through \`idempotency.core.runOnce(ACTIONS.${name}, …)\` with the key from the request's Idempotency-Key header (through your GraphQL context) and ${global ? "the scope 'global' (its keys belong to no caller)" : 'the caller from the context'}; \`idempotency-builder apply\` lists the steps.`;
}

/** A GraphQL mutation on the plain wrapper: the resolver's body runs inside it. */
function plainResolverFix(action: string): string {
  const name = action.replace(/[^\w$]/g, '');
  return `Run the resolver's body inside the plain wrapper: \`return idempotency.${name}({ key: <the Idempotency-Key header of the request in your GraphQL context>, fingerprintInput: args }, async () => …)\`, with \`idempotency\` from the instance module; \`idempotency-builder apply\` makes the edit where it can tell where the context holds the request (graphql-yoga, or an Apollo Server context function that passes \`req\` on).`;
}

/** A Server Action: its export takes the key as its first argument, which its callers pass. */
function serverActionFix(action: string): string {
  const name = action.replace(/[^\w$]/g, '');
  return `Export the action through the generated wrapper, \`export const ${name} = idempotency.idempotentAction('${name}', …)\`, so it takes the key as its first argument, and have its callers pass one per user intent (\`useIdempotencyKey()\`; \`keyedAction(intent, ${name})\` for useActionState); \`idempotency-builder apply\` can make both edits.`;
}

/** The one line that wires an action in, as the generated README shows it for the project's framework. */
function wiringFix(framework: string, action: string): string {
  const name = action.replace(/[^\w$]/g, '');
  const line: Record<string, string> = {
    express: `router.post(path, idempotency.${name}, handler)`,
    fastify: `app.post(path, { ...idempotency.${name} }, handler)`,
    nestjs: `@Idempotent(ACTIONS.${name}) on the controller method`,
    koa: `router.post(path, idempotency.${name}, handler)`,
    hono: `app.post(path, idempotency.${name}, handler)`,
    nextjs: `export const POST = idempotency.withIdempotency('${name}', handler) (or idempotentAction for a Server Action)`,
  };
  const example = line[framework];
  return example
    ? `Wire the generated protection into the handler (\`${example}\`); the generated README shows the line, and \`idempotency-builder apply\` can make the edit.`
    : 'Wrap the handler with the generated protection (the generated README shows the line for your framework); `idempotency-builder apply` can make the edit where it knows the framework.';
}
