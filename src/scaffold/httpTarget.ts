import type { DesignModel, StackDesign } from '../model/types.js';
import type { HttpFramework } from './httpFramework.js';
import { readTemplate } from './readTemplate.js';
import { renderAlerts } from './renderAlerts.js';
import { renderProviders } from './renderProviders.js';
import { renderReadme } from './renderReadme.js';
import { renderSettings } from './renderSettings.js';
import { renderTests } from './renderTests.js';
import { renderWiring } from './renderWiring.js';
import { buildScaffoldView, type ScaffoldView } from './scaffoldView.js';
import type { StoreModule } from './stores/types.js';
import { triggerFiles } from './triggers/index.js';
import { CONTRACT_FILE, CORE_RUNTIME_FILES, type StaticFile } from './typescriptRuntime.js';
import type { CodeExcerpt, ExcerptId, ScaffoldFile, ScaffoldRole, ScaffoldTarget, TargetContext } from './types.js';

export interface HttpTargetOptions {
  readonly id: string;
  readonly label: string;
  readonly supports: (stack: StackDesign) => boolean;
  readonly framework: HttpFramework;
  /** The framework adapter template, copied beside the shared runtime; the document embeds it as the middleware. */
  readonly adapter: StaticFile;
  /** How the generated README describes index.ts. */
  readonly wiringPurpose?: string;
}

const CONTRACT_NOTE = (runner: string) =>
  `The store contract suite (\`store-contract.ts\`, the black-box tests every store passes) is written for Vitest or Jest, so it is not part of this ${runner} project's scaffold; copy it from a Vitest project of the same version to run it against a store of your own.`;

/** Vitest's API as Jest's globals spell it: the same names, imported from @jest/globals, with a longer time-out. */
function forRunner(code: string, runner: string, suite = false): string {
  if (runner !== 'jest' || !code.includes("from 'vitest';")) return code;
  const out = suite ? code.replace(" } from 'vitest';", ", jest } from '@jest/globals';") : code.replace("from 'vitest';", "from '@jest/globals';");
  return suite ? `${out.trimEnd()}\n\n// The contract talks to a real store; a loaded CI machine needs more than Jest's default 5 s.\njest.setTimeout(30_000);\n` : out;
}

const TRIGGER_SUITES_NOTE = (runner: string) =>
  `The webhook, consumer, scheduled-job and reconciliation suites are written for Vitest, so none was generated for this project's runner (${runner}); the runtime above is the same, and \`idempotency.test.ts\` covers the HTTP scenarios in ${runner}.`;

/**
 * A TypeScript target composed of one HTTP framework adapter and one store: the shared core, the store's runtime
 * files and DDL, the adapter, and the wiring, README and tests rendered for the pair.
 */
