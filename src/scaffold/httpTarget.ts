import { posix } from 'node:path';
import type { DesignModel, StackDesign } from '../model/types.js';
import type { HttpFramework } from './httpFramework.js';
import { printAdaptedSuite, adaptedSuiteSource } from './javascript/suiteJavaScript.js';
import { describeTestRun } from './profile/runnerPrelude.js';
import { readTemplate } from './readTemplate.js';
import { fitsHouseWidth } from './houseStyle.js';
import { renderAlerts } from './renderAlerts.js';
import { renderProviders, renderProvidersJavaScript } from './renderProviders.js';
import { renderReadme } from './renderReadme.js';
import { renderSettings, renderSettingsJavaScript } from './renderSettings.js';
import { renderTests, renderTestsJavaScript } from './renderTests.js';
import { renderWiring, renderWiringJavaScript } from './renderWiring.js';
import { buildScaffoldView, type ScaffoldView } from './scaffoldView.js';
import type { StoreModule } from './stores/types.js';
import { triggerFiles } from './triggers/index.js';
import { CONTRACT_FILE, CORE_RUNTIME_FILES, MEMORY_STORE_FILE, METRICS_FILE, type StaticFile } from './typescriptRuntime.js';
import type { CodeExcerpt, ExcerptId, JavaScriptToFormat, ScaffoldFile, ScaffoldRole, ScaffoldTarget, TargetContext } from './types.js';

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

/** A file's JavaScript as an emitter printed it: in the house style, or for prettier to lay out. */
const javaScriptFields = (javascript: string | JavaScriptToFormat | undefined): Pick<ScaffoldFile, 'javascript' | 'javascriptToFormat'> =>
  javascript === undefined ? {} : typeof javascript === 'string' ? { javascript } : { javascriptToFormat: javascript.toFormat };

/**
 * A TypeScript target composed of one HTTP framework adapter and one store: the shared core, the store's runtime
 * files and DDL, the adapter, and the wiring, README and tests rendered for the pair.
 */
