import { describe, expect, it } from 'vitest';
import type { Finding, Inspection } from '../../src/inspect/types.js';
import { configuredDialects, usedDatabases } from '../../src/inspect/stack/detectStack.js';
import { focusPackage, focusSources, stackFromInspection } from '../../src/questions/stackFromInspection.js';

type PackageStack = Omit<Inspection['stack'], 'packages' | 'root'>;
const base: PackageStack = { language: 'typescript', frameworks: [], databases: [], orms: [], brokers: [], testFramework: 'unknown', packageManager: 'pnpm', payments: [] };
const pkg = (dir: string, name: string, stack: Partial<PackageStack>) => ({ dir, name, stack: { ...base, ...stack } });

/** A workspace: a Next.js front end listed first, a Fastify API on MySQL, a Kafka worker; vitest only at the root. */
function workspace(findings: Finding[] = []): Inspection {
  const packages = [
    pkg('apps/web', 'web', { frameworks: ['nextjs'], databases: ['postgres'] }),
    pkg('apps/api', 'api', { frameworks: ['fastify'], databases: ['mysql'] }),
    pkg('apps/worker', 'worker', { language: 'javascript', brokers: ['kafka'] }),
  ];
  return {
    root: '/r',
    stack: { ...base, frameworks: ['fastify', 'nextjs'], databases: ['mysql', 'postgres'], brokers: ['kafka'], testFramework: 'vitest', packages },
    findings,
    warnings: [],
  };
}

const finding = (kind: Finding['kind'], file: string, pkgName: string): Finding =>
  ({ kind, id: `${kind}:${file}`, file, line: 1, package: pkgName }) as unknown as Finding;

