import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { NO_AUTHENTICATION } from '../../src/apply/transforms/expressRoute.js';
import { copyFixture, type FixtureCopy } from './fixtureApp.js';

/**
 * Issue #19/#15: what authenticates an Express route is read from the route's own middleware, its router's use()
 * before it, the middleware where the router is mounted and a route().all() chain, each middleware by what it does
 * (checkCaller verifies a bearer token; validate() only parses the body), not by counting arguments.
 */
describe('apply on an Express app that authenticates per router and per mount', () => {
  let copy: FixtureCopy | undefined;
  afterEach(async () => {
    await copy?.remove();
    copy = undefined;
  });

  const unauthenticated = (manual: ReadonlyArray<{ action: string; reason: string }>) => manual.filter((m) => m.reason.startsWith(NO_AUTHENTICATION)).map((m) => m.action).sort();

  it('says only of the public sign-up and the validate()-only route that nothing authenticates them, and mounts the middleware right before each handler', async () => {
    copy = await copyFixture('express-route-auth');
    const first = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(first.stale).toEqual([]);
    expect(unauthenticated(first.manual)).toEqual(['createReview', 'registerUser']);
    const step = first.manual.find((m) => m.action === 'registerUser' && m.reason.startsWith(NO_AUTHENTICATION));
    expect(step?.reason).toContain('nor on its router before it, nor where the router is mounted');
    expect(step?.reason).toContain('set "scope": "global" for it in the config');

    const read = (file: string) => readFile(path.join(copy!.dir, file), 'utf8');
    // After the route's own validate(): the fingerprint sees the parsed body, and our claim runs after any auth.
    expect(await read('src/routes/auth.ts')).toContain("authRouter.post('/register', validate(registerSchema), idempotency.registerUser, async (req, res) => {");
    expect(await read('src/routes/reviews.ts')).toContain("reviewsRouter.post('/:id/replies', checkCaller, idempotency.createReply, async (req, res) => {");
    expect(await read('src/routes/orders.ts')).toContain("ordersRouter.post('/', idempotency.createOrder, async (req, res) => {");

    // Read again once wired, the routes say the same: our own middleware is no authentication, and nothing moved.
    const again = await runApply({ cwd: copy.dir, yes: true, quiet: true }, { interactive: false });
    expect(again.changes).toEqual([]);
    expect(unauthenticated(again.manual)).toEqual(['createReview', 'registerUser']);
  }, 300_000);

  it('an app-wide auth middleware before the mounts authenticates every route; a global scope silences the step', async () => {
    copy = await copyFixture('express-route-auth', (text) => text.replace('"name": "createReview", "trigger": "http"', '"name": "createReview", "scope": "global", "trigger": "http"'));
    const app = path.join(copy.dir, 'src/app.ts');
    await writeFile(app, (await readFile(app, 'utf8')).replace("app.use('/auth', authRouter);", "app.use('/auth', authRouter);\napp.use(checkCaller);"));
    const plan = await runApply({ cwd: copy.dir, dryRun: true, quiet: true }, { interactive: false });
    // The sign-up is mounted before app.use(checkCaller), so it stays public; the reviews route is keyed globally.
    expect(unauthenticated(plan.manual)).toEqual(['registerUser']);
  }, 300_000);
});
