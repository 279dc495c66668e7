import path from 'node:path';
import { EXPRESS } from './frameworks/express.js';
import type { HttpFramework } from './httpFramework.js';
import { runnerPrelude } from './profile/runnerPrelude.js';
import type { TestRunner } from './profile/types.js';
import { sampleRequest } from './sampleRequest.js';
import type { ActionView, ScaffoldView } from './scaffoldView.js';
import { POSTGRES_STORE } from './stores/postgres.js';
import type { StoreModule } from './stores/types.js';
import { houseExpression, houseLiteral, houseQuote } from './houseStyle.js';
import { printSuiteJavaScript, SuiteHoleRecorder } from './javascript/suiteJavaScript.js';
import type { ModuleType } from './javascript/transpile.js';
import type { JavaScriptToFormat } from './types.js';
import { quote } from './tsLiteral.js';

export interface TestSuiteOptions {
  /** The project's test runner: the suite uses only its API (default vitest). */
  readonly runner?: TestRunner;
  /** CommonJS output has no import.meta: the migration is found through __dirname there. */
  readonly moduleSystem?: 'esm' | 'commonjs';
  /** Project-relative scaffold folder: where the suite looks for the migration when it runs from compiled output. */
  readonly scaffoldDir?: string;
  /**
   * The suite is transpiled to JavaScript and formatted by prettier there: an object that only the type annotation
   * pushes past the width stays on one line, as prettier keeps an object expanded once it is written so.
   */
  readonly javascript?: boolean;
}

/**
 * idempotency.test.ts: the spec's scenarios (and the fail-closed ones) against the real store. Each run works in
 * its own throwaway schema, database or key prefix (the store's test hooks), so it is safe beside other suites and
 * never touches the application's tables.
 */
/** The fetch type of send(): the platform's, or what the suite uses of it where the typings declare none. */
const SUITE_FETCH = `
// fetch where the typings declare it; before @types/node 18 (and no DOM lib), the part of it this suite uses.
type SuiteFetch =
  typeof globalThis extends Record<'fetch', infer F>
    ? F
    : (
        url: string,
        init: { method: string; headers: Array<[string, string]>; body: string },
      ) => Promise<{
        readonly status: number;
        readonly headers: { get(name: string): string | null };
        arrayBuffer(): Promise<ArrayBuffer>;
        json(): Promise<unknown>;
        text(): Promise<string>;
      }>;
`;

/**
 * How the suite's source is printed. As the file: every value in place (AS_WRITTEN). For the direct JavaScript printer
 * (javascript/suiteJavaScript.ts): each value from the design is a hole (`hole` returns a placeholder and remembers
 * the value), and `mark` lines set the framework's fragments apart, so the rest of the suite reads the same for
 * every design and framework and its JavaScript can be made once, by the build.
 */
export interface SuiteHoles {
  /** `value` in place, or a placeholder for it; `name` is one letter, the same value for every use. */
  hole(name: string, value: string): string;
  /** A line between fragments (with its newline), or '' in the file. */
  readonly mark: string;
}

const AS_WRITTEN: SuiteHoles = { hole: (_name, value) => value, mark: '' };