describe('the stack of a monorepo follows the package that holds the handlers', () => {
  it('no handler found: the package that serves HTTP (an API before Next.js), with the root test runner', () => {
    expect(focusPackage(workspace())?.dir).toBe('apps/api');
    expect(stackFromInspection(workspace())).toEqual({ language: 'typescript', framework: 'fastify', database: 'mysql', broker: 'none', testFramework: 'vitest' });
  });

  it('the action sources decide first, then the inspected endpoints', () => {
    const inspection = workspace([finding('endpoint', 'apps/web/app/api/orders/route.ts', 'web')]);
    expect(stackFromInspection(inspection).framework).toBe('nextjs');
    expect(stackFromInspection(inspection, ['apps/api/src/routes/pay.ts:12']).framework).toBe('fastify');
  });

  it('a worker with only consumers is a known headless stack, in its own language and broker; no database client of its own: the repository preference', () => {
    const inspection = workspace([finding('consumer', 'apps/worker/src/consume.js', 'worker')]);
    expect(stackFromInspection(inspection)).toEqual({ language: 'javascript', framework: 'none', database: 'postgres', broker: 'kafka', testFramework: 'vitest' });
  });

  it('outside a workspace the repository facts answer as before', () => {
    const single: Inspection = { root: '/r', stack: { ...base, frameworks: ['express', 'nextjs'], databases: ['postgres'] }, findings: [], warnings: [] };
    expect(focusPackage(single)).toBeUndefined();
    expect(stackFromInspection(single).framework).toBeUndefined();
  });

  it('a package declaring several frameworks (every dependency in the root package.json) serves with the one its endpoints use', () => {
    // gitroomhq/postiz-app: apps/backend's package.json declares nothing, the root holds @nestjs/core and next.
    const backend = pkg('apps/backend', 'postiz-backend', { frameworks: ['nestjs', 'nextjs'], databases: ['postgres', 'redis'] });
    const endpoint = { ...finding('endpoint', 'apps/backend/src/api/routes/billing.controller.ts', 'postiz-backend'), framework: 'nestjs' } as Finding;
    const inspection: Inspection = { root: '/r', stack: { ...base, frameworks: ['nestjs', 'nextjs'], databases: ['postgres', 'redis'], packages: [backend] }, findings: [endpoint], warnings: [] };
    expect(stackFromInspection(inspection)).toMatchObject({ framework: 'nestjs', database: 'postgres' });
    // Endpoints in two frameworks settle nothing: the user picks, as before.
    const other = { ...finding('endpoint', 'apps/backend/app/api/route.ts', 'postiz-backend'), framework: 'nextjs' } as Finding;
    expect(stackFromInspection({ ...inspection, findings: [endpoint, other] }).framework).toBeUndefined();
  });

  it('a project testing with tap gets node:test suites (tap runs what prints TAP)', () => {
    const tap: Inspection = { root: '/r', stack: { ...base, frameworks: ['fastify'], databases: ['postgres'], testFramework: 'tap' }, findings: [], warnings: [] };
    expect(stackFromInspection(tap).testFramework).toBe('node-test');
  });

  it('the broker is the one the consumers read from, not the first the package declares (Inngest at the root beside BullMQ)', () => {
    const inspection = workspace([{ kind: 'consumer', id: 'c', file: 'apps/api/src/jobs.ts', line: 60, broker: 'bullmq', queue: 'jobs', dedupes: false, package: 'api' } as unknown as Finding]);
    const withInngest = { ...inspection, stack: { ...inspection.stack, packages: inspection.stack.packages!.map((p) => (p.name === 'api' ? { ...p, stack: { ...p.stack, brokers: ['inngest', 'bullmq'] } } : p)) } };
    expect(stackFromInspection(withInngest, ['apps/api/src/routes/pay.ts:12']).broker).toBe('bullmq');
    const noConsumer = { ...withInngest, findings: [] };
    // No consumer: the first broker the config can name.
    expect(stackFromInspection(noConsumer, ['apps/api/src/routes/pay.ts:12']).broker).toBe('bullmq');
  });

  it("a root with code of its own beside side services (Larriche/orders-bullmq@be502b6): the root's own stack; MongoDB with Redis stores in Redis", () => {
    // The root app keeps its data in MongoDB and runs BullMQ on Redis; event-service/ is an Express service on SQLite.
    const service = pkg('event-service', 'event-service', { frameworks: ['express'], databases: ['mongodb', 'sqlite'] });
    const own = { ...base, frameworks: ['express'], databases: ['mongodb', 'redis'], brokers: ['bullmq'] };
    const consumer = { ...finding('consumer', 'src/oxen-lib/Oxen.ts', ''), package: undefined, broker: 'bullmq' } as unknown as Finding;
    const cron = finding('cron', 'event-service/server.ts', 'event-service');
    const inspection: Inspection = { root: '/r', stack: { ...base, frameworks: ['express'], databases: ['mongodb', 'redis', 'sqlite'], brokers: ['bullmq'], packages: [service], root: own }, findings: [consumer, cron], warnings: [] };
    expect(focusPackage(inspection, ['src/oxen-lib/Oxen.ts:298'])).toMatchObject({ dir: '' });
    expect(stackFromInspection(inspection, ['src/oxen-lib/Oxen.ts:298'])).toMatchObject({ framework: 'express', database: 'redis', broker: 'bullmq' });
    expect(focusPackage(inspection, ['event-service/server.ts:371'])?.dir).toBe('event-service');
    // Without code at the root (a workspace root of configs), a root-level source says nothing, as before.
    const bare: Inspection = { ...inspection, stack: { ...inspection.stack, root: undefined } };
    expect(focusPackage(bare, ['src/oxen-lib/Oxen.ts:298'])?.dir).toBe('event-service');
  });

  it("routes decide the focus before a consumer in a shared library (Francisco-cor/Inventory_ERP_BullMQ@23968a6)", () => {
    const actions = [
      { trigger: 'consumer', source: 'packages/event-bus/src/bus.ts:94' },
      { trigger: 'http', source: 'services/svc-ordenes/src/routes/ordenes.ts:128' },
    ];
    expect(focusSources(actions)).toEqual(['services/svc-ordenes/src/routes/ordenes.ts:128', 'packages/event-bus/src/bus.ts:94']);
    const bus = pkg('packages/event-bus', '@erp/event-bus', { brokers: ['bullmq'] });
    const orders = pkg('services/svc-ordenes', '@erp/svc-ordenes', { frameworks: ['fastify'], databases: ['postgres'], brokers: ['bullmq'] });
    const inspection: Inspection = { root: '/r', stack: { ...base, frameworks: ['fastify'], databases: ['postgres'], brokers: ['bullmq'], packages: [bus, orders] }, findings: [], warnings: [] };
    expect(stackFromInspection(inspection, focusSources(actions))).toMatchObject({ framework: 'fastify', database: 'postgres' });
  });

  it('a SQLite driver the package declares but never imports, with no ORM to load it, is not its database', () => {
    const declared = { ...base, databases: ['mongodb', 'redis', 'sqlite'], orms: ['mongoose'] };
    expect(usedDatabases(declared, ['mongoose', 'bullmq', 'express'])).toEqual(['mongodb', 'redis']);
    expect(usedDatabases(declared, ['better-sqlite3', 'mongoose'])).toEqual(['mongodb', 'redis', 'sqlite']);
    expect(usedDatabases({ ...declared, orms: ['knex'] }, ['knex'])).toEqual(['mongodb', 'redis', 'sqlite']);
  });

  it("the dialect the ORM is configured for decides between declared drivers (itaminul/Doctor-Management-System@c63df53: TypeORM on MySQL, pg declared too)", () => {
    const dataSource = "import { DataSourceOptions } from 'typeorm';\nexport const AppDataSource: DataSourceOptions = {\n  type: 'mysql',\n  host: '192.168.0.106',\n};\n";
    expect(configuredDialects(dataSource)).toEqual(['mysql']);
    expect(configuredDialects("const sequelize = new Sequelize(url, { dialect: 'postgres' });")).toEqual(['postgres']);
    expect(configuredDialects("module.exports = { client: 'pg', connection: process.env.DATABASE_URL }; // knex")).toEqual(['postgres']);
    // `type:` elsewhere (no ORM in the file, or a value that is no database) says nothing.
    expect(configuredDialects("const field = { type: 'postgres' };")).toEqual([]);
    expect(configuredDialects("import { DataSource } from 'typeorm';\nconst column = { type: 'varchar' };")).toEqual([]);
    const stack = { ...base, databases: ['mysql', 'postgres'], orms: ['mysql2', 'pg', 'typeorm'] };
    expect(usedDatabases(stack, ['typeorm', '@nestjs/typeorm'], new Set(['mysql']))).toEqual(['mysql']);
    // A driver the code imports itself stays; with no configuration found, both stay as before.
    expect(usedDatabases(stack, ['typeorm', 'pg'], new Set(['mysql']))).toEqual(['mysql', 'postgres']);
    expect(usedDatabases(stack, ['typeorm'])).toEqual(['mysql', 'postgres']);
  });
});
