import { readFileSync } from 'node:fs';
import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import { analyseFile } from './analyseFile.js';
import { textDetectors } from './detectors/auxiliaryFiles.js';
import { USE_SERVER } from './detectors/rpcEndpoints.js';
import { VIEW_TEMPLATE } from './files/classifyPath.js';
import { isFrontEndPath, isFrontEndSource } from './files/isFrontEnd.js';
import { printable } from './files/printable.js';
import { walkProject, type ProjectFile } from './files/walkProject.js';
import { buildEndpoints, type BuiltEndpoint } from './resolve/buildEndpoints.js';
import { expandRecordedWrappers } from './resolve/consumerWrappers.js';
import { FunctionGraph } from './resolve/functionGraph.js';
import { resolveImportedNames } from './resolve/importedNames.js';
import { linkWebhooks, unusedVerifierNames } from './resolve/linkWebhooks.js';
import { linkServerForms } from './resolve/serverForms.js';
import { messageSeeds } from './resolve/messageSeeds.js';
import type { FileRecord, ProjectRecords } from './resolve/projectRecords.js';
import { configuredDialects, detectStack, importedFrameworks, usedDatabases, mergeStacks, sorted, type PackageStack } from './stack/detectStack.js';
import { authenticationInCode, authenticationPackages } from './stack/authentication.js';
import { findWorkspaces, type WorkspacePackage } from './stack/findWorkspaces.js';
import { readManifest } from './stack/readManifest.js';
import { tsconfigAliasesAt } from '../scaffold/profile/pathAliases.js';
import { sortFindings } from './sortFindings.js';
import { located, prismaConnection } from './detectors/dbConnection.js';
import { pickConnections, sequelizeConfigOf } from './stack/storeConnection.js';
import type { Finding, InspectOptions, Inspection, PackageManager, RouteAuthentication } from './types.js';

export type * from './types.js';

interface PackageScope {
  dir: string;
  name?: string;
  stack: PackageStack;
}

/**
 * Inspects a TypeScript/JavaScript codebase: stack facts and the places that need idempotency. Syntactic only
 * (no type checker), so it stays close to the cost of parsing; results are plain data.
 */