export function renderTests(
  view: ScaffoldView,
  migrationPath: string,
  framework: HttpFramework = EXPRESS,
  store: StoreModule = POSTGRES_STORE,
  options: TestSuiteOptions = {},
  holes: SuiteHoles = AS_WRITTEN,
): string {
  const { hole, mark } = holes;
  const prelude = runnerPrelude(options.runner ?? 'vitest');
  // The store's hooks read the migration through this expression: beside the suite (import.meta in ES modules,
  // __dirname in CommonJS), or also in the source folder when the runner loads tsc's output (tsc copies no .sql).
  const beside = options.moduleSystem === 'commonjs' ? `nodePath.join(__dirname, ${houseQuote(migrationPath)})` : `new URL(${houseQuote(migrationPath)}, import.meta.url)`;
  const inSource = store.migration && prelude.runsCompiled && options.scaffoldDir ? `nodePath.resolve(${houseQuote(sourcePath(options.scaffoldDir, migrationPath, hole))})` : undefined;
  const migrationDecl = inSource
    ? `\n// Beside this file, or in the source folder when the suite runs from compiled output (tsc does not copy .sql files).\nconst MIGRATION = [${beside}, ${inSource}].find((file) => existsSync(file)) ?? ${beside};\n`
    : '';
  const migration = inSource ? 'MIGRATION' : beside;
  const runtimeImports = `${inSource ? "import { existsSync } from 'node:fs';\n" : ''}${store.migration && (inSource || options.moduleSystem === 'commonjs') ? "import * as nodePath from 'node:path';\n" : ''}`;
  const action = view.testAction;
  if (!action.http) return renderTriggerSuite(view, store, prelude, { runtimeImports, migrationDecl, migration, javascript: options.javascript }, holes);
  const first = sampleRequest(action, 0);
  const changed = sampleRequest(action, 1);
  const canMismatch = JSON.stringify(first) !== JSON.stringify(changed);
  const method = (action.method ?? 'POST').toLowerCase();
  const routeMethod = ['post', 'put', 'patch', 'delete', 'get'].includes(method) ? method : 'post';
  // The crash scenario of the action's mode; only lease mode's meets a LeaseLostError (noUnusedLocals projects compile the import list).
  const crash = action.mode === 'transactional' ? store.tests.crashTransactional : store.tests.crashLease;
  return `${prelude.imports}
import { randomBytes } from 'node:crypto';
${runtimeImports}${store.tests.fsImport}${framework.tests.imports}
${store.tests.driverImport}
import { IdempotencyCore } from './core.js';
import { computeFingerprint, pickFields } from './fingerprint.js';
import { createIdempotency } from './index.js';
import { deriveKey, providerKeyBase } from './keys.js';
${store.tests.storeImport}
import { PermanentStepError, SagaCompensatedError, SagaTracker, type SagaStep } from './saga.js';
import { ACTIONS, POLICY } from './settings.js';
import {
${/\bLeaseLostError\b/.test(crash) ? '  LeaseLostError,\n' : ''}  OutcomeUnknownError,
  StoreUnavailableError,
  type ActionSettings,
  type IdempotencyContext,
  type IdempotencyStore,
} from './types.js';

${mark}${store.tests.gate}

const ACTION: ActionSettings = ACTIONS.${hole('c', action.codeName)};
// These scenarios assert enforcement: while the action is in log-only rollout (settings.ts) nothing is refused.
const ENFORCED = ACTION.rollout !== 'log-only';
const KEY_HEADER = POLICY.keyHeader;
const REPLAY_HEADER = POLICY.replayHeader.toLowerCase();
// One request per test id; ${hole('k', action.keySource === 'derived' ? 'the derived key comes from the body fields' : 'the key travels in the header')}.
const SAMPLE = ${hole('s', houseLiteral(first, '', 'const SAMPLE = '.length, 1))};
const CHANGED = ${hole('d', houseLiteral(changed, '', 'const CHANGED = '.length, 1))};
const USES_HEADER = ${hole('u', String(action.keySource !== 'derived'))};
${SUITE_FETCH}${migrationDecl}
${prelude.helpers}

suiteIf(${runsWhen(store)} && ENFORCED)(${hole('n', houseQuote(`idempotency (${action.name})`))}, ${prelude.suiteCallback}
${store.tests.declarations}
  let baseUrl = '';
${mark}  ${framework.tests.serverDecl}
${mark}  let executions = 0;
  let failNext = false;

  ${prelude.beforeAll}(async () => {
${store.tests.setup(migration)}

${mark}${framework.tests.setup({ ...action, codeName: hole('c', action.codeName) }, hole('m', routeMethod))}
${mark}  });

  ${prelude.afterAll}(async () => {
${mark}${framework.tests.teardown}
${mark}${store.tests.teardown}
  });

${store.tests.effectHelpers}

  function send(
    id: string,
    options: { changed?: boolean; principal?: string; key?: string | string[] } = {},
  ) {
    const sample = options.changed ? CHANGED : SAMPLE;
    const url = sample.url.split('__ID__').join(id);
    const body = JSON.stringify(sample.body).split('__ID__').join(id);
    const headers: Array<[string, string]> = [
      ['content-type', 'application/json'],
      ['x-test-principal', options.principal ?? 'user-a'],
    ];
    if (USES_HEADER)
      for (const value of ([] as string[]).concat(options.key ?? \`key-\${id}\`))
        headers.push([KEY_HEADER, value]);
    // Read by shape: typings before @types/node 18 (and no DOM lib) declare no fetch global.
    const request = (globalThis as unknown as { fetch: SuiteFetch }).fetch;
    return request(baseUrl + url, { method: ${hole('e', houseQuote(action.method ?? 'POST'))}, headers, body });
  }

${store.tests.recordKeyHelper}

  it('first request: runs the action once and stores the response before sending it', async () => {
    const before = executions;
    const response = await send('first');
    expect(response.status).toBe(201);
    expect(executions).toBe(before + 1);
${store.tests.assertFinished}
  });

  it('same key, same body: replays status, headers and exact bytes without running again', async () => {
    const original = await send('replay');
    const originalBody = Buffer.from(await original.arrayBuffer());
    const before = executions;
    const replay = await send('replay');
    expect(executions).toBe(before);
    expect(replay.status).toBe(original.status);
    expect(replay.headers.get(REPLAY_HEADER)).toBe('true');
    expect(replay.headers.get('location')).toBe(original.headers.get('location'));
    expect(Buffer.from(await replay.arrayBuffer()).equals(originalBody)).toBe(true);
  });

  testIf(${hole('x', String(canMismatch))})('same key, different body: ${hole('y', String(view.policy.mismatchStatus))} problem without the stored body', async () => {
    await send('mismatch');
    const before = executions;
    const response = await send('mismatch', { changed: true });
    expect(response.status).toBe(POLICY.mismatchStatus);
    expect(response.headers.get('content-type')).toContain('application/problem+json');
    expect(await response.text()).not.toContain('execution');
    expect(executions).toBe(before);
  });

  it('concurrent duplicates: the action runs exactly once, the others get 409 or the replay', async () => {
    const before = executions;
    const responses = await Promise.all(Array.from({ length: 20 }, () => send('concurrent')));
    expect(executions).toBe(before + 1);
    for (const response of responses) expect([201, 409]).toContain(response.status);
    expect(responses.filter((response) => response.status === 201)).not.toHaveLength(0);
  });

  testIf(ACTION.scope !== 'global')(
    "key used by another principal: runs as that principal's own key, never replays the other",
    async () => {
      const mine = await (await send('shared', { principal: 'user-a' })).json();
      const before = executions;
      const theirs = await send('shared', { principal: 'user-b' });
      expect(theirs.status).toBe(201);
      expect(theirs.headers.get(REPLAY_HEADER)).toBeNull();
      expect(await theirs.json()).not.toEqual(mine);
      expect(executions).toBe(before + 1);
    },
  );

  it('expired key: treated as a new request', async () => {
    await send('expired');
    const { scope, key } = await recordKey('expired');
${store.tests.expireRecord}
    const before = executions;
    const response = await send('expired');
    expect(response.status).toBe(201);
    expect(response.headers.get(REPLAY_HEADER)).toBeNull();
    expect(executions).toBe(before + 1);
  });

${crash}  it('action fails with a 5xx: the claim is released and the retry runs again', async () => {
    failNext = true;
    const failed = await send('error');
    expect(failed.status).toBe(500);
    const before = executions;
    const retry = await send('error');
    expect(retry.status).toBe(201);
    expect(executions).toBe(before + 1);
    // Transactional mode rolled the failed attempt's write back with its claim; lease mode keeps both attempts' effects.
    expect(await effects('error')).toBe(ACTION.mode === 'transactional' ? 1 : 2);
  });

  testIf(USES_HEADER)(
    'key grammar: repeated, comma, space or non-ASCII keys are 400; one pair of quotes is removed',
    async () => {
      for (const key of [
        ['key-twice', 'key-twice'],
        'key,comma',
        'key space',
        'k\u00e9y',
        '',
        'x'.repeat(POLICY.maxKeyLength + 1),
      ]) {
        const response = await send('grammar', { key });
        expect(response.status).toBe(400);
        expect(response.headers.get('content-type')).toContain('application/problem+json');
      }
      const before = executions;
      expect((await send('grammar', { key: '"key-quoted"' })).status).toBe(201);
      const replay = await send('grammar', { key: 'key-quoted' });
      expect(replay.headers.get(REPLAY_HEADER)).toBe('true');
      expect(executions).toBe(before + 1);
    },
  );

${formScenarios(action, framework, holes)}  it('provider keys: two principals with one client key get different ones, a retry the same one', () => {
    const mine = providerKeyBase({ scope: 'user-a', key: 'key-shared', action: ACTION.codeName }, 1);
    expect(providerKeyBase({ scope: 'user-b', key: 'key-shared', action: ACTION.codeName }, 1)).not.toBe(
      mine,
    );
    expect(providerKeyBase({ scope: 'user-a', key: 'key-shared', action: ACTION.codeName }, 1)).toBe(mine);
    expect(mine).toMatch(/^[0-9a-f]{64}$/);
  });

${coreScenarios(view, store, options.javascript, hole)}  async function claimLike(core: IdempotencyCore, id: string) {
    // Recompute exactly what the middleware would, by letting it claim through the core with the same inputs.
    const body = JSON.parse(JSON.stringify(SAMPLE.body).split('__ID__').join(id)) as unknown;
    const params = routeParams(ACTION.route, SAMPLE.url.split('__ID__').join(id));
    const key = USES_HEADER
      ? \`key-\${id}\`
      : deriveKey(ACTION.codeName, pickFields(ACTION.key.from ?? [], { params, body }));
    const fingerprint = computeFingerprint({
      method: ACTION.method ?? 'POST',
      route: ACTION.route,
      fields: pickFields(ACTION.significantFields, { params, body }),
    });
    const scope = ACTION.scope === 'global' ? 'global' : 'user-a';
    const decision = await core.begin(ACTION, { scope, key, fingerprint });
    if (decision.kind !== 'execute') throw new Error(\`expected to claim, got \${decision.kind}\`);
    return { claim: decision.claim, scope, key };
  }
});

function routeParams(template: string, url: string): Record<string, string> {
  const names = template.split('/');
  const values = url.split('/');
  const params: Record<string, string> = {};
  names.forEach((segment, index) => {
    if (segment.startsWith(':')) params[segment.slice(1)] = decodeURIComponent(values[index] ?? '');
  });
  return params;
}
${prelude.footer}`;
}

