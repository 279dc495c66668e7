import type { DesignModel, StackDesign } from '../../model/types.js';
import { readTemplate } from '../readTemplate.js';
import { renderAlerts } from '../renderAlerts.js';
import { renderCleanupJob } from '../renderCleanupJob.js';
import { renderMigration } from '../renderMigration.js';
import { renderProviders } from '../renderProviders.js';
import { renderReadme } from '../renderReadme.js';
import { renderSettings } from '../renderSettings.js';
import { renderTests } from '../renderTests.js';
import { renderWiring } from '../renderWiring.js';
import { buildScaffoldView } from '../scaffoldView.js';
import type { CodeExcerpt, ExcerptId, ScaffoldFile, ScaffoldRole, ScaffoldTarget } from '../types.js';

const MIGRATION = 'migrations/001_create_idempotency_store.sql';

/** Runtime files shared by every TypeScript target: copied verbatim. */
const STATIC_FILES: ReadonlyArray<{ path: string; template: string; role: ScaffoldRole; purpose: string }> = [
  { path: 'types.ts', template: 'typescript/core/types.ts', role: 'core', purpose: 'shared types, the store contract and its errors' },
  { path: 'core.ts', template: 'typescript/core/core.ts', role: 'core', purpose: 'claim → decide → execute → complete/release, framework-agnostic' },
  { path: 'fingerprint.ts', template: 'typescript/core/fingerprint.ts', role: 'fingerprint', purpose: 'canonical JSON, SHA-256 fingerprint, constant-time compare' },
  { path: 'keys.ts', template: 'typescript/core/keys.ts', role: 'core', purpose: 'Idempotency-Key parsing and server-derived keys' },
  { path: 'problems.ts', template: 'typescript/core/problems.ts', role: 'core', purpose: 'problem+json bodies for every refusal' },
  { path: 'pgStore.ts', template: 'typescript/postgres/pgStore.ts', role: 'store', purpose: 'PostgreSQL store: one-statement claim, fenced writes, bounded calls' },
  { path: 'pool.ts', template: 'typescript/postgres/pool.ts', role: 'store', purpose: 'a pg Pool with every wait bounded' },
  { path: 'saga.ts', template: 'typescript/postgres/saga.ts', role: 'saga', purpose: 'saga step tracker: resume and compensation' },
  { path: 'cleanup.ts', template: 'typescript/postgres/cleanup.ts', role: 'cleanup', purpose: 'batched deletion of expired records' },
  { path: 'express.ts', template: 'typescript/express/express.ts', role: 'middleware', purpose: 'Express middleware: hold, record, then send' },
  { path: 'metrics.ts', template: 'typescript/metrics/metrics.ts', role: 'metrics', purpose: 'prom-client metrics fed by the core' },
];

export const expressPostgresTarget: ScaffoldTarget = {
  id: 'typescript-express-postgres',
  label: 'Express + PostgreSQL (TypeScript or JavaScript)',
  // The agnostic design uses the TypeScript + PostgreSQL reference, so it gets this code as its example. JavaScript
  // projects get the same files with the types stripped (generateScaffold does that for every target).
  supports: (stack: StackDesign) => stack.storeDatabase === 'postgres' && (stack.framework === 'express' || stack.agnostic),

  files(model: DesignModel): ScaffoldFile[] {
    const view = buildScaffoldView(model);
    const files: ScaffoldFile[] = STATIC_FILES.map((file) => ({ path: file.path, contents: readTemplate(file.template), class: 'scaffold', role: file.role, formatted: true }));
    const purposes = STATIC_FILES.map((file) => ({ name: file.path, purpose: file.purpose }));
    const add = (path: string, contents: string, role: ScaffoldRole, purpose: string, fileClass: ScaffoldFile['class'] = 'scaffold') => {
      files.push({ path, contents, class: fileClass, role });
      purposes.push({ name: path, purpose });
    };
    add(MIGRATION, renderMigration(view), 'ddl', 'the store table, partial indexes and saga step table');
    add('settings.ts', renderSettings(view), 'core', 'every value the design decided (leases, retention, statuses)');
    add('index.ts', renderWiring(view), 'middleware', 'createIdempotency(): store, core and one middleware per route');
    add('cleanup-job.ts', renderCleanupJob(view), 'cleanup', 'runnable cleanup for cron');
    const providers = renderProviders(view);
    if (providers) add('providers.ts', providers, 'providers', 'provider keys derived from the local key');
    add('idempotency-alerts.yml', renderAlerts(view), 'alerts', 'Prometheus alert rules (regenerated)', 'managed');
    add('idempotency.test.ts', renderTests(view, `./${MIGRATION}`), 'tests', 'the scenarios against a real PostgreSQL');
    purposes.sort((a, b) => (a.name < b.name ? -1 : 1));
    files.push({ path: 'README.md', contents: renderReadme(view, purposes), class: 'scaffold', role: 'readme' });
    return files;
  },

  excerpts(_model: DesignModel, files: readonly ScaffoldFile[]): Partial<Record<ExcerptId, CodeExcerpt>> {
    const byPath = new Map(files.map((file) => [file.path, file]));
    const whole = (path: string, language: string): CodeExcerpt | undefined => {
      const file = byPath.get(path);
      return file ? { language, code: file.contents, path } : undefined;
    };
    const excerpts: Partial<Record<ExcerptId, CodeExcerpt>> = {};
    const set = (id: ExcerptId, excerpt: CodeExcerpt | undefined) => {
      if (excerpt) excerpts[id] = excerpt;
    };
    set('ddl', whole(MIGRATION, 'sql'));
    set('middleware', whole('express.ts', 'typescript'));
    set('fingerprint', whole('fingerprint.ts', 'typescript'));
    set('cleanup', whole('cleanup.ts', 'typescript'));
    set('tests', whole('idempotency.test.ts', 'typescript'));
    set('monitoring', whole('idempotency-alerts.yml', 'yaml'));
    return excerpts;
  },
};
