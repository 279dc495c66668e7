import path from 'node:path';
import { profileFromOptions } from './profileFromOptions.js';
import { readConfigJson, readTsconfig } from './readTsconfig.js';

/** A tsconfig `paths` entry that maps a prefix onto a folder: `"@/*": ["./src/*"]` → { prefix: '@/', dir: 'src' }. */
export interface PathAlias {
  prefix: string;
  /** Relative to the project root, posix; '' for the root itself. */
  dir: string;
}

/**
 * The folder aliases among `paths` (as ProjectProfile holds them: targets relative to the root), the most specific
 * folder first so `~/lib/*` wins over `@/*` for a file under src/lib. Exact-name entries (`"config": [...]`) are
 * not folders and are left out; of several targets the first is the one TypeScript tries first.
 */
export function pathAliases(paths: Readonly<Record<string, readonly string[]>>): PathAlias[] {
  const aliases: PathAlias[] = [];
  for (const [key, targets] of Object.entries(paths)) {
    const first = targets[0];
    // `"@/*": ["./*"]` (a Next.js app without src/) maps onto the root itself.
    // A prefix is printed into code and Markdown fences: only the characters real aliases use (`@/`, `~/lib/`, `#app/`).
    if (!/^[\w@~#$.-][\w@~#$./-]*\/\*$/.test(key) || !(first === '*' || first?.endsWith('/*')) || key.slice(0, -2).includes('*')) continue;
    const dir = first === '*' ? '.' : path.posix.normalize(first.slice(0, -2));
    aliases.push({ prefix: key.slice(0, -1), dir: dir === '.' ? '' : dir });
  }
  return aliases.sort((a, b) => b.dir.length - a.dir.length || (a.prefix < b.prefix ? -1 : 1));
}

/** How code in the project imports `target` (root-relative, no extension) through an alias; undefined without one. */
export function aliasedSpecifier(paths: Readonly<Record<string, readonly string[]>>, target: string): string | undefined {
  const alias = pathAliases(paths).find((candidate) => candidate.dir === '' || target === candidate.dir || target.startsWith(`${candidate.dir}/`));
  if (!alias) return undefined;
  return `${alias.prefix}${alias.dir === '' ? target : path.posix.relative(alias.dir, target)}`;
}

/**
 * The project's aliases and extension habit for apply's wiring (src/apply/importStyle's ProjectImports), read with
 * the profile's own tsconfig reader: comments, `extends` chains and `paths` declared in a base included.
 */
export function projectImportsAt(root: string): { aliases: PathAlias[]; defaultExtension: '.js' | '' } {
  const resolved = path.resolve(root);
  const tsconfig = path.join(resolved, 'tsconfig.json');
  const hasTsconfig = readConfigJson(resolved, tsconfig) !== undefined;
  const { options, paths, unresolved } = readTsconfig(resolved, tsconfig);
  const relative: Record<string, string[]> = {};
  for (const [key, targets] of Object.entries(paths)) {
    const inside = targets.map((target) => path.relative(resolved, target).split(path.sep).join('/')).filter((target) => !target.startsWith('..'));
    if (inside.length > 0) relative[key] = inside;
  }
  // Node ES modules need the extension on relative imports: the scaffold's own rule, and for a project without a
  // tsconfig (paypal-examples' plain JavaScript Express servers) the package's "type".
  const packageType = readConfigJson(resolved, path.join(resolved, 'package.json'))?.['type'] === 'module' ? 'module' : 'commonjs';
  const extension = hasTsconfig ? profileFromOptions(options, packageType, unresolved).relativeImports === 'js-extension' : packageType === 'module';
  return { aliases: pathAliases(relative), defaultExtension: extension ? '.js' : '' };
}

/** The root tsconfig's `paths` folder aliases (an Nx workspace's `@org/lib/*`) for following imports; none when it cannot be read. */
export function tsconfigAliasesAt(root: string): readonly PathAlias[] {
  try {
    return projectImportsAt(root).aliases;
  } catch {
    return [];
  }
}