export async function inspectProject(dir: string, options: InspectOptions = {}): Promise<Inspection> {
  const root = path.resolve(dir);
  const rootManifest = await readManifest(root);
  const workspaces = await findWorkspaces(root, rootManifest);
  const walked = await walkProject(root);
  const warnings = walked.warnings;
  // Our own generated layer is not the user's code: it would show up as cron jobs and "already protected".
  const generated = await generatedPaths(root);
  const files = walked.files.filter((file) => !generated.has(file.rel));
  const lockfileManager = await detectLockfile(root);

  const scopeDirs = ['', ...workspaces.map((w) => w.dir)];
  const scopeOf = (rel: string) => scopeDirs.filter((d) => d === '' || rel === d || rel.startsWith(`${d}/`)).sort((a, b) => b.length - a.length)[0] ?? '';
  const texts = new Map<string, string>();
  for (const file of files.filter((f) => f.kind === 'auxiliary')) texts.set(file.rel, await readFile(file.abs, 'utf8').catch(() => ''));

  const scopes = new Map<string, PackageScope>();
  for (const scopeDir of scopeDirs) {
    const inScope = files.filter((f) => f.kind === 'source' && scopeOf(f.rel) === scopeDir);
    const ws = workspaces.find((w) => w.dir === scopeDir);
    // A multi-file schema (prisma/schema/*.prisma) declares its datasource in one of them.
    const prisma = [...texts].find(([rel, text]) => rel.endsWith('.prisma') && scopeOf(rel) === scopeDir && DATASOURCE.test(text))?.[1] ?? sharedPrismaSchema(texts);
    const stack = detectStack(ws ? [ws.manifest, rootManifest] : [rootManifest], {
      tsFiles: inScope.filter((f) => /\.[cm]?tsx?$/.test(f.rel)).length,
      jsFiles: inScope.filter((f) => /\.[cm]?jsx?$/.test(f.rel)).length,
      hasTsconfig: await exists(path.join(root, scopeDir, 'tsconfig.json')),
      lockfileManager,
      ...(prisma ? { prismaProvider: /provider\s*=\s*"(\w+)"/.exec(prisma.slice(prisma.indexOf('datasource')))?.[1] } : {}),
    });
    scopes.set(scopeDir, { dir: scopeDir, ...(ws ? { name: ws.name } : {}), stack });
  }
  // Known only for a package whose code is read: the packages it declares, then code that authenticates by itself.
  const authentication = new Map<string, Set<string>>();
  for (const scopeDir of scopeDirs) {
    if (!files.some((f) => f.kind === 'source' && scopeOf(f.rel) === scopeDir)) continue;
    const ws = workspaces.find((w) => w.dir === scopeDir);
    authentication.set(scopeDir, new Set(authenticationPackages(ws ? [ws.manifest, rootManifest] : [rootManifest])));
  }

  const aliases = tsconfigAliasesAt(root);
  const records: ProjectRecords = { files: new Map(), packagesByName: new Map(workspaces.map((w) => [w.name, w.dir])), ...(aliases.length > 0 ? { aliases } : {}) };
  const sources = files.filter((f) => f.kind === 'source');
  // The database each package's ORM is configured for (TypeORM `type: 'mysql'`, Sequelize `dialect`, knex `client`).
  const dialects = new Map<string, Set<string>>();
  let done = 0;
  for (const [index, file] of sources.entries()) {
    // Read synchronously: a file here is small (the walk skips any over 1 MB), and the promise API's four round trips
    // through libuv's threads (open, stat, read, close) took five times as long on medusa, the parse waiting for them.
    // The event loop still gets a turn every READ_TURN files (progress output, signals).
    if (index > 0 && index % READ_TURN === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    const text = readSource(file.abs);
    if (text !== undefined && isBundled(text)) warnings.push(`${file.rel}: skipped, minified or bundled output (very long lines).`);
    else if (text !== undefined) {
      analyseOrWarn(file, text, scopes.get(scopeOf(file.rel)) as PackageScope, records, warnings);
      const found = authentication.get(scopeOf(file.rel));
      // One piece of evidence per package is enough to know callers can be authenticated.
      const evidence = found && ![...found].some((e) => e.includes(' (')) ? authenticationInCode(file.rel, text) : undefined;
      if (evidence) found!.add(evidence);
      for (const dialect of configuredDialects(text)) {
        const scope = scopeOf(file.rel);
        dialects.set(scope, new Set([...(dialects.get(scope) ?? []), dialect]));
      }
    }
    options.onProgress?.(++done, sources.length);
  }

  // A package that declares no framework may still import one that another dependency brings along; one that declares
  // a SQLite driver it never imports does not keep its data there.
  for (const [scopeDir, scope] of scopes) {
    const modules = [...records.files.values()].filter((r) => scopeOf(r.rel) === scopeDir).flatMap((r) => [...r.imports.values()].map((b) => b.module));
    if (scope.stack.frameworks.length === 0) scope.stack.frameworks = importedFrameworks(modules);
    if (modules.length > 0) scope.stack.databases = usedDatabases(scope.stack, modules, dialects.get(scopeDir));
  }
  const graph = new FunctionGraph(records);
  const frameworksByPkg = new Map([...scopes].map(([d, s]) => [d, s.stack.frameworks]));
  const seeds: Array<[string, string]> = [...records.files.values()].flatMap((r) => r.facts.paymentFunctionKeys.map((k): [string, string] => [r.rel, k]));
  const paying = graph.callers(seeds);
  const risky = graph.callers([...records.files.values()].flatMap((r) => r.facts.riskyPaymentFunctionKeys.map((k): [string, string] => [r.rel, k])));
  const reaches = (route: { file: string; handlerKeys: string[] }, set: Set<unknown>) => route.handlerKeys.some((k) => graph.resolve(route.file, k).some((fn) => set.has(fn)));
  // A GET that charges (`GET /admin/makepayment/:ref`) is retried by prefetchers and reloads: it is an endpoint too.
  const built = buildEndpoints(records, graph, frameworksByPkg);
  // Pages' forms post to routes; a GET route tells which page posts back to it, then goes unless it charges.
  linkServerForms(new Map([...texts].filter(([rel]) => VIEW_TEMPLATE.test(rel))), built, records, graph);
  const endpoints = built.filter(({ finding, route }) => finding.method !== 'GET' || reaches(route, risky));
  const inserting = graph.callers([...records.files.values()].flatMap((r) => r.facts.insertFunctionKeys.map((k): [string, string] => [r.rel, k])));
  const sending = [...messageSeeds(records)].map(([library, seeds]) => ({ library, callers: graph.callers(seeds) }));
  const publishSeeds = new Map<string, Array<[string, string]>>();
  for (const r of records.files.values()) for (const { key, broker } of r.facts.publishFunctions) publishSeeds.set(broker, [...(publishSeeds.get(broker) ?? []), [r.rel, key]]);
  const publishing = [...publishSeeds].sort(([a], [b]) => (a < b ? -1 : 1)).map(([broker, seeds]) => ({ broker, callers: graph.callers(seeds) }));
  for (const { finding, route } of endpoints) {
    finding.touchesPayment = reaches(route, paying);
    // Only when true, so findings of handlers that insert nothing keep their shape.
    if (reaches(route, inserting)) finding.insertsRecord = true;
    const sent = sending.filter((s) => reaches(route, s.callers)).map((s) => s.library);
    if (sent.length > 0) finding.sendsMessage = sent;
    const published = publishing.filter((p) => reaches(route, p.callers)).map((p) => p.broker);
    if (published.length > 0) finding.publishes = published;
  }

  const wrapped = expandRecordedWrappers(records);
  const findings: Finding[] = [
    ...endpoints.map((e) => e.finding),
    ...[...records.files.values()].flatMap((r) => r.facts.findings).filter((f) => !wrapped.replaced.has(f)),
    ...wrapped.added,
    ...linkWebhooks(records, graph, endpoints, unusedVerifierNames(records, () => sources.flatMap((f) => readSource(f.abs) ?? []))),
  ];
  resolveImportedNames(records, findings);
  for (const [rel, text] of texts) {
    const name = rel.slice(rel.lastIndexOf('/') + 1);
    for (const detector of textDetectors) if (detector.accepts(name)) findings.push(...detector.detect(rel, text));
  }
  if (workspaces.length) {
    for (const finding of findings) {
      const name = scopes.get(scopeOf(finding.file))?.name;
      if (name) finding.package = name;
    }
  }

  for (const [scopeDir, scope] of scopes) {
    const prismaFiles = [...texts].filter(([rel]) => rel.endsWith('.prisma') && scopeOf(rel) === scopeDir);
    const found = [
      ...[...records.files.values()].filter((r) => r.pkgDir === scopeDir).flatMap((r) => r.facts.connections),
      ...prismaFiles.flatMap(([rel, text]) => {
        const raw = prismaConnection(text);
        return raw ? [located(raw, rel)] : [];
      }),
      ...(await sequelizeConfigOf(root, scopeDir, scope.stack.databases)),
    ];
    const connections = pickConnections(found, scope.stack.databases);
    if (connections.length) scope.stack.connections = connections;
  }

  inheritAuthentication(authentication, workspaces);
  for (const [scopeDir, found] of authentication) (scopes.get(scopeDir) as PackageScope).stack.authentication = sorted(found);

  const rootScope = scopes.get('') as PackageScope;
  const packageStacks = workspaces.map((w) => (scopes.get(w.dir) as PackageScope).stack);
  const stack = workspaces.length ? mergeStacks(rootScope.stack, packageStacks) : rootScope.stack;
  enrichStack(stack, findings);
  const rootCode = workspaces.length > 0 && [...records.files.values()].some((r) => scopeOf(r.rel) === '');
  return {
    root,
    stack: workspaces.length
      ? {
          ...stack,
          packages: workspaces.map((w) => ({ dir: w.dir, name: w.name, stack: enrichStack((scopes.get(w.dir) as PackageScope).stack, findings.filter((f) => f.package === w.name)) })),
          ...(rootCode ? { root: enrichStack({ ...rootScope.stack }, findings.filter((f) => f.package === undefined)) } : {}),
        }
      : stack,
    findings: sortFindings(dedupeFindings(findings)),
    warnings: warnings.map(printable).sort(),
    manifestRead: rootManifest !== undefined || workspaces.length > 0,
    ...routeAuthenticationOf(endpoints),
  };
}

/** The routes whose authentication the reader decided (resolve/routeAuthentication.ts), in file order; absent when none. */
function routeAuthenticationOf(endpoints: readonly BuiltEndpoint[]): Pick<Inspection, 'routeAuthentication'> {
  const out: RouteAuthentication[] = [];
  for (const { finding, authentication } of endpoints) {
    if (authentication === undefined || authentication === 'unknown') continue;
    out.push({ file: finding.file, line: finding.line, method: finding.method, path: finding.path, by: authentication === 'none' ? [] : authentication.by });
  }
  out.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)));
  return out.length > 0 ? { routeAuthentication: out } : {};
}