export function httpTarget(options: HttpTargetOptions, store: StoreModule): ScaffoldTarget {
  const { adapter } = options;
  const staticFiles = [...CORE_RUNTIME_FILES, ...store.files, MEMORY_STORE_FILE, METRICS_FILE, adapter, CONTRACT_FILE];
  return {
    id: options.id,
    label: options.label,
    supports: options.supports,

    files(model: DesignModel, context?: TargetContext): ScaffoldFile[] {
      const platform = context?.httpPlatform;
      const framework = (platform ? options.framework.platforms?.[platform]?.() : undefined) ?? options.framework;
      const view = storeView(buildScaffoldView(model), store);
      const runner = context?.testRunner ?? 'vitest';
      const moduleType = context?.javascript;
      // Suites written against Vitest's API, in the project's runner; for a JavaScript project, their JavaScript as
      // the build precompiled it (vitest's are the templates' own, precompiled.ts).
      const suite = (path: string, code: string) => adaptedSuiteSource(code, runner, path, context?.scaffoldDir);
      const suiteJavaScript = (path: string, code: string) => (moduleType && runner !== 'vitest' ? printAdaptedSuite(code, runner, path, context?.scaffoldDir, moduleType) : undefined);
      const files: ScaffoldFile[] = staticFiles.map((file) => {
        const code = readTemplate(file.template);
        if (file !== CONTRACT_FILE) return { path: file.path, contents: code, class: 'scaffold', role: file.role, formatted: true };
        return { path: file.path, contents: suite(file.path, code), class: 'scaffold', role: file.role, formatted: runner === 'vitest', ...javaScriptFields(suiteJavaScript(file.path, code)) };
      });
      const purposes = staticFiles.map((file) => ({ name: file.path, purpose: file.purpose }));
      // `formatted`: the emitter prints the house style itself (test/emit/houseStyleEmitted.test.ts), so generate
      // need not load prettier for the file.
      // `javascript`: the same file printed as JavaScript for a JavaScript project (ScaffoldFile.javascript).
      const add = (path: string, contents: string, role: ScaffoldRole, purpose: string, fileClass: ScaffoldFile['class'] = 'scaffold', formatted = false, javascript?: string | JavaScriptToFormat) => {
        files.push({ path, contents, class: fileClass, role, ...(formatted ? { formatted } : {}), ...javaScriptFields(javascript) });
        purposes.push({ name: path, purpose });
      };
      if (store.migration) add(store.migration.path, store.migration.render(view), 'ddl', store.migration.purpose, 'scaffold', true);
      const settings = renderSettings(view);
      add('settings.ts', settings, 'core', 'every value the design decided (leases, retention, statuses)', 'scaffold', fitsHouseWidth(settings), moduleType && renderSettingsJavaScript(view, moduleType));
      add('index.ts', renderWiring(view, framework, store), 'middleware', options.wiringPurpose ?? 'createIdempotency(): store, core and the hooks for each route', 'scaffold', true, moduleType && renderWiringJavaScript(view, framework, store, moduleType));
      if (store.cleanupJob) add('cleanup-job.ts', store.cleanupJob(view), 'cleanup', 'runnable cleanup for cron', 'scaffold', true, moduleType && store.cleanupJob(view, moduleType));
      const providers = renderProviders(view);
      if (providers) add('providers.ts', providers, 'providers', 'provider keys derived from the local key', 'scaffold', true, moduleType && renderProvidersJavaScript(view, moduleType));
      add('idempotency-alerts.yml', renderAlerts(view), 'alerts', 'Prometheus alert rules (regenerated)', 'managed', true);
      const suiteOptions = { runner: context?.testRunner, moduleSystem: context?.testModuleSystem, scaffoldDir: context?.scaffoldDir, javascript: model.stack.language === 'javascript' };
      const scenarios = renderTests(view, `./${store.migration?.path ?? ''}`, framework, store, suiteOptions);
      // Printed in the house style for vitest; a value that leaves a line too long (a long action name) goes to prettier.
      add('idempotency.test.ts', scenarios, 'tests', `the scenarios against ${store.testTarget ?? `a real ${store.label}`}`, 'scaffold', runner === 'vitest' && fitsHouseWidth(scenarios, { unbreakable: true }), moduleType && renderTestsJavaScript(view, `./${store.migration?.path ?? ''}`, framework, store, suiteOptions, moduleType));
      const contractTest = store.renderContractTest(view);
      add('store-contract.test.ts', suite('store-contract.test.ts', contractTest), 'tests', `the store contract suite run against the ${store.label} store`, 'scaffold', runner === 'vitest', suiteJavaScript('store-contract.test.ts', contractTest));
      // Webhook, consumer and cron processors run on every store (they use only the IdempotencyStore interface);
      // triggerFiles() leaves out what needs more (the reconciliation job without listStuck, the PostgreSQL ordering
      // table and suites) and TRIGGERS.md says so. Their suites are adapted to the project's runner like the others.
      for (const file of triggerFiles(model, framework.module, store.id, platform, moduleType)) {
        const tests = file.role === 'tests';
        // A suite stays as written (and formatted) only for vitest; another runner's prelude changes it.
        add(file.path, tests ? suite(file.path, file.contents) : file.contents, file.role, file.purpose, 'scaffold', file.formatted === true && (!tests || runner === 'vitest'), tests ? suiteJavaScript(file.path, file.contents) : file.javascript);
      }
      purposes.sort((a, b) => (a.name < b.name ? -1 : 1));
      // Paths as seen from the package the scaffold belongs to, where its runner's config and dependencies are.
      const packageDir = context?.packageDir;
      const scaffoldDir = context?.scaffoldDir ?? '.';
      const dir = packageDir && scaffoldDir.startsWith(`${packageDir}/`) ? scaffoldDir.slice(packageDir.length + 1) : scaffoldDir;
      const javascript = model.stack.language === 'javascript';
      const suites = files
        .filter((file) => file.role === 'tests' && file.path.endsWith('.test.ts'))
        .map((file) => posix.join(dir, javascript ? file.path.replace(/\.ts$/, '.js') : file.path));
      const run = describeTestRun(runner, { language: javascript ? 'javascript' : 'typescript', suites, dir, ...(context?.jestIgnoresSuites ? { notCollected: true } : {}), ...(context?.tapHarness ? { tap: true } : {}) });
      const from = packageDir && dir !== scaffoldDir ? `Run the commands here from \`${packageDir}/\`, the package whose test config and dependencies they use.` : '';
      const testRun = from ? { ...run, notes: run.notes ? `${from} ${run.notes}` : from } : run;
      // NestJS examples use decorators, which the old path transpiles; it stays for them.
      const readmeJavaScript = moduleType && framework.module !== 'nestjs' ? { javascript: renderReadme(view, purposes, framework, store, testRun, moduleType) } : {};
      files.push({ path: 'README.md', contents: renderReadme(view, purposes, framework, store, testRun), class: 'scaffold', role: 'readme', formatted: true, ...readmeJavaScript });
      return files;
    },

    excerpts(_model: DesignModel, files: readonly ScaffoldFile[]): Partial<Record<ExcerptId, CodeExcerpt>> {
      const byPath = new Map(files.map((file) => [file.path, file]));
      const excerpts: Partial<Record<ExcerptId, CodeExcerpt>> = {};
      const set = (id: ExcerptId, path: string | undefined, language: string) => {
        // A project whose Jest collects only *.spec.ts gets the suites under that name (applyProfile).
        const file = path === undefined ? undefined : (byPath.get(path) ?? byPath.get(path.replace(/\.test\.ts$/, '.spec.ts')));
        if (file) excerpts[id] = { language, code: file.contents, path: file.path };
      };
      set('ddl', store.migration?.path, store.migration?.path.endsWith('.yml') ? 'yaml' : 'sql');
      set('middleware', adapter.path, 'typescript');
      set('fingerprint', 'fingerprint.ts', 'typescript');
      set('cleanup', store.cleanupJob ? 'cleanup.ts' : store.expiryFile, 'typescript');
      set('tests', 'idempotency.test.ts', 'typescript');
      set('monitoring', 'idempotency-alerts.yml', 'yaml');
      return excerpts;
    },
  };
}

/** A store without transactions to share (Redis) runs every action in lease mode, and the generated code says so. */
function storeView(design: ScaffoldView, store: StoreModule): ScaffoldView {
  // What the store does, whatever the design assumed: a store that expires its own records has no cleanup job.
  const view = { ...design, cleanupJob: store.cleanupJob !== undefined };
  if (store.transactional) return view;
  const lease = <T extends { mode: string }>(action: T): T => ({ ...action, mode: 'lease' });
  return {
    ...view,
    actions: view.actions.map(lease),
    testAction: lease(view.testAction),
    ...(view.sagaAction ? { sagaAction: lease(view.sagaAction) } : {}),
  };
}
