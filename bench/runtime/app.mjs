// One contender of the runtime benchmark, in its own process: an Express app whose POST /effects handler does the same
// one INSERT into PostgreSQL (bench_effects), behind the contender's idempotency layer. Prints "LISTENING <port>".
// Environment: CONTENDER, DATABASE_URL (search_path set to the bench schema), SCAFFOLD_DIR (compiled scaffolding),
// REDIS_URL, RUN_ID (prefix for every key the peers keep in Redis).
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import express from 'express';
import pg from 'pg';

const { CONTENDER, DATABASE_URL, SCAFFOLD_DIR, REDIS_URL = 'redis://127.0.0.1:6379', RUN_ID = 'rbench' } = process.env;
const INSERT = 'INSERT INTO bench_effects (contender, key) VALUES ($1, $2)';
const keyOf = (req) => String(req.get('idempotency-key') ?? '');
const answer = (key) => ({ saved: true, key });

const app = express();
app.use(express.json());
const appPool = new pg.Pool({ connectionString: DATABASE_URL, max: 10 });
appPool.on('error', () => undefined);

const contenders = {
  /** No idempotency: the handler alone, the baseline every ratio is taken against. */
  async bare() {
    app.post('/effects', async (req, res) => {
      await appPool.query(INSERT, [CONTENDER, keyOf(req)]);
      res.status(201).json(answer(keyOf(req)));
    });
  },

  /** Ours, transactional mode: the handler writes through the claim's transaction (one COMMIT per first request). */
  async 'ours-transactional'() {
    const scaffold = await import(pathToFileURL(path.join(SCAFFOLD_DIR, 'index.js')).href);
    const idempotency = scaffold.createIdempotency({ pool: scaffold.createPool(DATABASE_URL, scaffold.POLICY), principal: () => 'bench' });
    app.post(
      '/effects',
      idempotency.recordEffectTx,
      scaffold.asyncHandler(async (req, res) => {
        const context = scaffold.idempotencyOf(req);
        await context.db.query(INSERT, [CONTENDER, keyOf(req)]);
        res.status(201).json(answer(keyOf(req)));
      }),
    );
  },

  /** Ours, lease mode: the claim commits first, the handler writes on its own connection, then the completion. */
  async 'ours-lease'() {
    const scaffold = await import(pathToFileURL(path.join(SCAFFOLD_DIR, 'index.js')).href);
    const idempotency = scaffold.createIdempotency({ pool: scaffold.createPool(DATABASE_URL, scaffold.POLICY), principal: () => 'bench' });
    app.post(
      '/effects',
      idempotency.recordEffectLease,
      scaffold.asyncHandler(async (req, res) => {
        await appPool.query(INSERT, [CONTENDER, keyOf(req)]);
        res.status(201).json(answer(keyOf(req)));
      }),
    );
  },

  /** express-idempotency 1.0.6 with its default (in-process memory) data adapter: the only one it ships. */
  async 'express-idempotency'() {
    const { idempotency, getSharedIdempotencyService } = await import('express-idempotency');
    app.post('/effects', idempotency(), async (req, res) => {
      if (getSharedIdempotencyService().isHit(req)) return;
      await appPool.query(INSERT, [CONTENDER, keyOf(req)]);
      res.status(201).json(answer(keyOf(req)));
    });
  },

  /**
   * @node-idempotency/core 1.0.11 with its Redis storage adapter. It ships no Express adapter (only NestJS / Fastify
   * ones), so this is the few lines of glue its README describes: onRequest before, onResponse after.
   */
  async 'node-idempotency'() {
    const { Idempotency, IdempotencyErrorCodes } = await import('@node-idempotency/core');
    const { RedisStorageAdapter } = await import('@node-idempotency/storage-adapter-redis');
    const storage = new RedisStorageAdapter({ url: REDIS_URL });
    await storage.connect();
    const idempotency = new Idempotency(storage, { cacheKeyPrefix: `${RUN_ID}-node-idempotency`, cacheTTLMS: 600_000 });
    app.post('/effects', async (req, res) => {
      const request = { headers: req.headers, path: req.path, body: req.body, method: req.method };
      try {
        const cached = await idempotency.onRequest(request);
        if (cached) return res.status(Number(cached.additional?.status ?? 200)).json(cached.body);
      } catch (error) {
        const code = error?.code;
        if (code === IdempotencyErrorCodes.REQUEST_IN_PROGRESS) return res.status(409).json({ error: code });
        if (code === IdempotencyErrorCodes.IDEMPOTENCY_FINGERPRINT_MISSMATCH) return res.status(422).json({ error: code });
        return res.status(500).json({ error: String(error) });
      }
      await appPool.query(INSERT, [CONTENDER, keyOf(req)]);
      const body = answer(keyOf(req));
      await idempotency.onResponse(request, { body, additional: { status: 201 } });
      res.status(201).json(body);
    });
  },

  /**
   * @aws-lambda-powertools/idempotency 2.35.0, makeIdempotent around the handler's work, with its cache (Redis)
   * persistence layer: DynamoDB is not available here, Redis is.
   */
  async powertools() {
    const { makeIdempotent, IdempotencyConfig } = await import('@aws-lambda-powertools/idempotency');
    const { CachePersistenceLayer } = await import('@aws-lambda-powertools/idempotency/cache');
    const { createClient } = await import('@redis/client');
    const client = await createClient({ url: REDIS_URL }).connect();
    const persistenceStore = new CachePersistenceLayer({ client });
    const config = new IdempotencyConfig({ eventKeyJmesPath: 'key', expiresAfterSeconds: 600 });
    // Outside Lambda there is no invocation deadline; without one it logs a warning on every call. A context with a
    // minute left gives the in-progress record the expiry a Lambda of that timeout would.
    config.registerLambdaContext({ getRemainingTimeInMillis: () => 60_000 });
    const work = makeIdempotent(
      async (event) => {
        await appPool.query(INSERT, [CONTENDER, event.key]);
        return answer(event.key);
      },
      { persistenceStore, config },
    );
    app.post('/effects', async (req, res) => {
      try {
        res.status(201).json(await work({ key: keyOf(req), body: req.body }));
      } catch (error) {
        const inProgress = error?.name === 'IdempotencyAlreadyInProgressError';
        res.status(inProgress ? 409 : 500).json({ error: error?.name ?? String(error) });
      }
    });
  },
};

// The orchestrator reads the app's own CPU time around each run: a figure the shared machine's load disturbs less
// than throughput does.
app.get('/cpu', (req, res) => res.json(process.cpuUsage()));

const setup = contenders[CONTENDER];
if (!setup) {
  console.error(`unknown contender ${CONTENDER}; one of ${Object.keys(contenders).join(', ')}`);
  process.exit(2);
}
await setup();
const server = app.listen(0, '127.0.0.1', () => console.log(`LISTENING ${server.address().port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
