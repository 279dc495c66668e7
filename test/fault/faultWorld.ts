import { rm } from 'node:fs/promises';
import path from 'node:path';
import { generateAndCompile, modelFor, ROOT, type Generated } from '../scaffold/generateInto.js';
import type { ProfileCase } from '../scaffold/profileCases.js';
import { startApp, type Adapter, type AppProcess } from './appProcess.js';
import { Barrier } from './barrier.js';
import { buildProfileProject } from './buildProfileProject.js';
import { FakeProvider } from './fakeProvider.js';
import { FaultProxy } from './faultProxy.js';
import { createBackend, createRecorder, patchModel, type Recorder, type StoreBackend, type StoredRecord, type StoreKind } from './stores.js';

const COMPILER_OPTIONS: Record<Adapter, Record<string, unknown>> = {
  express: {},
  fastify: {},
  nestjs: { experimentalDecorators: true, emitDecoratorMetadata: true },
  koa: {},
  hono: {},
  nextjs: {},
  none: {},
};

/**
 * Under a TypeScript profile, an adapter whose app the profile's compiler must build: a NestJS app is TypeScript with
 * decorators and their emitted metadata, so the app itself (controller, module, bootstrap) is compiled with the
 * scaffold under the profile's tsconfig and loaded as that project loads it, not wired in JavaScript.
 */
const COMPILED_APPS: Partial<Record<Adapter, string>> = {
  nestjs: path.join(ROOT, 'fixtures/profiles/nestjs-cjs-app/src'),
};

/**
 * Long enough that no lease lapses by itself while a slow machine runs a scenario: expiry is always the test's
 * explicit act (expireLease), so "the lease is still live" and "the lease has lapsed" are facts, not timings.
 */
const LEASE_MS = 120_000;

export interface PayOptions {
  readonly user?: string;
  /** Stop the handler at the barrier before or after its side effect. */
  readonly pause?: 'before' | 'after';
  readonly amount?: number;
}

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;
}

export interface KeyCounts {
  /** Times the handler started for this key. */
  readonly executions: number;
  /** Local side effects written (non-transactional, lease mode). */
  readonly effects: number;
  /** Charges the provider created for the key the scaffold derived: what the customer sees. */
  readonly charges: number;
}

/**
 * Everything one adapter's fault scenarios on one store need: its scaffold generated and compiled from the checkout
 * design, a throwaway database (schema, key prefix, table or file) of that store, the fault proxy in front of it
 * (none for embedded SQLite), the recorder's PostgreSQL schema, the fake provider, the barrier, and app processes.
 */
export class FaultWorld {
  readonly apps: AppProcess[] = [];
  private readonly spawned: AppProcess[] = [];

  private constructor(
    readonly adapter: Adapter,
    readonly generated: Generated,
    readonly store: StoreBackend,
    readonly recorder: Recorder,
    private readonly faultProxy: FaultProxy | undefined,
    readonly provider: FakeProvider,
    readonly barrier: Barrier,
    private readonly appMain?: string,
  ) {}

  /** The fault proxy between the apps and the store; an embedded store (SQLite) has none. */
  get proxy(): FaultProxy {
    if (!this.faultProxy) throw new Error(`${this.store.kind} is embedded: there is no network to fault`);
    return this.faultProxy;
  }

  static async create(adapter: Adapter, kind: StoreKind = 'postgres', profile?: ProfileCase): Promise<FaultWorld> {
    // The same design for every adapter, so every adapter answers the same scenarios the same way.
    const model = await modelFor('express-stripe-payments', (raw) => {
      (raw.stack as Record<string, unknown>).framework = adapter;
      (raw.stack as Record<string, unknown>).database = kind;
      // A 5 s store budget (the design's maximum): on a saturated 2-core machine a healthy store can take longer
      // than the default 500 ms, and these scenarios prove exactly-once, not latency. Faults are explicit instead.
      raw.detectionLatency = '500ms';
      if (profile) Object.assign(raw.stack as Record<string, unknown>, { language: profile.language, testFramework: profile.runner });
    });
    for (const action of model.actions) {
      action.lockTimeoutMs = LEASE_MS;
      action.heartbeatMs = undefined;
    }
    patchModel(kind, model);
    const label = [adapter, ...(kind === 'postgres' ? [] : [kind]), ...(profile ? [profile.label] : [])].join('-');
    const appSources = profile?.language === 'typescript' ? COMPILED_APPS[adapter] : undefined;
    const generated = profile
      ? await buildProfileProject(profile, model, `fault-${label}`, appSources)
      : await generateAndCompile(model, `fault-${label}`, COMPILER_OPTIONS[adapter]);
    if (generated.tscOutput) {
      // A project that does not compile is never disposed: remove it here, keeping only the error.
      await rm(generated.dir, { recursive: true, force: true });
      throw new Error(`the ${adapter} scaffold on ${kind}${profile ? ` (profile ${profile.label})` : ''} does not compile:\n${generated.tscOutput}`);
    }
    const { backend, schema } = await createBackend(kind, generated, model, `fault_${label.replace(/-/g, '_')}`);
    const recorder = await createRecorder(label.replace(/-/g, '_'), schema);
    const network = backend.network;
    const proxy = network ? await FaultProxy.start({ host: network.host, port: network.port }, network.wire) : undefined;
    const provider = await FakeProvider.start();
    const barrier = await Barrier.start();
    const appMain = appSources ? path.join(generated.outDir, '..', 'main.js') : undefined;
    return new FaultWorld(adapter, generated, backend, recorder, proxy, provider, barrier, appMain);
  }

