import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateAndCompile, modelFor, type Generated } from './generateInto.js';
import { createSchema, loadScaffold, postgresSkipReason, type Loose, type Schema } from './harness.js';

const skip = await postgresSkipReason();
if (skip) console.warn(`log-only rollout on Next.js and PostgreSQL skipped: ${skip}`);

/** An App Router route handler and a Server Action, both rolled out log-only, then enforced over the same records. */
const design = (rollout: 'log-only' | 'enforce') =>
  modelFor('express-stripe-payments', (raw) => {
    (raw.stack as Record<string, unknown>).framework = 'nextjs';
    const switched = rollout === 'log-only' ? { rollout } : {};
    raw.actions = [
      { name: 'saveNote', trigger: 'http', route: 'POST /api/notes', significantFields: ['text'], scope: 'user', mode: 'lease', expectedDurationMs: 100, ...switched },
      { name: 'submitNote', trigger: 'http', route: 'POST /submitNote', transport: 'server-action', significantFields: ['text'], scope: 'user', mode: 'lease', expectedDurationMs: 100, ...switched },
    ];
  });

describe.skipIf(skip !== undefined)('log-only rollout through the Next.js wrappers on PostgreSQL', () => {
  const folders: Generated[] = [];
  let schema: Schema;
  const would: string[] = [];
  const session: { user?: string } = { user: 'usr_a' };
  let route: (request: Request) => Promise<Response>;
  let action: (key: string, text: string) => Promise<{ note: number }>;

  /** The app's handlers over one scaffold: both insert a note through the app's own pool. */
  const wire = (scaffold: Loose, events?: object) => {
    const idempotency = scaffold.createIdempotency({
      pool: schema.pool,
      principal: (request: unknown) => (request instanceof Request ? (request.headers.get('x-user') ?? undefined) : session.user),
      ...(events ? { events } : {}),
    });
    const insert = async (text: string) => Number((await schema.pool.query<{ id: number }>('INSERT INTO notes (text) VALUES ($1) RETURNING id', [text])).rows[0]!.id);
    return {
      route: idempotency.withIdempotency('saveNote', async (request: Request) => Response.json({ note: await insert(((await request.json()) as { text: string }).text) }, { status: 201 })) as (request: Request) => Promise<Response>,
      action: idempotency.idempotentAction('submitNote', async (_key: string, text: string) => ({ note: await insert(text) })) as (key: string, text: string) => Promise<{ note: number }>,
    };
  };
  const post = (key: string | undefined, text: string) =>
    route(new Request('http://next.test/api/notes', { method: 'POST', headers: { 'content-type': 'application/json', 'x-user': 'usr_a', ...(key ? { 'idempotency-key': key } : {}) }, body: JSON.stringify({ text }) }));
  const notes = async (text: string) => Number((await schema.pool.query<{ n: string }>('SELECT count(*) AS n FROM notes WHERE text = $1', [text])).rows[0]!.n);

  beforeAll(async () => {
    const logOnly = await generateAndCompile(await design('log-only'), 'logonly-next');
    folders.push(logOnly);
    expect(logOnly.tscOutput).toBe('');
    schema = await createSchema(logOnly, 'logonlynext');
    await schema.pool.query('CREATE TABLE notes (id serial PRIMARY KEY, text text NOT NULL)');
    ({ route, action } = wire(await loadScaffold(logOnly), { logOnly: (_action: string, outcome: string) => would.push(outcome) }));
  });

  afterAll(async () => {
    await schema?.drop();
    for (const folder of folders) await rm(folder.dir, { recursive: true, force: true });
  });

  it('a route handler runs for each of 10 concurrent same-key requests; the first is recorded, the others counted', async () => {
    const answers = await Promise.all(Array.from({ length: 10 }, () => post('route-key', 'route')));
    expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(201));
    expect(await notes('route')).toBe(10);
    expect(would.filter((outcome) => outcome === 'in-flight' || outcome === 'replay')).toHaveLength(9);
    expect((await post(undefined, 'route, no key')).status).toBe(201);
    expect(would).toContain('refuse');
  });

  it('a Server Action runs on a repeated key, an invalid key and without a session, and throws nothing', async () => {
    would.length = 0;
    expect(await action('action-key', 'action')).toEqual({ note: expect.any(Number) });
    expect(await action('action-key', 'action')).toEqual({ note: expect.any(Number) });
    expect(await action('', 'action')).toEqual({ note: expect.any(Number) });
    session.user = undefined;
    expect(await action('other-key', 'action')).toEqual({ note: expect.any(Number) });
    session.user = 'usr_a';
    expect(await notes('action')).toBe(4);
    expect(would).toEqual(['replay', 'refuse', 'refuse']);
  });

  it('regenerated with "enforce", the recorded route answer replays and a repeated action returns its stored result', async () => {
    const enforce = await generateAndCompile(await design('enforce'), 'logonly-next-enforce');
    folders.push(enforce);
    expect(enforce.tscOutput).toBe('');
    ({ route, action } = wire(await loadScaffold(enforce)));
    const replay = await post('route-key', 'route');
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await notes('route')).toBe(10);
    await action('action-key', 'action');
    expect(await notes('action')).toBe(4);
    expect((await post(undefined, 'route, no key')).status).toBe(400);
  });
});
