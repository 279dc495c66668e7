import path from 'node:path';
import { readInside } from '../emit/safePath.js';
import { readTemplate } from '../scaffold/readTemplate.js';
import { projectImportsAt } from '../scaffold/profile/pathAliases.js';
import type { ProjectImports } from './importStyle.js';
import { HOOK_FILES, wireClients } from './transforms/clientWiring.js';
import type { Edit, ManualStep, WiringTarget } from './types.js';

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
  const { walkProject } = await import('../inspect/files/walkProject.js');
  const { files } = await walkProject(input.root);
  const groups = new Map<string, { pkg: string; files: Array<{ path: string; text: string; before: string }> }>();
  const targetFiles = new Set(input.routes.map((t) => t.file));
  for (const file of files) {
    if (!CODE.test(file.rel) || file.rel.endsWith('.d.ts') || targetFiles.has(file.rel) || file.rel.startsWith(`${input.scaffoldDir}/`)) continue;
    const before = await readInside(input.root, file.rel).catch(() => undefined);
    if (before === undefined || !(/\.[jt]sx$/.test(file.rel) || IMPORTS_REACT.test(before))) continue;
    const pkg = input.packageOf(file.rel);
    const dir = hookDirOf(file.rel, pkg);
    const group = groups.get(dir) ?? { pkg, files: [] };
    group.files.push({ path: file.rel, before, text: input.changes.find((c) => c.path === file.rel)?.after ?? before });
    groups.set(dir, group);
  }
  for (const [dir, group] of groups) {
    const own = group.pkg === input.packageDir;
    const imports = own ? input.imports : await packageImports(input.root, group.pkg, input.packageOf);
    // The modules a component imports from (an axios instance, shared headers) may sit anywhere in its package.
    const sources = files.filter((f) => input.packageOf(f.rel) === group.pkg && CODE.test(f.rel));
    const texts = [...group.files];
    for (const file of sources) {
      if (texts.some((t) => t.path === file.rel)) continue;
      const text = await readInside(input.root, file.rel).catch(() => undefined);
      if (text !== undefined) texts.push({ path: file.rel, before: text, text });
    }
    const wired = wireClients(texts, { routes: input.routes, actions: [] }, { scaffoldDir: dir, imports, keyHeader: input.keyHeader, elsewhere: !own, next: false });
    for (const action of wired.found) out.found.add(action);
    // A route with no caller here keeps apply's general step about its callers; one per package would repeat it.
    out.manual.push(...wired.manual.filter((m) => !m.reason.startsWith('no caller found')));
    if (wired.usesHook && !(await dependsOnReact(input.root, group.pkg))) {
      for (const action of new Set(wired.edits.map((e) => e.action))) {
        out.manual.push({ action, file: `${group.pkg || '.'}/package.json`, reason: `its components call the route, but ${group.pkg === '' ? 'the root package' : `the package ${group.pkg}`} does not declare react, which the useIdempotencyKey() hook needs: send an ${input.keyHeader} header (one per user intent, reused on retry) from those calls by hand` });
      }
      continue;
    }
    for (const [file, after] of wired.texts) out.changes.push({ path: file, before: texts.find((t) => t.path === file)!.before, after });
    out.edits.push(...wired.edits);
    if (!wired.usesHook) continue;
    const typed = (await readInside(input.root, path.posix.join(group.pkg, 'tsconfig.json')).catch(() => undefined)) !== undefined && group.files.some((f) => wired.texts.has(f.path) && /\.[cm]?tsx?$/.test(f.path));
    for (const name of HOOK_FILES) {
      const file = `${dir}/${name}.${typed ? 'ts' : 'js'}`;
      if ((await readInside(input.root, file).catch(() => undefined)) !== undefined) continue;
      out.changes.push({ path: file, after: await hookModule(name, typed, imports.defaultExtension) });
      out.edits.push({ action: wired.edits[0]!.action, file, summary: name === 'useIdempotencyKey' ? 'creates the useIdempotencyKey() hook: one key per user intent, reused on retry' : 'creates the intent key logic the hook keeps (no React, testable alone)' });
    }
  }
  return out;
}

/**
 * Where a component's hook goes: the `src` folder of its package when it is under one (`client/src/idempotency`),
 * else the first folder it is in below its package (`web/idempotency`), else the package's root.
 */
function hookDirOf(file: string, pkg: string): string {
  const inside = (pkg === '' ? file : file.slice(pkg.length + 1)).split('/').slice(0, -1);
  const src = inside.indexOf('src');
  const base = src >= 0 ? inside.slice(0, src + 1) : inside.slice(0, 1);
  return path.posix.join(pkg, ...base, 'idempotency');
}

/** The hook's module from its template: TypeScript as it is, else JavaScript; relative imports as the package writes them. */
async function hookModule(name: (typeof HOOK_FILES)[number], typed: boolean, extension: '.js' | ''): Promise<string> {
  let text = readTemplate(`typescript/client/${name}.ts`);
  if (!typed) {
    // The build's table holds every template as formatted JavaScript; a template without an entry is stripped here.
    const [{ precompiledJavaScript }, { transpileToJavaScript }] = await Promise.all([import('../scaffold/javascript/precompiled.js'), import('../scaffold/javascript/transpile.js')]);
    text = precompiledJavaScript(text, 'module') ?? transpileToJavaScript(text, 'module', `${name}.ts`);
  }
  return extension === '' ? text.replace(/(from\s+'\.\/[\w]+)\.js'/g, "$1'") : text;
}

async function dependsOnReact(root: string, pkg: string): Promise<boolean> {
  const text = await readInside(root, path.posix.join(pkg, 'package.json')).catch(() => undefined);
  if (text === undefined) return false;
  try {
    const manifest = JSON.parse(text) as Record<string, Record<string, string> | undefined>;
    return ['dependencies', 'devDependencies', 'peerDependencies'].some((field) => manifest[field]?.['react'] !== undefined);
  } catch {
    return false;
  }
}

async function packageImports(root: string, pkg: string, packageOf: (file: string) => string): Promise<ProjectImports> {
  const own = projectImportsAt(path.join(root, pkg));
  return Promise.resolve({ ...own, packageOf, aliases: own.aliases.map((alias) => ({ ...alias, dir: alias.dir === '' ? pkg : pkg === '' ? alias.dir : `${pkg}/${alias.dir}` })) });
}