/**
 * `dir/file`, the folder a hole when it is plain path characters: inside the string, so the line keeps its layout
 * for the JavaScript printer (a placeholder for the whole literal would be far shorter than it).
 */
function sourcePath(dir: string, file: string, hole: SuiteHoles['hole']): string {
  const joined = path.posix.join(dir, file);
  const rest = path.posix.normalize(file);
  const folder = joined.slice(0, -rest.length - 1);
  return /^[\w./@+-]+$/.test(folder) && joined === `${folder}/${rest}` ? `${hole('p', folder)}/${rest}` : joined;
}

/**
 * idempotency.test.ts as JavaScript in the project's module format, without the compiler or prettier: the suite
 * rendered with holes, its pieces as the build precompiled them (javascript/suiteJavaScript.ts). Undefined when a
 * piece or a value's width leaves that unsure; the TypeScript is then transpiled as before.
 */
/**
 * The form-field key path (`key.field`), for an action a server-rendered form posts: a urlencoded POST carrying the key
 * in the field and no header runs once, the same field value again replays, the field sent twice is 400. Only where
 * the suite's app parses urlencoded bodies as a form app does, repeated fields as arrays (`tests.forms`). Its own
 * piece of the suite (between marks): designs without a form field have none.
 */
function formScenarios(action: ActionView, framework: HttpFramework, { hole, mark }: SuiteHoles): string {
  if (action.keyField === undefined || action.keySource === 'derived' || framework.tests.forms !== true) return '';
  return `${mark}  // ${hole('b', houseQuote(action.keyField))} is the hidden field a server-rendered form posts the key in (no header).
  function sendForm(id: string, keys: string[]) {
    const form = new URLSearchParams();
    for (const [name, value] of Object.entries(SAMPLE.body as Record<string, unknown>))
      form.append(name, (typeof value === 'string' ? value : JSON.stringify(value)).split('__ID__').join(id));
    for (const key of keys) form.append(${hole('b', houseQuote(action.keyField))}, key);
    const request = (globalThis as unknown as { fetch: SuiteFetch }).fetch;
    return request(baseUrl + SAMPLE.url.split('__ID__').join(id), {
      method: ${hole('e', houseQuote(action.method ?? 'POST'))},
      headers: [
        ['content-type', 'application/x-www-form-urlencoded'],
        ['x-test-principal', 'user-a'],
      ],
      body: form.toString(),
    });
  }

  it('form post: the key in the form field and no header runs once; the same field again replays', async () => {
    const before = executions;
    const first = await sendForm('form', ['form-key-once']);
    expect(first.status).toBe(201);
    expect(first.headers.get(REPLAY_HEADER)).toBeNull();
    expect(executions).toBe(before + 1);
    const firstBody = Buffer.from(await first.arrayBuffer());
    const replay = await sendForm('form', ['form-key-once']);
    expect(replay.status).toBe(201);
    expect(replay.headers.get(REPLAY_HEADER)).toBe('true');
    expect(Buffer.from(await replay.arrayBuffer()).equals(firstBody)).toBe(true);
    expect(executions).toBe(before + 1);
  });

  it('form post: the key field sent twice is 400 problem+json, and nothing runs', async () => {
    const before = executions;
    const response = await sendForm('form-twice', ['form-key-twice', 'form-key-twice']);
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toContain('application/problem+json');
    expect(executions).toBe(before);
  });

${mark}`;
}

