import { BROKERS, DATABASES, FRAMEWORKS, LANGUAGES, TEST_FRAMEWORKS } from '../config/schema.js';
import type { Inspection } from '../inspect/types.js';
import type { StackAnswer } from './types.js';

/** Which detected database to design for when several are present: a cache (Redis) is rarely the system of record. */
/**
 * The store's database when the project has several: a relational one first (the claim can commit with the writes),
 * then the others with a store module, then MongoDB, which has a design but no store module yet: a MongoDB app that
 * also runs Redis (BullMQ's, a cache) gets a store that runs on what it has, not the PostgreSQL reference.
 */
const DATABASE_PREFERENCE = ['postgres', 'mysql', 'mariadb', 'libsql', 'sqlite', 'dynamodb', 'redis', 'mongodb'] as const;
/** Inspector names outside the config enums, mapped to the closest design. */
const BROKER_ALIASES: Record<string, StackAnswer['broker']> = {};

export type StackDraft = { [K in keyof StackAnswer]: StackAnswer[K] | undefined };

/** API frameworks before Next.js: in a workspace with both, the Next.js app is usually the front end (as in serverPackage.ts). */
const SERVER_RANK = ['express', 'fastify', 'nestjs', 'koa', 'hono', 'nextjs'];

type PackageEntry = NonNullable<Inspection['stack']['packages']>[number];

/**
 * The action sources in the order that picks the focus package: routes and webhooks first, since they need the
 * package's HTTP framework; a consumer in a shared library (an event-bus package) must not make a Fastify service's
 * stack "no HTTP framework".
 */
export function focusSources(actions: ReadonlyArray<{ trigger: string; source?: string }>): Array<string | undefined> {
  const served = (trigger: string) => trigger === 'http' || trigger === 'webhook';
  return [...actions.filter((a) => served(a.trigger)), ...actions.filter((a) => !served(a.trigger))].map((a) => a.source);
}

/**
 * In a monorepo, the package whose stack answers Q2: the one holding the first protected handler (the action sources
 * given, else the inspected endpoints, else any finding), the root itself when that handler is the root's own code,
 * else the package that serves HTTP. The same package the
 * scaffold goes to (scaffoldQuestion's default folder), so the code is written for the stack it lands in.
 * Undefined outside a workspace, or when no package is either.
 */
