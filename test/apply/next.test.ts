import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Pool } from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { postgresSkipReason } from '../scaffold/harness.js';
import { createAppSchema, type AppSchema } from './blackBox.js';
import { compile, copyFixture } from './fixtureApp.js';

const run = promisify(execFile);

/**
 * The fixture's own devDependencies (@types/react, exact-pinned in its package.json) installed into its copy, so
 * the components type-check against real React types; next itself is not needed (the route handlers use the Web
 * Request/Response, the scaffold imports nothing from next).
 */
async function installDevDependencies(dir: string): Promise<string | undefined> {
  try {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    await run(npm, ['install', '--no-audit', '--no-fund', '--no-package-lock', '--ignore-scripts', '--loglevel=error'], { cwd: dir, timeout: 300_000 });
    return undefined;
  } catch (error) {
    const reason = `npm could not install the Next fixture's devDependencies (${(error as Error).message.split('\n')[0]})`;
    if (process.env.CI) throw new Error(`${reason}. CI must run these tests.`);
    return reason;
  }
}

const copy = await copyFixture('next');
const skip = (await postgresSkipReason()) ?? (await installDevDependencies(copy.dir));
if (skip) console.warn(`skipped: ${skip}`);

describe.skipIf(skip !== undefined)('apply on the Next.js fixture app (App Router route, Server Action, client components)', () => {
  let schema: AppSchema | undefined;
  afterAll(async () => {
    await schema?.drop();
    await copy.remove();
  });
  const read = (file: string) => readFile(path.join(copy.dir, file), 'utf8');

  it('wraps the route and the Server Action, wires the components, type-checks, and is a no-op the second time', async () => {
    expect(await compile(copy.dir)).toBe('');
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(first.stale).toEqual([]);
    expect(first.written).toBe(true);
    const route = await read('app/api/checkout/route.ts');
    expect(route).toContain("import { idempotency } from '../../../lib/idempotency/instance';\n");
    expect(route).toContain('async function createCheckoutHandler(request: Request) {');
    expect(route).toContain("export const POST = idempotency.withIdempotency('createCheckout', createCheckoutHandler);");
    const actions = await read('app/actions.ts');
    expect(actions).toContain("import { idempotency } from '@/lib/idempotency/instance';\n");
    expect(actions).toContain('async function saveNoteOnce(_idempotencyKey: string, formData: FormData): Promise<void> {');
    expect(actions).toContain("export const saveNote = idempotency.idempotentAction('saveNote', saveNoteOnce);");
    const button = await read('app/checkout/CheckoutButton.tsx');
    expect(button).toContain("import { useIdempotencyKey } from '@/lib/idempotency/useIdempotencyKey';");
    expect(button).toContain('  const createCheckoutIntent = useIdempotencyKey();\n');
    expect(button).toContain("'Idempotency-Key': createCheckoutIntent.key()");
    expect(button).toContain('}).then(createCheckoutIntent.settle);');
    const notes = await read('app/notes/NoteForm.tsx');
    expect(notes).toContain('<form action={async (formData: FormData) => { saveNoteIntent.settle(await saveNote(saveNoteIntent.key(), formData)); }}>');
    expect(notes).toContain('await saveNote(saveNoteIntent.key(), form).then(saveNoteIntent.settle);');
    expect(await read('lib/idempotency/useIdempotencyKey.ts')).toContain('export function useIdempotencyKey(): IntentKey {');
    // saveNote is scoped per user by default: the instance's principal is the user's to fill in, and says so.
    expect(first.manual.map((m) => m.reason)).toEqual([expect.stringContaining('keys of saveNote are scoped per user: make principal in lib/idempotency/instance.ts return the signed-in id')]);
    const record = JSON.parse(await read('.idempotency-builder/apply.json')) as { actions: Array<{ action: string; applied: unknown[] }> };
    expect(record.actions.map((a) => [a.action, a.applied.length])).toEqual([
      ['createCheckout', expect.any(Number)],
      ['saveNote', expect.any(Number)],
    ]);
    expect(await compile(copy.dir)).toBe('');

    const again = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(again.changes).toEqual([]);
    expect(again.written).toBe(false);
    // Two full type-checks of a React app on a shared machine: a harness limit, not a performance assertion.
  }, 600_000);

  it('runs the wrapped route handler once for 50 concurrent requests with the same key', async () => {
    schema = await createAppSchema('next', copy.migration, 'CREATE TABLE checkouts (id serial PRIMARY KEY, price_id text NOT NULL, quantity int NOT NULL)');
    process.env['DATABASE_URL'] = schema.url;
    const { POST } = (await import(path.join(copy.dir, 'app/api/checkout/route.ts'))) as { POST: (request: Request, context: unknown) => Promise<Response> };
    const { db } = (await import(path.join(copy.dir, 'lib/db.ts'))) as { db: Pool };
    const request = () =>
      new Request('http://127.0.0.1/api/checkout', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'checkout-7f3a' },
        body: JSON.stringify({ priceId: 'price_123', quantity: 2 }),
      });
    try {
      const answers = await Promise.all(Array.from({ length: 50 }, async () => {
        const response = await POST(request(), { params: Promise.resolve({}) });
        return { status: response.status, body: await response.text() };
      }));
      expect(answers.every((a) => [201, 409, 503].includes(a.status)), answers.map((a) => a.status).join(',')).toBe(true);
      // Repeat until the stored 201 is replayed (a loaded machine may answer the whole burst 409).
      let final = await POST(request(), { params: Promise.resolve({}) });
      for (let attempt = 0; final.status !== 201 && attempt < 200; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, Number(final.headers.get('retry-after') ?? '0') * 1000 || 50));
        final = await POST(request(), { params: Promise.resolve({}) });
      }
      expect(final.status).toBe(201);
      const created = [...answers.filter((a) => a.status === 201).map((a) => a.body), await final.text()];
      expect(new Set(created).size).toBe(1);
      expect((await schema.pool.query('SELECT count(*)::int AS n FROM checkouts')).rows[0].n).toBe(1);
    } finally {
      await db.end();
    }
  }, 120_000);
});
