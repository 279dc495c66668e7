import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { buildDesign } from '../../src/model/index.js';
import { NEXT } from '../../src/scaffold/frameworks/next.js';
import { renderReadme } from '../../src/scaffold/renderReadme.js';
import { buildScaffoldView } from '../../src/scaffold/scaffoldView.js';
import { NOW } from '../helpers/fixtures.js';

function view(actions: Array<Record<string, unknown>>, framework = 'express') {
  const config = parseConfig(
    JSON.stringify({ actions, stack: { language: 'typescript', framework, database: 'postgres' }, concurrency: 'multi-instance', retention: '72h', detectionLatency: '50ms' }),
  );
  return buildScaffoldView(buildDesign(config, undefined, { now: NOW }));
}

describe('README wiring for actions without a route of their own', () => {
  it('mounts plain routes only, and says where a GraphQL mutation claims its key', () => {
    const readme = renderReadme(
      view([
        { name: 'payOrder', trigger: 'http', route: 'POST /payOrder', transport: 'graphql', significantFields: ['orderId'], scope: 'global' },
        { name: 'createOrder', trigger: 'http', route: 'POST /orders', significantFields: ['sku'] },
      ]),
      [],
    );
    expect(readme).toContain("app.post('/orders', idempotency.createOrder, createOrderHandler);");
    expect(readme).not.toContain("app.post('/payOrder'");
    expect(readme).toContain('`payOrder` (GraphQL mutation, no route of its own): claim inside the resolver');
    expect(readme).toContain("`scope` = `'global'`");
    expect(readme).toContain('computeFingerprint({ method: \'POST\', route: ACTIONS.payOrder.route');
  });

  it('wraps a Server Action with the Next.js adapter instead of a route handler', () => {
    const readme = renderReadme(view([{ name: 'placeOrder', trigger: 'http', route: 'POST /placeOrder', transport: 'server-action', significantFields: ['sku'] }], 'nextjs'), [], NEXT);
    expect(readme).not.toContain("withIdempotency('placeOrder'");
    expect(readme).toContain("idempotency.idempotentAction('placeOrder', placeOrderImpl)");
    expect(readme).toContain('`keyedAction(intent, placeOrder)` for `useActionState`');
  });
});
