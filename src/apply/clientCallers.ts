import path from 'node:path';
import { readInside } from '../emit/safePath.js';
import { readTemplate } from '../scaffold/readTemplate.js';
import { projectImportsAt } from '../scaffold/profile/pathAliases.js';
import type { ProjectImports } from './importStyle.js';
import { HOOK_FILES, wireClients } from './transforms/clientWiring.js';
import type { Edit, ManualStep, WiringTarget } from './types.js';
import { projectFile, projectFiles } from './projectScan.js';

export interface ClientCallersInput {
  root: string;
  /** Client-keyed routes wired in this run or an earlier one: requests without the key header are answered 400. */
  routes: readonly WiringTarget[];
  /** The changes planned so far (their text is the starting point for those files). */
  changes: ReadonlyArray<{ path: string; after: string }>;
  scaffoldDir: string;
  /** The package folder of the scaffold ('' at the repository root) and the package of any file. */
  packageDir: string;
  packageOf: (file: string) => string;
  /** How the scaffold's package imports (its aliases, its extension rule). */
  imports: ProjectImports;
  keyHeader: string;
}

export interface ClientCallersPlan {
  changes: Array<{ path: string; before?: string; after: string }>;
  edits: Edit[];
  manual: ManualStep[];
  /** The routes some caller was found for, wired or listed with its reason. */
  found: Set<string>;
}