export function renderTestsJavaScript(
  view: ScaffoldView,
  migrationPath: string,
  framework: HttpFramework,
  store: StoreModule,
  options: TestSuiteOptions,
  moduleType: ModuleType,
): string | JavaScriptToFormat | undefined {
  const holes = new SuiteHoleRecorder();
  const source = renderTests(view, migrationPath, framework, store, { ...options, javascript: true }, holes);
  return printSuiteJavaScript(source, holes.values, moduleType, options.runner ?? 'vitest');
}

/** The suite runs when the store's skip expression is false: `!!X` and `!false` as prettier prints `!(!X)`, `!(false)`. */
function runsWhen(store: StoreModule): string {
  return /^!?[\w.]+$/.test(store.tests.skipIf) ? `!${store.tests.skipIf}` : `!(${store.tests.skipIf})`;
}

/** The scenarios that drive the core and store directly (no HTTP): shared by the HTTP suite and the trigger suite. */
function coreScenarios(view: ScaffoldView, store: StoreModule, javascript = false, hole = AS_WRITTEN.hole): string {
  const saga = view.sagaAction;
  return `  it('lease mode, completion cannot be recorded: retried with the same token, then OutcomeUnknownError, never released', async () => {
    const real = ${houseExpression(store.tests.newStore('POLICY.statementTimeoutMs'), '    ', '    const real = '.length, 1)};
    let attempts = 0;
    const failing: IdempotencyStore = {
      claim: (input) => real.claim(input),
      complete: async () => {
        attempts += 1;
        throw new StoreUnavailableError('complete');
      },
      release: (ref) => real.release(ref),
      extend: (ref, leaseMs) => real.extend(ref, leaseMs),
      read: (scope, key) => real.read(scope, key),
    };
    const core = new IdempotencyCore(failing, { ...POLICY, completionRetryMs: 200 });
    const key = \`unknown-\${randomBytes(16).toString('hex')}\`;
    const decision = await core.begin(
      { ...ACTION, mode: 'lease' },
      { scope: 'user-a', key, fingerprint: 'e'.repeat(64) },
    );
    if (decision.kind !== 'execute') throw new Error(\`expected to execute, got \${decision.kind}\`);
    await expect(
      decision.claim.complete({ status: 201, headers: {}, body: Buffer.from('{}') }),
    ).rejects.toBeInstanceOf(OutcomeUnknownError);
    expect(attempts).toBeGreaterThan(1);
    // Still PROCESSING under its lease: a retry gets 409 until the lease lapses, then re-runs with the same provider keys.
${store.tests.assertStillProcessing}
  });

  it('saga: a retry resumes at the failed step; a permanent failure compensates in reverse', async () => {
    const core = ${houseExpression(`new IdempotencyCore(${store.tests.newStore('POLICY.storeTimeoutMs')}, POLICY)`, '    ', '    const core = '.length, 1)};
    const tracker = ${houseExpression(store.tests.newSaga, '    ', '    const tracker = '.length, 1)};
    const names = ${hole('a', houseLiteral(saga ? saga.steps.map((step) => step.name) : ['firstStep', 'secondStep', 'thirdStep'], '    ', '    const names = '.length, 1))};
    const ran: string[] = [];
    const undone: string[] = [];
    let failure: Error | undefined = new Error('transient');
    const steps: SagaStep[] = names.map((name, index) => ({
      name,
      run: async (context) => {
        ran.push(name);
        if (index === 1 && failure) throw failure;
        expect(context.providerKey).toBe(providerKeyBase(context, context.index));
        return context.subKey;
      },
      compensate: async () => {
        undone.push(name);
      },
    }));
    // Saga steps call other services, so the saga runs in lease mode whatever the test action's mode is.
    const sagaAction: ActionSettings = ${javascript ? "{ ...ACTION, codeName: 'sagaTest', heartbeatMs: undefined, mode: 'lease' }" : "{\n      ...ACTION,\n      codeName: 'sagaTest',\n      heartbeatMs: undefined,\n      mode: 'lease',\n    }"};
    const request = {
      scope: 'user-a',
      key: \`saga-\${randomBytes(16).toString('hex')}\`,
      fingerprint: 'f'.repeat(64),
    };

    const attempt = async () => {
      const decision = await core.begin(sagaAction, request);
      if (decision.kind !== 'execute') throw new Error(\`expected to execute, got \${decision.kind}\`);
      try {
        // The handler's context is what saga.run takes, in every adapter (idempotencyOf(request)).
        await tracker.run(decision.claim.context, steps);
        await decision.claim.complete({ status: 200, headers: {}, body: Buffer.from('{}') });
      } catch (error) {
        if (error instanceof SagaCompensatedError)
          await decision.claim.complete({ status: 409, headers: {}, body: Buffer.from('{}') });
        else await decision.claim.release();
        throw error;
      }
    };
    await expect(attempt()).rejects.toThrow('transient');
    failure = undefined;
    await attempt();
    expect(ran).toEqual([names[0], names[1], names[1], ...names.slice(2)]);

    // Permanent failure on a new key: the completed first step is compensated, nothing runs forward.
    ran.length = 0;
    failure = new PermanentStepError('card declined');
    request.key = \`saga-\${randomBytes(16).toString('hex')}\`;
    await expect(attempt()).rejects.toBeInstanceOf(SagaCompensatedError);
    expect(ran).toEqual([names[0], names[1]]);
    expect(undone).toEqual([names[0]]);
  });

`;
}