export function httpTarget(options: HttpTargetOptions, store: StoreModule): ScaffoldTarget {
  const { framework, adapter } = options;
  const staticFiles = [...CORE_RUNTIME_FILES, ...store.files, store.metrics, adapter, CONTRACT_FILE];
  return {
    id: options.id,
    label: options.label,
    supports: options.supports,

    files(model: DesignModel, context?: TargetContext): ScaffoldFile[] {
      const view = storeView(buildScaffoldView(model), store);
      const runner = context?.testRunner ?? 'vitest';
      // The store contract is written against Vitest's API, which Jest's globals share; node:test and Mocha projects
      // get no copy (it would import a runner they do not have), and the README says so.
      const withContract = runner === 'vitest' || runner === 'jest';
      const shipped = withContract ? staticFiles : staticFiles.filter((file) => file !== CONTRACT_FILE);
      const files: ScaffoldFile[] = shipped.map((file) => ({ path: file.path, contents: forRunner(readTemplate(file.template), runner), class: 'scaffold', role: file.role, formatted: true }));
      const purposes = shipped.map((file) => ({ name: file.path, purpose: file.purpose }));
      const add = (path: string, contents: string, role: ScaffoldRole, purpose: string, fileClass: ScaffoldFile['class'] = 'scaffold') => {
        files.push({ path, contents, class: fileClass, role });
        purposes.push({ name: path, purpose });
      };
      if (store.migration) add(store.migration.path, store.migration.render(view), 'ddl', store.migration.purpose);
      add('settings.ts', renderSettings(view), 'core', 'every value the design decided (leases, retention, statuses)');
      add('index.ts', renderWiring(view, framework, store), 'middleware', options.wiringPurpose ?? 'createIdempotency(): store, core and the hooks for each route');
      if (store.cleanupJob) add('cleanup-job.ts', store.cleanupJob(view), 'cleanup', 'runnable cleanup for cron');
      const providers = renderProviders(view);
      if (providers) add('providers.ts', providers, 'providers', 'provider keys derived from the local key');
      add('idempotency-alerts.yml', renderAlerts(view), 'alerts', 'Prometheus alert rules (regenerated)', 'managed');
      add('idempotency.test.ts', renderTests(view, `./${store.migration?.path ?? ''}`, framework, store, { runner: context?.testRunner, moduleSystem: context?.testModuleSystem, scaffoldDir: context?.scaffoldDir }), 'tests', `the scenarios against a real ${store.label}`);
      if (withContract) add('store-contract.test.ts', forRunner(store.renderContractTest(view), runner, true), 'tests', `the store contract suite run against the ${store.label} store`);
      // Webhook, consumer and cron processors run on every store (they use only the IdempotencyStore interface);
      // triggerFiles() leaves out what needs more (the reconciliation job without listStuck, the PostgreSQL ordering
      // table and suites) and TRIGGERS.md says so. The trigger suites are written for Vitest; another runner gets
      // the runtime and this note instead of a suite its runner cannot load.
      for (const file of triggerFiles(model, framework.module, store.id)) {
        if (file.role === 'tests' && runner !== 'vitest') continue;
        const contents = file.path === 'TRIGGERS.md' && runner !== 'vitest' ? `${file.contents.trimEnd()}\n\n${TRIGGER_SUITES_NOTE(runner)}\n` : file.contents;
        add(file.path, contents, file.role, file.purpose);
      }
      purposes.sort((a, b) => (a.name < b.name ? -1 : 1));
      const readme = renderReadme(view, purposes, framework, store);
      files.push({ path: 'README.md', contents: withContract ? readme : `${readme.trimEnd()}\n\n${CONTRACT_NOTE(runner)}\n`, class: 'scaffold', role: 'readme' });
      return files;
    },

    excerpts(_model: DesignModel, files: readonly ScaffoldFile[]): Partial<Record<ExcerptId, CodeExcerpt>> {
      const byPath = new Map(files.map((file) => [file.path, file]));
      const excerpts: Partial<Record<ExcerptId, CodeExcerpt>> = {};
      const set = (id: ExcerptId, path: string | undefined, language: string) => {
        const file = path === undefined ? undefined : byPath.get(path);
        if (file) excerpts[id] = { language, code: file.contents, path: file.path };
      };
      set('ddl', store.migration?.path, 'sql');
      set('middleware', adapter.path, 'typescript');
      set('fingerprint', 'fingerprint.ts', 'typescript');
      set('cleanup', store.cleanupJob ? 'cleanup.ts' : undefined, 'typescript');
      set('tests', 'idempotency.test.ts', 'typescript');
      set('monitoring', 'idempotency-alerts.yml', 'yaml');
      return excerpts;
    },
  };
}

/** A store without transactions to share (Redis) runs every action in lease mode, and the generated code says so. */
function storeView(view: ScaffoldView, store: StoreModule): ScaffoldView {
  if (store.transactional) return view;
  const lease = <T extends { mode: string }>(action: T): T => ({ ...action, mode: 'lease' });
  return {
    ...view,
    actions: view.actions.map(lease),
    testAction: lease(view.testAction),
    ...(view.sagaAction ? { sagaAction: lease(view.sagaAction) } : {}),
  };
}