const CODE = /\.(?:[jt]sx|[cm]?[jt]s)$/;
const IMPORTS_REACT = /\bfrom\s*['"]react['"]|\brequire\(\s*['"]react['"]\s*\)/;

/**
 * The browser side of an API's wiring (Express, Fastify, Koa, Hono, NestJS): React components anywhere in the
 * repository that call a client-keyed route with fetch or axios, in the API's own package or a separate frontend
 * (a Vite or CRA app beside it), send one key per user intent from useIdempotencyKey(), see clientWiring.ts. The
 * hook is written into the frontend's own source folder (`client/src/idempotency/`), in its language, so the API's
 * build never compiles React code.
 */
export async function planClientCallers(input: ClientCallersInput): Promise<ClientCallersPlan> {
  const out: ClientCallersPlan = { changes: [], edits: [], manual: [], found: new Set() };
  if (input.routes.length === 0) return out;
  const { files } = await projectFiles(input.root);
  // Every code file is read once per plan (projectScan): here, and again when its package's components are wired.
  const textOf = (rel: string) => projectFile(input.root, rel);
  const groups = new Map<string, { pkg: string; files: Array<{ path: string; text: string; before: string }> }>();
  const targetFiles = new Set(input.routes.map((t) => t.file));
  for (const file of files) {
    if (!CODE.test(file.rel) || file.rel.endsWith('.d.ts') || targetFiles.has(file.rel) || file.rel.startsWith(`${input.scaffoldDir}/`)) continue;
    const before = await textOf(file.rel);
    if (before === undefined || !(/\.[jt]sx$/.test(file.rel) || IMPORTS_REACT.test(before))) continue;
    const pkg = input.packageOf(file.rel);
    const group = groups.get(pkg) ?? { pkg, files: [] };
    group.files.push({ path: file.rel, before, text: input.changes.find((c) => c.path === file.rel)?.after ?? before });
    groups.set(pkg, group);
  }
  // Actions a frontend of another package now calls with the key header: a cross-origin request, if served apart.
  const crossOrigin = new Set<string>();
  for (const group of groups.values()) {
    const own = group.pkg === input.packageDir;
    const manifest = await readManifest(input.root, group.pkg);
    const next = dependsOn(manifest, 'next');
    const dir = own ? input.scaffoldDir : hookDirOf(group.pkg, files.map((f) => f.rel), next);
    const imports = own ? input.imports : await packageImports(input.root, group.pkg, input.packageOf);
    // The modules a component imports from (an axios instance, shared headers) may sit anywhere in its package.
    const sources = files.filter((f) => input.packageOf(f.rel) === group.pkg && CODE.test(f.rel));
    const texts = [...group.files];
    for (const file of sources) {
      if (texts.some((t) => t.path === file.rel)) continue;
      const text = await textOf(file.rel);
      if (text !== undefined) texts.push({ path: file.rel, before: text, text });
    }
    // A Next.js frontend decides which modules run in the browser by its own rules ("use client", the app/ tree).
    const wired = wireClients(texts, { routes: input.routes, actions: [] }, { scaffoldDir: dir, imports, keyHeader: input.keyHeader, elsewhere: !own, next });
    for (const action of wired.found) out.found.add(action);
    // A route with no caller here keeps apply's general step about its callers; one per package would repeat it.
    out.manual.push(...wired.manual.filter((m) => !m.reason.startsWith('no caller found')));
    if (wired.usesHook && !dependsOn(manifest, 'react')) {
      for (const action of new Set(wired.edits.map((e) => e.action))) {
        out.manual.push({ action, file: `${group.pkg || '.'}/package.json`, reason: `its components call the route, but ${group.pkg === '' ? 'the root package' : `the package ${group.pkg}`} does not declare react, which the useIdempotencyKey() hook needs: send an ${input.keyHeader} header (one per user intent, reused on retry) from those calls by hand` });
      }
      continue;
    }
    for (const [file, after] of wired.texts) out.changes.push({ path: file, before: texts.find((t) => t.path === file)!.before, after });
    out.edits.push(...wired.edits);
    if (!own && wired.edits.length > 0) crossOrigin.add(wired.edits[0]!.action);
    if (!wired.usesHook) continue;
    const typed = (await readInside(input.root, path.posix.join(group.pkg, 'tsconfig.json')).catch(() => undefined)) !== undefined && group.files.some((f) => wired.texts.has(f.path) && /\.[cm]?tsx?$/.test(f.path));
    for (const name of HOOK_FILES) {
      const file = `${dir}/${name}.${typed ? 'ts' : 'js'}`;
      if ((await readInside(input.root, file).catch(() => undefined)) !== undefined) continue;
      out.changes.push({ path: file, after: await hookModule(name, typed, imports.defaultExtension) });
      out.edits.push({ action: wired.edits[0]!.action, file, summary: name === 'useIdempotencyKey' ? 'creates the useIdempotencyKey() hook: one key per user intent, reused on retry' : 'creates the intent key logic the hook keeps (no React, testable alone)' });
    }
  }
  if (crossOrigin.size > 0) {
    const apiFiles = files.filter((f) => CODE.test(f.rel) && input.packageOf(f.rel) === input.packageDir && !f.rel.startsWith(`${input.scaffoldDir}/`));
    for (const at of await corsAllowlists(input.root, apiFiles.map((f) => f.rel), input.keyHeader)) {
      out.manual.push({ action: [...crossOrigin][0]!, file: at.file, line: at.line, reason: `the API's CORS setup lists the headers a cross-origin request may send, without ${input.keyHeader}: a browser's preflight refuses every keyed request from a frontend served from another origin. Add '${input.keyHeader}' to that list` });
    }
  }
  return out;
}

/** A CORS header allowlist: the cors / @koa/cors / hono option, or the response header set by hand. */
const ALLOWLIST = /\b(?:allowedHeaders|allowHeaders)\s*:|['"]Access-Control-Allow-Headers['"]/gi;

/**
 * Where the API's code lists the request headers CORS allows (`cors({ allowedHeaders: ['Content-Type'] })`) without
 * the key header: read up to the end of the list (the closing bracket, or the end of the string set as the header).
 */
async function corsAllowlists(root: string, files: readonly string[], header: string): Promise<Array<{ file: string; line: number }>> {
  const found: Array<{ file: string; line: number }> = [];
  for (const file of files) {
    const text = await readInside(root, file).catch(() => undefined);
    if (text === undefined || !/allowedHeaders|allowHeaders|Access-Control-Allow-Headers/i.test(text)) continue;
    for (const match of text.matchAll(ALLOWLIST)) {
      const rest = text.slice(match.index + match[0].length, match.index + match[0].length + 400);
      const list = /^[\s,]*(\[[^\]]*\]|(['"`])[^'"`]*\2)/.exec(rest)?.[1];
      // A list we cannot read (a variable, a function) may hold anything: only a literal is judged.
      if (list === undefined || list.toLowerCase().includes(header.toLowerCase()) || list.includes('*')) continue;
      found.push({ file, line: text.slice(0, match.index).split('\n').length });
    }
  }
  return found;
}

/**
 * Where a frontend package's hook goes: its `src` folder when it has one (`client/src/idempotency`), a Next.js app's
 * `lib` (`web/lib/idempotency`, where its own helpers live), else the package's root (`web/idempotency`).
 */
function hookDirOf(pkg: string, files: readonly string[], next: boolean): string {
  const prefix = pkg === '' ? '' : `${pkg}/`;
  const base = files.some((file) => file.startsWith(`${prefix}src/`)) ? 'src' : next ? 'lib' : '';
  return path.posix.join(pkg, base, 'idempotency');
}

/**
 * The hook's module from its template: TypeScript as it is, else JavaScript; relative imports as the package writes
 * them. The templates keep to TypeScript 3.8 syntax (`import type` statements, no inline `type` modifiers): a
 * frontend may pin an old compiler (cgarrovillo/ecommerce's pins ^3.7).
 */
async function hookModule(name: (typeof HOOK_FILES)[number], typed: boolean, extension: '.js' | ''): Promise<string> {
  let text = readTemplate(`typescript/client/${name}.ts`);
  if (!typed) {
    // The build's table holds every template as formatted JavaScript; a template without an entry is stripped here.
    const [{ precompiledJavaScript }, { transpileToJavaScript }] = await Promise.all([import('../scaffold/javascript/precompiled.js'), import('../scaffold/javascript/transpile.js')]);
    text = precompiledJavaScript(text, 'module') ?? transpileToJavaScript(text, 'module', `${name}.ts`);
  }
  return extension === '' ? text.replace(/(from\s+'\.\/[\w]+)\.js'/g, "$1'") : text;
}

async function readManifest(root: string, pkg: string): Promise<Record<string, Record<string, string> | undefined>> {
  const text = await readInside(root, path.posix.join(pkg, 'package.json')).catch(() => undefined);
  try {
    return text === undefined ? {} : (JSON.parse(text) as Record<string, Record<string, string> | undefined>);
  } catch {
    return {};
  }
}

const dependsOn = (manifest: Record<string, Record<string, string> | undefined>, name: string) => ['dependencies', 'devDependencies', 'peerDependencies'].some((field) => manifest[field]?.[name] !== undefined);

async function packageImports(root: string, pkg: string, packageOf: (file: string) => string): Promise<ProjectImports> {
  const own = projectImportsAt(path.join(root, pkg));
  return Promise.resolve({ ...own, packageOf, aliases: own.aliases.map((alias) => ({ ...alias, dir: alias.dir === '' ? pkg : pkg === '' ? alias.dir : `${pkg}/${alias.dir}` })) });
}
