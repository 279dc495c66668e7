import { parseConfig } from '../../config/load.js';
import { buildDesign } from '../../model/index.js';
import { EXPRESS } from '../frameworks/express.js';
import { FASTIFY } from '../frameworks/fastify.js';
import { HONO } from '../frameworks/hono.js';
import { KOA } from '../frameworks/koa.js';
import { NEXT } from '../frameworks/next.js';
import { PLAIN } from '../frameworks/plain.js';
import type { TestRunner } from '../profile/types.js';
import { readTemplate } from '../readTemplate.js';
import { CONTRACT_FILE } from '../typescriptRuntime.js';
import { renderTests } from '../renderTests.js';
import { buildScaffoldView, type ScaffoldView } from '../scaffoldView.js';
import { STORE_MODULES } from '../stores/index.js';
import { adaptedSuiteSource, suiteForm, SuiteHoleRecorder } from './suiteJavaScript.js';
import type { ModuleType } from './transpile.js';

/**
 * Rendered files whose text does not depend on the design, so the build can precompile them like the templates:
 * each store's store-contract.test.ts (the vitest form; renderContractTest reads nothing of the view). The table is
 * keyed by the TypeScript text, so a suite that came to depend on the design would simply miss and be transpiled.
 * Only the build (scripts/precompile-templates.mjs) and tests import this; generate never does.
 */
export function renderedSuites(): Array<{ name: string; source: string }> {
  const view = {} as ScaffoldView;
  return STORE_MODULES.map((store) => ({ name: 'store-contract.test.ts', source: store.renderContractTest(view) }));
}

/** One idempotency.test.ts rendered with holes and marks (suiteJavaScript.ts), in one runner's form and module format. */
export interface SuiteWithHoles {
  readonly name: string;
  readonly source: string;
  readonly moduleType: ModuleType;
  readonly runner: TestRunner;
}

const RUNNERS: readonly TestRunner[] = ['vitest', 'jest', 'mocha', 'node-test'];
// NestJS's suite declares a decorated controller, which the compiler lowers with helpers at the top of the file: it
// keeps the old path (JavaScript projects get NestJS's adapter only as the reference's fallback, if at all).
const FRAMEWORKS = [EXPRESS, FASTIFY, HONO, KOA, NEXT, PLAIN];

/**
 * idempotency.test.ts with holes, in few enough designs that every piece between its marks is among them: in each
 * runner and module format, every store in each mode it has (the crash scenarios differ) beside a framework, every
 * framework at least once, and a trigger suite (no HTTP action) on every store. Which values fill the holes does
 * not matter; only the pieces' text does.
 */
export function suitesWithHoles(): SuiteWithHoles[] {
  const http = buildScaffoldView(buildDesign(parseConfig(JSON.stringify(DESIGN)), undefined, { now: new Date(0) }));
  const trigger = buildScaffoldView(buildDesign(parseConfig(JSON.stringify({ ...DESIGN, actions: [WEBHOOK] })), undefined, { now: new Date(0) }));
  // A form-posted action (key.field): Express's suite adds the form scenarios' piece.
  const formPosted = buildScaffoldView(buildDesign(parseConfig(JSON.stringify({ ...DESIGN, actions: [{ ...DESIGN.actions[0], key: { source: 'client', field: 'idempotencyKey' } }] })), undefined, { now: new Date(0) }));
  const storeModes = STORE_MODULES.flatMap((store) => (store.transactional ? (['transactional', 'lease'] as const) : (['lease'] as const)).map((mode) => ({ store, mode })));
  const out: SuiteWithHoles[] = [];
  for (const runner of RUNNERS) {
    for (const moduleType of ['module', 'commonjs'] as const) {
      const form = suiteForm(runner);
      const options = { runner, moduleSystem: form === 'suite' || moduleType === 'module' ? ('esm' as const) : ('commonjs' as const), scaffoldDir: 'src/idempotency', javascript: true };
      const render = (view: ScaffoldView, index: number, store = storeModes[index % storeModes.length]!.store, mode = storeModes[index % storeModes.length]!.mode) => {
        const action = { ...view.testAction, mode };
        const source = renderTests({ ...view, testAction: action, actions: [action] }, `./${store.migration?.path ?? ''}`, FRAMEWORKS[index % FRAMEWORKS.length]!, store, options, new SuiteHoleRecorder());
        out.push({ name: 'idempotency.test.ts', source, moduleType, runner });
      };
      for (let index = 0; index < Math.max(storeModes.length, FRAMEWORKS.length); index += 1) render(http, index);
      for (const store of STORE_MODULES) render(trigger, 0, store, 'lease');
      render(formPosted, 0);
    }
  }
  return out;
}

const WEBHOOK = { name: 'stripeEvents', trigger: 'webhook', route: 'POST /webhooks/stripe', significantFields: ['id'], provider: 'stripe' };
const DESIGN = {
  actions: [{ name: 'createBooking', trigger: 'http', route: 'POST /bookings', significantFields: ['roomId', 'checkIn'] }],
  stack: { language: 'javascript', framework: 'express', database: 'postgres' },
  concurrency: 'single-server',
  retention: '24h',
  detectionLatency: '50ms',
};

/**
 * The suites written for vitest (the trigger suites, the store contract and each store's suite running it) adapted
 * to the other runners, with the scaffold folder a hole (printAdaptedSuite): each precompiled whole, as a module of
 * the project.
 */
export function adaptedSuites(): Array<{ name: string; source: string; runner: TestRunner }> {
  const suites = [
    ...['webhooks/webhooks.test.ts', 'consumers/consumers.test.ts', 'cron/cron.test.ts', 'reconcile/reconcile.test.ts'].map((path) => ({ path, code: readTemplate(`typescript/${path}`) })),
    { path: CONTRACT_FILE.path, code: readTemplate(CONTRACT_FILE.template) },
    ...renderedSuites().map(({ name, source }) => ({ path: name, code: source })),
  ];
  return (['jest', 'mocha', 'node-test'] as const).flatMap((runner) =>
    suites.map(({ path, code }) => ({ name: path.split('/').at(-1)!, runner, source: adaptedSuiteSource(code, runner, path, 'src/idempotency', new SuiteHoleRecorder()) })),
  );
}