const TRIGGER_KEYS: Record<string, { what: string; entry: string; prefix: string }> = {
  webhook: { what: "the provider's event id", entry: 'createWebhookProcessor() in webhooks/', prefix: 'evt' },
  consumer: { what: 'the message id (or business key)', entry: 'idempotentHandler() and the broker adapters in consumers/', prefix: 'msg' },
  cron: { what: 'the job name and its scheduled slot', entry: 'CronGuard in cron/', prefix: 'slot' },
};

/**
 * idempotency.test.ts for a design without HTTP actions: no route and no Idempotency-Key header (the senders do not
 * send one). The scenarios drive the core the way the trigger's entry point does (key = what the sender carries,
 * fingerprint pinned to the action), against the real store, in the project's runner.
 */
function renderTriggerSuite(
  view: ScaffoldView,
  store: StoreModule,
  prelude: ReturnType<typeof runnerPrelude>,
  parts: { runtimeImports: string; migrationDecl: string; migration: string; javascript?: boolean },
  { hole, mark }: SuiteHoles,
): string {
  const action = view.testAction;
  const trigger = TRIGGER_KEYS[action.trigger] ?? TRIGGER_KEYS.consumer!;
  const scope = action.trigger === 'webhook' && action.scope !== 'global' ? 'provider' : 'global';
  return `${prelude.imports}
import { randomBytes } from 'node:crypto';
${parts.runtimeImports}${store.tests.fsImport}${store.tests.driverImport}
import { IdempotencyCore } from './core.js';
import { canonicalJson, sha256Hex } from './fingerprint.js';
import { createIdempotency } from './index.js';
import { providerKeyBase } from './keys.js';
${store.tests.storeImport}
import { PermanentStepError, SagaCompensatedError, SagaTracker, type SagaStep } from './saga.js';
import { ACTIONS, POLICY } from './settings.js';
import {
  OutcomeUnknownError,
  StoreUnavailableError,
  type ActionSettings,
  type IdempotencyContext,
  type IdempotencyStore,
} from './types.js';

${mark}${store.tests.gate}

// ${hole('c', action.codeName)} is a ${hole('h', `${action.trigger}, keyed by ${trigger.what}: its entry point is ${trigger.entry}`)}
// (TRIGGERS.md), never an HTTP route with an Idempotency-Key header. These scenarios drive the core the way that
// entry point does, against the real store.
const ACTION: ActionSettings = ACTIONS.${hole('c', action.codeName)};
// These scenarios assert enforcement: while the action is in log-only rollout (settings.ts) nothing is refused.
const ENFORCED = ACTION.rollout !== 'log-only';
const SCOPE = ${hole('q', quote(scope))};
const USES_HEADER = false;
${parts.migrationDecl}
${prelude.helpers}

suiteIf(${runsWhen(store)} && ENFORCED)(${hole('n', houseQuote(`idempotency (${action.name}, ${action.trigger})`))}, ${prelude.suiteCallback}
${store.tests.declarations}
  let core: IdempotencyCore;
  let executions = 0;

  ${prelude.beforeAll}(async () => {
${store.tests.setup(parts.migration)}
    core = createIdempotency({ pool }).core;
  });

  ${prelude.afterAll}(async () => {
${store.tests.teardown}
  });

${store.tests.effectHelpers}

  const keyOf = (id: string) => \`${hole('f', trigger.prefix)}-\${id}\`;
  // A trigger's key is its message or event id, never a hash of a sample request: the record is found directly.
  async function recordKey(id: string): Promise<{ scope: string; key: string }> {
    return { scope: SCOPE, key: keyOf(id) };
  }
  // Pinned to the action, like the processors' fingerprint: the same id under another action never replays.
  const fingerprintOf = (key: string) => sha256Hex(canonicalJson({ action: ACTION.codeName, key }));

  /** One delivery of ${hole('w', trigger.what)} \`id\`, handled the way the entry point handles it. */
  async function deliver(
    id: string,
    options: { fail?: boolean } = {},
  ): Promise<'done' | 'duplicate' | 'busy'> {
    const key = keyOf(id);
    const decision = await core.begin(ACTION, { scope: SCOPE, key, fingerprint: fingerprintOf(key) });
    if (decision.kind === 'in-flight') return 'busy';
    if (decision.kind !== 'execute') return 'duplicate';
    try {
      executions += 1;
      await recordEffect(decision.claim.context);
      if (options.fail) throw new Error('downstream failure');
      await decision.claim.complete({ status: 200, headers: {}, body: Buffer.from('{"done":true}') });
      return 'done';
    } catch (error) {
      await decision.claim.release();
      throw error;
    }
  }

  it('first delivery: runs once and the record is finished', async () => {
    const before = executions;
    expect(await deliver('first')).toBe('done');
    expect(executions).toBe(before + 1);
${store.tests.assertFinished}
  });

  it('redelivered after completion: acknowledged as a duplicate without running again', async () => {
    await deliver('again');
    const before = executions;
    expect(await deliver('again')).toBe('duplicate');
    expect(executions).toBe(before);
  });

  it('concurrent duplicate deliveries: the effect runs exactly once', async () => {
    const before = executions;
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => deliver('concurrent')));
    expect(executions).toBe(before + 1);
    expect(outcomes.filter((outcome) => outcome === 'done')).toHaveLength(1);
    for (const outcome of outcomes) expect(['done', 'duplicate', 'busy']).toContain(outcome);
  });

  it('expired record: the same id is treated as new', async () => {
    await deliver('expired');
    const scope = SCOPE;
    const key = keyOf('expired');
${store.tests.expireRecord}
    const before = executions;
    expect(await deliver('expired')).toBe('done');
    expect(executions).toBe(before + 1);
  });

  it('handler fails: the claim is released and the redelivery runs again', async () => {
    await expect(deliver('error', { fail: true })).rejects.toThrow('downstream failure');
    const before = executions;
    expect(await deliver('error')).toBe('done');
    expect(executions).toBe(before + 1);
  });

${coreScenarios(view, store, parts.javascript, hole).trimEnd()}
});
${prelude.footer}`;
}
