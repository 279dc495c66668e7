import { printModule } from '../javascript/printModule.js';
import { pushFetchRead, pushFetchType } from '../renderCleanupJob.js';
import type { ModuleType } from '../javascript/transpile.js';
import { quote } from '../tsLiteral.js';
import type { TriggerPlan } from './index.js';

/** How often the job runs and how long a lapsed lease must have been lapsed: the document states both. */
export const RECONCILE_SCHEDULE = '*/15 * * * *';
export const RECONCILE_MIN_STUCK_MS = 60_000;

/**
 * reconcile/job.ts: the runnable job. Stripe is wired from STRIPE_SECRET_KEY (its Search API needs nothing else);
 * Adyen and PayPal need a finder over data only you have (stored notifications, your PayPal client), so their
 * lookups answer 'unknown' (records left, reported) until you fill in the finder. Emitted in the house style
 * (prettier's layout), so generate need not format it. With `javascript`, the same file as JavaScript in that module
 * format, as the compiler and prettier would give it.
 */
export function renderReconcileJob(plan: TriggerPlan, javascript?: ModuleType): string {
  const providers = new Set(plan.reconciled.map((action) => action.provider));
  const imports = [
    providers.has('adyen') ? "import { adyenLookup } from './adyen.js';" : '',
    providers.has('paypal') ? "import { paypalLookup } from './paypal.js';" : '',
    providers.has('stripe') ? "import { stripeLookup } from './stripe.js';" : '',
  ].filter(Boolean);
  const lines = plan.reconciled.map((action) => {
    const key = quote(action.codeName);
    if (action.provider === 'stripe') return `  if (stripe) lookups[${key}] = stripe;`;
    return `  lookups[${key}] = ${action.provider === 'adyen' ? 'adyen' : 'paypal'};`;
  });
  const lookupsType = 'Partial<Record<string, ProviderLookup>>';
  const jsLookupsType = `Partial<Record<string, import('./reconcile.js').ProviderLookup>>`;
  const code = `// Reconciliation: resolves records stuck PROCESSING past their lease (crashed workers, "outcome unknown") by asking
// the provider with the key we derived, then completes or releases them. Read-only at the provider: it never charges.
// Schedule: ${RECONCILE_SCHEDULE} (every 15 minutes). Usage: DATABASE_URL=postgres://... node reconcile/job.js [--dry-run]
// Overlapping runs are safe: each record is taken over with a fresh fencing token before it is written.
import { PgIdempotencyStore } from '../pgStore.js';
import { createPool } from '../pool.js';
import { ACTIONS, POLICY } from '../settings.js';
import { reconcileStuck${javascript ? '' : ', type ProviderLookup'} } from './reconcile.js';
${imports.join('\n')}
${pushFetchType(javascript)}
const url = process.env.DATABASE_URL;
const dryRun = process.argv.includes('--dry-run');
if (!url) {
  console.error('reconcile-job: DATABASE_URL is not set');
  process.exitCode = 2;
}
${providers.has('adyen') ? `
// Fill in: look the merchant reference up in the Adyen notifications you stored (AUTHORISATION events carry it).
const adyen = adyenLookup(async () => 'unknown');
` : ''}${providers.has('paypal') ? `
// Fill in: ask PayPal with your client (a create repeated with the same PayPal-Request-Id returns the original).
const paypal = paypalLookup(async () => 'unknown');
` : ''}
${
  javascript
    ? `/** @returns {${jsLookupsType}} */
function lookupsFromEnvironment() {
  /** @type {${jsLookupsType}} */
  const lookups = {};`
    : `function lookupsFromEnvironment(): ${lookupsType} {
  const lookups: ${lookupsType} = {};`
}
${providers.has('stripe') ? `  const secretKey = process.env.STRIPE_SECRET_KEY;
  const stripe = secretKey ? stripeLookup({ secretKey, baseUrl: process.env.STRIPE_API_BASE }) : undefined;
  if (!stripe)
    console.error('reconcile-job: STRIPE_SECRET_KEY is not set; Stripe records are reported, not resolved');
` : ''}${lines.join('\n')}
  return lookups;
}

${
  javascript
    ? `/**
 * @param {string} databaseUrl
 * @returns {Promise<void>}
 */
async function main(databaseUrl) {`
    : 'async function main(databaseUrl: string): Promise<void> {'
}
  const pool = createPool(
    databaseUrl,
    {
      acquireTimeoutMs: POLICY.acquireTimeoutMs,
      statementTimeoutMs: Math.max(POLICY.statementTimeoutMs, 30_000),
    },
    2,
  );
  try {
    const store = new PgIdempotencyStore({
      pool,
      table: POLICY.table,
      stepTable: POLICY.stepTable,
      timeoutMs: Math.max(POLICY.statementTimeoutMs, 30_000),
      acquireTimeoutMs: POLICY.acquireTimeoutMs,
    });
    const report = await reconcileStuck({
      store,
      policy: POLICY,
      actions: ACTIONS,
      lookups: lookupsFromEnvironment(),
      dryRun,
      minStuckMs: Number(process.env.RECONCILE_MIN_STUCK_MS ?? ${RECONCILE_MIN_STUCK_MS}),
    });
    for (const result of report.results) console.log(JSON.stringify(result));
    // idempotency_reconciled_total per outcome, in Prometheus text format (pushed when PUSHGATEWAY_URL is set).
    const counts = ${javascript ? '/** @type {Map<string, number>} */ (new Map())' : 'new Map<string, number>()'};
    for (const result of report.results) counts.set(result.outcome, (counts.get(result.outcome) ?? 0) + 1);
    const sample = Array.from(
      counts,
      ([outcome, n]) => \`idempotency_reconciled_total{outcome="\${outcome}",dry_run="\${dryRun}"} \${n}\`,
    ).join('\\n');
    console.log(
      \`reconcile-job: \${report.results.length} stuck records\${dryRun ? ' (dry run: nothing written)' : ''}\`,
    );
    if (sample) console.log(sample);
    const gateway = process.env.PUSHGATEWAY_URL;
    if (gateway && sample) {
      // Read by shape: typings before @types/node 18 (and no DOM lib) declare no fetch global.
      const push = ${pushFetchRead(javascript)};
      if (!push) throw new Error('PUSHGATEWAY_URL is set, but this Node has no fetch (18 or later has)');
      const response = await push(\`\${gateway.replace(/\\/+$/, '')}/metrics/job/idempotency_reconcile\`, {
        method: 'POST',
        body: \`\${sample}\\n\`,
      });
      if (!response.ok) console.error(\`reconcile-job: Pushgateway answered \${response.status}\`);
    }
  } catch (error) {
    console.error('reconcile-job failed:', error instanceof Error ? error.message : error);
    process.exitCode = 1;
  } finally {
    await pool.end();
  }
}

if (url) void main(url);
`;
  return javascript ? printModule(code, javascript) : code;
}