/** One file the parser or a detector cannot handle (nested thousands deep, say) is a warning, not the end of the run. */
function analyseOrWarn(file: ProjectFile, text: string, scope: PackageScope, records: ProjectRecords, warnings: string[]): void {
  try {
    analyse(file, text, scope, records, warnings);
  } catch (error) {
    records.files.delete(file.rel);
    const reason = error instanceof RangeError ? 'nested too deeply to parse' : `could not be analysed: ${(error as Error)?.message ?? String(error)}`;
    warnings.push(`${file.rel}: skipped, ${reason}; the rest of the project was inspected.`);
  }
}

const READ_TURN = 64;

const SERVER_ONLY_IMPORT = /(?:from\s*|import\s*|require\(\s*)['"](server-only|next\/headers)['"]/;
/** Either of the two, in one scan of the file (`m` changes nothing in SERVER_ONLY_IMPORT, which has no anchors). */
const SERVER_ONLY = new RegExp(`(?:${USE_SERVER.source})|(?:${SERVER_ONLY_IMPORT.source})`, 'm');
/**
 * A match of SERVER_ONLY contains one of these: `includes` rules out a file that has none (almost all) several times
 * faster than the expression, whose line anchor keeps V8 from skipping ahead.
 */
const SERVER_ONLY_WORDS = ['use server', 'server-only', 'next/headers'];

function isServerOnly(text: string): boolean {
  return SERVER_ONLY_WORDS.some((word) => text.includes(word)) && SERVER_ONLY.test(text);
}

function analyse(file: ProjectFile, text: string, scope: PackageScope, records: ProjectRecords, warnings: string[]): void {
  const usesNext = scope.stack.frameworks.includes('nextjs');
  // "use server" code and modules reading request headers / marked server-only run only on the server, even when
  // they import react (cache) or next/navigation (redirect).
  const serverOnly = isServerOnly(text);
  if (!serverOnly && (isFrontEndPath(file.rel, usesNext) || isFrontEndSource(text))) return;
  const { record, warning } = analyseFile(file.rel, text, scope);
  if (warning) warnings.push(warning);
  if (record) records.files.set(file.rel, record as FileRecord);
}

/** Providers and brokers seen in code count even when the manifest does not list them (raw fetch, types only). */
function enrichStack(stack: PackageStack, findings: readonly Finding[]): PackageStack {
  const payments = findings.flatMap((f) => (f.kind === 'payment' ? [f.provider] : []));
  const brokers = findings.flatMap((f) => (f.kind === 'consumer' && ['bullmq', 'bull', 'kafka', 'rabbitmq', 'sqs', 'nats', 'graphile-worker', 'inngest', 'pg-boss', 'agenda'].includes(f.broker) ? [f.broker] : []));
  stack.payments = sorted([...stack.payments, ...payments]);
  stack.brokers = sorted([...stack.brokers, ...brokers]);
  return stack;
}

/** The same route mounted twice at the same path, or one line caught by two rules, is one finding. */
function dedupeFindings(findings: Finding[]): Finding[] {
  const seen = new Set<string>();
  return findings.filter((f) => {
    const key = `${f.kind}\u0000${f.file}\u0000${f.line}\u0000${f.id}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

async function detectLockfile(root: string): Promise<PackageManager> {
  const checks: Array<[string, PackageManager]> = [
    ['pnpm-lock.yaml', 'pnpm'], ['yarn.lock', 'yarn'], ['bun.lockb', 'bun'], ['bun.lock', 'bun'],
    ['package-lock.json', 'npm'], ['npm-shrinkwrap.json', 'npm'],
  ];
  for (const [file, manager] of checks) if (await exists(path.join(root, file))) return manager;
  return 'unknown';
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(() => true, () => false);
}

function readSource(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** Bundles and minified builds are not the code a reviewer would read; one very long line gives them away. */
function isBundled(text: string): boolean {
  if (text.length < 20_000) return false;
  let start = 0;
  while (start < text.length) {
    const end = text.indexOf('\n', start);
    const stop = end === -1 ? text.length : end;
    if (stop - start > 5_000) return true;
    start = stop + 1;
  }
  return false;
}

/** Files idempotency-builder wrote into this project, from its manifest (empty when there is none). */
async function generatedPaths(root: string): Promise<Set<string>> {
  const text = await readFile(path.join(root, '.idempotency-builder', 'manifest.json'), 'utf8').catch(() => undefined);
  if (text === undefined) return new Set();
  try {
    const manifest = JSON.parse(text) as { files?: Array<{ path?: unknown }> };
    return new Set((manifest.files ?? []).map((entry) => entry.path).filter((p): p is string => typeof p === 'string'));
  } catch {
    return new Set();
  }
}

/**
 * The repository's Prisma schema when a package has none of its own: a workspace whose packages share one schema
 * kept outside them (postiz: libraries/nestjs-libraries/src/database/prisma, with every dependency in the root
 * package.json). Undefined when there is none, or several that name different providers.
 */
const DATASOURCE = /\bdatasource\s+\w+\s*\{/;

function sharedPrismaSchema(texts: ReadonlyMap<string, string>): string | undefined {
  const schemas = [...texts].filter(([rel, text]) => rel.endsWith('.prisma') && DATASOURCE.test(text)).map(([, text]) => text);
  const providers = new Set(schemas.map((text) => /provider\s*=\s*"(\w+)"/.exec(text.slice(text.indexOf('datasource')))?.[1]));
  return providers.size === 1 && !providers.has(undefined) ? schemas[0] : undefined;
}

/**
 * A package that depends on another package of the workspace which authenticates (`@acme/api` on `@acme/auth`, which
 * declares better-auth or sets the session itself) authenticates its callers through it: `better-auth (through
 * @acme/auth)`. Followed through workspace dependencies of dependencies; only evidence the package had is kept first.
 */
function inheritAuthentication(authentication: Map<string, Set<string>>, workspaces: readonly WorkspacePackage[]): void {
  const byName = new Map(workspaces.map((w) => [w.name, w]));
  const own = new Map([...authentication].map(([dir, found]) => [dir, [...found]]));
  for (const [dir, found] of authentication) {
    const start = workspaces.find((w) => w.dir === dir);
    if (!start) continue;
    const seen = new Set([start.name]);
    const queue = [...start.manifest.dependencies].filter((name) => byName.has(name));
    while (queue.length > 0) {
      const dep = byName.get(queue.shift() as string) as WorkspacePackage;
      if (seen.has(dep.name)) continue;
      seen.add(dep.name);
      const evidence = own.get(dep.dir) ?? authenticationPackages([dep.manifest]);
      for (const item of evidence) found.add(`${item} (through ${dep.name})`);
      queue.push(...[...dep.manifest.dependencies].filter((name) => byName.has(name)));
    }
  }
}
