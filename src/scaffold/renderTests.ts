import { EXPRESS } from './frameworks/express.js';
import type { HttpFramework } from './httpFramework.js';
import { sampleRequest } from './sampleRequest.js';
import type { ScaffoldView } from './scaffoldView.js';
import { tsLiteral } from './tsLiteral.js';

/**
 * idempotency.test.ts: the spec's scenarios (and the fail-closed ones) against a real PostgreSQL. Each run works
 * in its own throwaway schema, so it is safe beside other suites and never touches the application's tables.
 */
export function renderTests(view: ScaffoldView, migrationPath: string, framework: HttpFramework = EXPRESS): string {
  const action = view.testAction;
  const first = sampleRequest(action, 0);
  const changed = sampleRequest(action, 1);
  const canMismatch = JSON.stringify(first) !== JSON.stringify(changed);
  const method = (action.method ?? 'POST').toLowerCase();
  const routeMethod = ['post', 'put', 'patch', 'delete', 'get'].includes(method) ? method : 'post';
  const saga = view.sagaAction;
  return `import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
${framework.tests.imports}
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdempotencyCore } from './core.js';
import { createIdempotency } from './index.js';
import { PgIdempotencyStore } from './pgStore.js';
import { PermanentStepError, SagaCompensatedError, SagaTracker, type SagaStep } from './saga.js';
import { ACTIONS, POLICY } from './settings.js';
import { LeaseLostError, type ActionSettings } from './types.js';

const DATABASE_URL = process.env.DATABASE_URL;
if (!DATABASE_URL) console.warn('idempotency tests skipped: set DATABASE_URL to a PostgreSQL database they may create a schema in');

const ACTION: ActionSettings = ACTIONS.${action.codeName};
const KEY_HEADER = POLICY.keyHeader;
const REPLAY_HEADER = POLICY.replayHeader.toLowerCase();
// One request per test id; ${action.keySource === 'derived' ? 'the derived key comes from the body fields' : 'the key travels in the header'}.
const SAMPLE = ${tsLiteral(first)};
const CHANGED = ${tsLiteral(changed)};
const USES_HEADER = ${action.keySource !== 'derived'};

describe.skipIf(!DATABASE_URL)('idempotency (${action.name})', () => {
  const schema = \`idem_test_\${randomUUID().replace(/-/g, '').slice(0, 12)}\`;
  let admin: pg.Pool;
  let pool: pg.Pool;
  let baseUrl = '';
  ${framework.tests.serverDecl}
  let executions = 0;
  let failNext = false;

  beforeAll(async () => {
    admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    await admin.query(\`CREATE SCHEMA \${schema}\`);
    pool = new pg.Pool({ connectionString: DATABASE_URL, options: \`-c search_path=\${schema}\`, max: 20 });
    await pool.query(readFileSync(new URL(${JSON.stringify(migrationPath)}, import.meta.url), 'utf8'));

${framework.tests.setup(action, routeMethod)}
  });

  afterAll(async () => {
${framework.tests.teardown}
    await pool?.end();
    await admin?.query(\`DROP SCHEMA IF EXISTS \${schema} CASCADE\`);
    await admin?.end();
  });

  function send(id: string, options: { changed?: boolean; principal?: string } = {}) {
    const sample = options.changed ? CHANGED : SAMPLE;
    const url = sample.url.replaceAll('__ID__', id);
    const body = JSON.stringify(sample.body).replaceAll('__ID__', id);
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-test-principal': options.principal ?? 'user-a' };
    if (USES_HEADER) headers[KEY_HEADER] = \`key-\${id}\`;
    return fetch(baseUrl + url, { method: ${JSON.stringify(action.method ?? 'POST')}, headers, body });
  }

  async function recordKey(id: string): Promise<{ scope: string; key: string }> {
    // Derived keys are hashes; the newest record is the one this test just wrote (tests in a file run in order).
    const { rows } = await pool.query<{ scope: string; key: string }>(\`SELECT scope, key FROM \${POLICY.table} ORDER BY created_at DESC\`);
    const found = USES_HEADER ? rows.find((row) => row.key === \`key-\${id}\`) : rows[0];
    if (!found) throw new Error('record not found');
    return found;
  }

  it('first request: runs the action once and stores the response before sending it', async () => {
    const before = executions;
    const response = await send('first');
    expect(response.status).toBe(201);
    expect(executions).toBe(before + 1);
    const { rows } = await pool.query(\`SELECT status, response_status FROM \${POLICY.table} WHERE status <> 'PROCESSING'\`);
    expect(rows.length).toBeGreaterThan(0);
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

  it.skipIf(!${canMismatch})('same key, different body: ${view.policy.mismatchStatus} problem without the stored body', async () => {
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

  it.skipIf(ACTION.scope === 'global')('key used by another principal: runs as that principal\\'s own key, never replays the other', async () => {
    const mine = await (await send('shared', { principal: 'user-a' })).json();
    const before = executions;
    const theirs = await send('shared', { principal: 'user-b' });
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get(REPLAY_HEADER)).toBeNull();
    expect(await theirs.json()).not.toEqual(mine);
    expect(executions).toBe(before + 1);
  });

  it('expired key: treated as a new request', async () => {
    await send('expired');
    const { scope, key } = await recordKey('expired');
    await pool.query(\`UPDATE \${POLICY.table} SET expires_at = now() - interval '1 second' WHERE scope = $1 AND key = $2\`, [scope, key]);
    const before = executions;
    const response = await send('expired');
    expect(response.status).toBe(201);
    expect(response.headers.get(REPLAY_HEADER)).toBeNull();
    expect(executions).toBe(before + 1);
  });

  it('crash mid-processing: 409 while the lease is live, then the retry runs once and the old owner is fenced out', async () => {
    // A worker claims the key and then "dies": it never completes.
    const core = new IdempotencyCore(new PgIdempotencyStore({ pool, table: POLICY.table, stepTable: POLICY.stepTable, timeoutMs: POLICY.storeTimeoutMs }), { ...POLICY, inFlight: 'reject' });
    const { claim: dead, scope, key } = await claimLike(core, 'crash');
    expect((await send('crash')).status).toBe(409);
    await pool.query(\`UPDATE \${POLICY.table} SET locked_until = now() - interval '1 second' WHERE scope = $1 AND key = $2\`, [scope, key]);
    const before = executions;
    const retry = await send('crash');
    expect(retry.status).toBe(201);
    expect(executions).toBe(before + 1);
    await expect(dead.complete({ status: 200, headers: {}, body: Buffer.from('late') })).rejects.toBeInstanceOf(LeaseLostError);
    const replay = await send('crash');
    expect(replay.headers.get(REPLAY_HEADER)).toBe('true');
  });

  it('action fails with a 5xx: the claim is released and the retry runs again', async () => {
    failNext = true;
    const failed = await send('error');
    expect(failed.status).toBe(500);
    const before = executions;
    const retry = await send('error');
    expect(retry.status).toBe(201);
    expect(executions).toBe(before + 1);
  });

  it('saga: a retry resumes at the failed step; a permanent failure compensates in reverse', async () => {
    const core = new IdempotencyCore(new PgIdempotencyStore({ pool, table: POLICY.table, stepTable: POLICY.stepTable, timeoutMs: POLICY.storeTimeoutMs }), POLICY);
    const tracker = new SagaTracker({ pool, table: POLICY.table, stepTable: POLICY.stepTable, timeoutMs: POLICY.storeTimeoutMs });
    const names = ${tsLiteral(saga ? saga.steps.map((step) => step.name) : ['firstStep', 'secondStep', 'thirdStep'])};
    const ran: string[] = [];
    const undone: string[] = [];
    let failure: Error | undefined = new Error('transient');
    const steps: SagaStep[] = names.map((name, index) => ({
      name,
      run: async (context) => {
        ran.push(name);
        if (index === 1 && failure) throw failure;
        return context.subKey;
      },
      compensate: async () => {
        undone.push(name);
      },
    }));
    const sagaAction: ActionSettings = { ...ACTION, codeName: 'sagaTest', heartbeatMs: undefined };
    const request = { scope: 'user-a', key: \`saga-\${randomUUID()}\`, fingerprint: 'f'.repeat(64) };

    const attempt = async () => {
      const decision = await core.begin(sagaAction, request);
      if (decision.kind !== 'execute') throw new Error(\`expected to execute, got \${decision.kind}\`);
      try {
        await tracker.run(decision.claim.ref, steps);
        await decision.claim.complete({ status: 200, headers: {}, body: Buffer.from('{}') });
      } catch (error) {
        if (error instanceof SagaCompensatedError) await decision.claim.complete({ status: 409, headers: {}, body: Buffer.from('{}') });
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
    request.key = \`saga-\${randomUUID()}\`;
    await expect(attempt()).rejects.toBeInstanceOf(SagaCompensatedError);
    expect(ran).toEqual([names[0], names[1]]);
    expect(undone).toEqual([names[0]]);
  });

  async function claimLike(core: IdempotencyCore, id: string) {
    // Recompute exactly what the middleware would, by letting it claim through the core with the same inputs.
    const { computeFingerprint, pickFields } = await import('./fingerprint.js');
    const { deriveKey } = await import('./keys.js');
    const body = JSON.parse(JSON.stringify(SAMPLE.body).replaceAll('__ID__', id)) as unknown;
    const params = routeParams(ACTION.route, SAMPLE.url.replaceAll('__ID__', id));
    const key = USES_HEADER ? \`key-\${id}\` : deriveKey(ACTION.codeName, pickFields(ACTION.key.from ?? [], { params, body }));
    const fingerprint = computeFingerprint({ method: ACTION.method ?? 'POST', route: ACTION.route, fields: pickFields(ACTION.significantFields, { params, body }) });
    const scope = ACTION.scope === 'global' ? 'global' : 'user-a';
    const decision = await core.begin(ACTION, { scope, key, fingerprint });
    if (decision.kind !== 'execute') throw new Error(\`expected to claim, got \${decision.kind}\`);
    return { claim: decision.claim, scope, key };
  }
});

function routeParams(template: string, path: string): Record<string, string> {
  const names = template.split('/');
  const values = path.split('/');
  const params: Record<string, string> = {};
  names.forEach((segment, index) => {
    if (segment.startsWith(':')) params[segment.slice(1)] = decodeURIComponent(values[index] ?? '');
  });
  return params;
}
`;
}