export function focusPackage(inspection: Inspection, sources: ReadonlyArray<string | undefined> = []): PackageEntry | undefined {
  const packages = inspection.stack.packages ?? [];
  if (packages.length === 0) return undefined;
  const files = [
    ...sources.filter((source): source is string => Boolean(source)),
    ...inspection.findings.filter((f) => f.kind === 'endpoint').map((f) => f.file),
    ...inspection.findings.map((f) => f.file),
  ];
  for (const file of files) {
    const normalized = file.replace(/\\/g, '/').replace(/^\.\//, '');
    const owner = packages
      .filter((pkg) => pkg.dir !== '' && normalized.startsWith(`${pkg.dir}/`))
      .sort((a, b) => b.dir.length - a.dir.length)[0];
    if (owner) return owner;
    // Outside every package, in a root that has code of its own: the root package (its own facts, not the union).
    const root = inspection.stack.root;
    if (root) return { dir: '', name: '', stack: root };
  }
  const rank = (pkg: PackageEntry) => Math.min(...pkg.stack.frameworks.map((f) => SERVER_RANK.indexOf(f)).filter((i) => i >= 0), Infinity);
  return packages
    .map((pkg, index) => ({ pkg, index, rank: rank(pkg) }))
    .filter((entry) => entry.rank !== Infinity)
    .sort((a, b) => a.rank - b.rank || a.index - b.index)[0]?.pkg;
}

/**
 * Stack facts mapped onto the config's enums; a part the code does not settle stays undefined. In a monorepo the
 * facts are the focus package's (see focusPackage), not the union over every package: an Express API beside a
 * Next.js front end is an Express stack. What that package leaves open (no database client of its own, a test runner
 * declared at the root) comes from the repository.
 */
export function stackFromInspection(inspection: Inspection, sources: ReadonlyArray<string | undefined> = []): StackDraft {
  const focus = focusPackage(inspection, sources);
  const whole = inspection.stack;
  const facts = focus
    ? {
        ...whole,
        language: focus.stack.language !== 'unknown' ? focus.stack.language : whole.language,
        frameworks: focus.stack.frameworks,
        databases: focus.stack.databases.length > 0 ? focus.stack.databases : whole.databases,
        brokers: focus.stack.brokers,
        testFramework: focus.stack.testFramework !== 'unknown' ? focus.stack.testFramework : whole.testFramework,
      }
    : whole;
  const findings = focus ? inspection.findings.filter((f) => f.package === undefined || f.package === focus.name) : inspection.findings;
  const language = facts.language !== 'unknown' ? LANGUAGES.find((l) => l === facts.language) : undefined;
  const declared = facts.frameworks.flatMap((f) => FRAMEWORKS.filter((known) => known === f));
  // A package that declares several (a workspace whose dependencies all sit in the root package.json) serves with the
  // framework its endpoints were found in: postiz's apps/backend sees @nestjs/core and next, and its routes are NestJS.
  const served = [...new Set(findings.flatMap((f) => (f.kind === 'endpoint' ? [f.framework] : [])))].flatMap((f) => FRAMEWORKS.filter((known) => known === f));
  const frameworks = declared.length > 1 && served.length === 1 && declared.includes(served[0]!) ? served : declared;
  const kinds = new Set(findings.map((f) => f.kind));
  // A worker with consumers or jobs and no HTTP framework is a real, known stack: framework "none".
  const headless = frameworks.length === 0 && !kinds.has('endpoint') && (kinds.has('consumer') || kinds.has('cron'));
  const database = DATABASE_PREFERENCE.find((d) => facts.databases.includes(d));
  // The broker the consumers found read from comes first (a workspace's root may declare another everywhere: Inngest
  // beside BullMQ), then the first one the config can name.
  const known = (name: string) => BROKERS.find((b) => b === name) ?? BROKER_ALIASES[name];
  const consumed = inspection.findings.flatMap((f) => (f.kind === 'consumer' && known(f.broker) !== undefined ? [f.broker] : []));
  const brokerName = consumed[0] ?? facts.brokers.find((name) => known(name) !== undefined) ?? facts.brokers[0];
  const broker = brokerName === undefined ? (language ? 'none' : undefined) : (known(brokerName) ?? 'unknown');
  // node-tap runs node:test files (they print TAP): the suites are written for node:test and the project's tap runs them.
  const testFramework = facts.testFramework === 'tap' ? 'node-test' : TEST_FRAMEWORKS.find((t) => t === facts.testFramework && t !== 'unknown');
  return {
    language,
    framework: frameworks.length === 1 ? frameworks[0] : headless ? 'none' : undefined,
    database: DATABASES.find((d) => d === database),
    broker,
    testFramework,
  };
}

/** Job queues that keep their state in a database: a project using one has that database even if it names no client. */
const DATABASE_BACKED_BROKERS = ['bullmq', 'bull', 'bee-queue', 'graphile-worker', 'pg-boss', 'agenda'];

/**
 * Inspection read the project's package.json files and found no database at all: no client, no ORM or query builder
 * (whose database it could not tell), no job queue that lives in one, in no package of the repository (the focus
 * package's own facts are among them). Distinct from "not known": no manifest, or no inspection, says nothing about the database.
 */
export function foundNoDatabase(inspection: Inspection): boolean {
  if (!inspection.manifestRead) return false;
  const stacks = [inspection.stack, ...(inspection.stack.packages ?? []).map((pkg) => pkg.stack)];
  return stacks.every(
    (stack) => stack.databases.length === 0 && stack.orms.length === 0 && !stack.brokers.some((broker) => DATABASE_BACKED_BROKERS.includes(broker)),
  );
}

/** Several frameworks detected (e.g. a Next.js front with an Express API): the user picks, the list narrows the choice. */
export function detectedFrameworks(inspection: Inspection): StackAnswer['framework'][] {
  return inspection.stack.frameworks.flatMap((f) => FRAMEWORKS.filter((known) => known === f));
}
