import type { DesignModel, StackDesign } from '../model/types.js';
import type { HttpFramework } from './httpFramework.js';
import { readTemplate } from './readTemplate.js';
import { renderAlerts } from './renderAlerts.js';
import { renderCleanupJob } from './renderCleanupJob.js';
import { renderMigration } from './renderMigration.js';
import { renderProviders } from './renderProviders.js';
import { renderReadme } from './renderReadme.js';
import { renderSettings } from './renderSettings.js';
import { renderTests } from './renderTests.js';
import { renderWiring } from './renderWiring.js';
import { buildScaffoldView } from './scaffoldView.js';
import { POSTGRES_RUNTIME_FILES, type StaticFile } from './typescriptRuntime.js';
import type { CodeExcerpt, ExcerptId, ScaffoldFile, ScaffoldRole, ScaffoldTarget, TargetContext } from './types.js';

const MIGRATION = 'migrations/001_create_idempotency_store.sql';

export interface PostgresHttpTargetOptions {
  readonly id: string;
  readonly label: string;
  readonly supports: (stack: StackDesign) => boolean;
  readonly framework: HttpFramework;
  /** The framework adapter template, copied beside the shared runtime; the document embeds it as the middleware. */
  readonly adapter: StaticFile;
  /** How the generated README describes index.ts. */
  readonly wiringPurpose?: string;
}

/** A TypeScript + PostgreSQL target for one HTTP framework: the shared runtime, one adapter, rendered wiring and tests. */
export function postgresHttpTarget(options: PostgresHttpTargetOptions): ScaffoldTarget {
  const { framework, adapter } = options;
  const staticFiles = [...POSTGRES_RUNTIME_FILES, adapter];
  return {
    id: options.id,
    label: options.label,
    supports: options.supports,

    files(model: DesignModel, context?: TargetContext): ScaffoldFile[] {
      const view = buildScaffoldView(model);
      const files: ScaffoldFile[] = staticFiles.map((file) => ({ path: file.path, contents: readTemplate(file.template), class: 'scaffold', role: file.role, formatted: true }));
      const purposes = staticFiles.map((file) => ({ name: file.path, purpose: file.purpose }));
      const add = (path: string, contents: string, role: ScaffoldRole, purpose: string, fileClass: ScaffoldFile['class'] = 'scaffold') => {
        files.push({ path, contents, class: fileClass, role });
        purposes.push({ name: path, purpose });
      };
      add(MIGRATION, renderMigration(view), 'ddl', 'the store table, partial indexes and saga step table');
      add('settings.ts', renderSettings(view), 'core', 'every value the design decided (leases, retention, statuses)');
      add('index.ts', renderWiring(view, framework), 'middleware', options.wiringPurpose ?? 'createIdempotency(): store, core and the hooks for each route');
      add('cleanup-job.ts', renderCleanupJob(view), 'cleanup', 'runnable cleanup for cron');
      const providers = renderProviders(view);
      if (providers) add('providers.ts', providers, 'providers', 'provider keys derived from the local key');
      add('idempotency-alerts.yml', renderAlerts(view), 'alerts', 'Prometheus alert rules (regenerated)', 'managed');
      add('idempotency.test.ts', renderTests(view, `./${MIGRATION}`, framework, { runner: context?.testRunner, moduleSystem: context?.testModuleSystem, scaffoldDir: context?.scaffoldDir }), 'tests', 'the scenarios against a real PostgreSQL');
      purposes.sort((a, b) => (a.name < b.name ? -1 : 1));
      files.push({ path: 'README.md', contents: renderReadme(view, purposes, framework), class: 'scaffold', role: 'readme' });
      return files;
    },

    excerpts(_model: DesignModel, files: readonly ScaffoldFile[]): Partial<Record<ExcerptId, CodeExcerpt>> {
      const byPath = new Map(files.map((file) => [file.path, file]));
      const excerpts: Partial<Record<ExcerptId, CodeExcerpt>> = {};
      const set = (id: ExcerptId, path: string, language: string) => {
        const file = byPath.get(path);
        if (file) excerpts[id] = { language, code: file.contents, path };
      };
      set('ddl', MIGRATION, 'sql');
      set('middleware', adapter.path, 'typescript');
      set('fingerprint', 'fingerprint.ts', 'typescript');
      set('cleanup', 'cleanup.ts', 'typescript');
      set('tests', 'idempotency.test.ts', 'typescript');
      set('monitoring', 'idempotency-alerts.yml', 'yaml');
      return excerpts;
    },
  };
}