  /** Starts an app process whose store goes through the proxy; it joins `apps`. */
  /** `spare`: not one of the two `apps` (killed on dispose all the same). */
  async startApp(options: { direct?: boolean; spare?: boolean } = {}): Promise<AppProcess> {
    const app = await startApp(this.adapter, {
      scaffoldOutDir: this.generated.outDir,
      scaffoldFormat: this.generated.format ?? 'esm',
      storeUrl: options.direct || !this.faultProxy ? this.store.url : this.faultProxy.urlFor(this.store.url),
      recorderUrl: this.recorder.url,
      providerUrl: this.provider.url,
      barrierUrl: this.barrier.url,
      ...(this.appMain ? { appMain: this.appMain } : {}),
    });
    if (!options.spare) this.apps.push(app);
    this.spawned.push(app);
    return app;
  }


  async pay(app: AppProcess, key: string, options: PayOptions = {}): Promise<Answer> {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'idempotency-key': key, 'x-user': options.user ?? 'usr_1' };
    if (options.pause) headers['x-fault-pause'] = options.pause;
    const response = await fetch(`${app.url}/payments`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ amount: options.amount ?? 4999, currency: 'EUR', recipientId: 'acct_9f3' }),
    });
    return { status: response.status, headers: response.headers, body: await response.text() };
  }

  /** A request whose connection the app may lose (killed mid-action): resolves to the answer or to 'connection lost'. */
  payOrLose(app: AppProcess, key: string, options: PayOptions = {}): Promise<Answer | 'connection lost'> {
    return this.pay(app, key, options).catch(() => 'connection lost' as const);
  }

  async counts(key: string): Promise<KeyCounts> {
    const { rows } = await this.recorder.pool.query<{ executions: number; effects: number }>(
      `SELECT (SELECT count(*)::int FROM fault_executions WHERE key = $1) AS executions,
              (SELECT count(*)::int FROM fault_effects WHERE key = $1) AS effects`,
      [key],
    );
    const charges = (await this.providerKeys(key)).reduce((sum, providerKey) => sum + this.provider.chargesFor(providerKey), 0);
    return { ...rows[0]!, charges };
  }

  /** The provider keys the executions of this client key derived (one per principal, whatever the attempt). */
  async providerKeys(key: string): Promise<string[]> {
    const { rows } = await this.recorder.pool.query<{ provider_key: string }>(
      'SELECT DISTINCT provider_key FROM fault_executions WHERE key = $1 ORDER BY provider_key',
      [key],
    );
    return rows.map((row) => row.provider_key);
  }

  async totals(): Promise<{ executions: number; keysExecuted: number; maxExecutionsPerKey: number }> {
    const { rows } = await this.recorder.pool.query<{ executions: number; keys: number; max: number }>(
      `SELECT coalesce(sum(n), 0)::int AS executions, count(*)::int AS keys, coalesce(max(n), 0)::int AS max
       FROM (SELECT count(*) AS n FROM fault_executions GROUP BY key) AS per_key`,
    );
    return { executions: rows[0]!.executions, keysExecuted: rows[0]!.keys, maxExecutionsPerKey: rows[0]!.max };
  }

  /** The stored record for a key (any principal), read directly from the store. */
  record(key: string): Promise<StoredRecord | undefined> {
    return this.store.record(key);
  }

  /**
   * Makes the key's lease lapse now, on the clock the store reads, exactly as if its whole duration had passed: the
   * record stays PROCESSING, only its lease ends. Stands in for waiting out the lease, which the scenarios must not do.
   */
  expireLease(key: string): Promise<void> {
    return this.store.expireLease(key);
  }

  async dispose(): Promise<void> {
    await Promise.all(this.spawned.map((app) => app.kill('SIGKILL')));
    await this.faultProxy?.close();
    await this.provider?.close();
    await this.barrier?.close();
    await this.recorder?.drop();
    await this.store?.drop();
    await rm(this.generated.dir, { recursive: true, force: true });
  }
}
