import { readFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * The vitest lines the generated suites were run with. An unpinned `vitest` installs the newest release, which can
 * need a newer Node than the project runs (vitest 5 wants Node 22.12) or a newer vite than it declares (vitest 4's
 * peer is vite 6+, an ERESOLVE next to vite 5). 4.1 runs on Node 20 with vite 6–8; 3.2 on Node 18 and vite 5.
 */
const VITEST_CURRENT = 'vitest@^4.1.12';
const VITEST_NODE18 = 'vitest@^3.2.4';

/** The oldest Node and vite majors vitest 4 accepts. */
const VITEST4_NODE = 20;
const VITEST4_VITE = 6;

/**
 * The vitest to add for a package: the tested line its Node and vite allow. Node comes from `engines.node` (the oldest
 * major it admits) or an `.nvmrc` / `.node-version` in the package or at the root; vite from the manifests.
 */
export async function vitestSpecifier(root: string, packageDir: string, manifests: ReadonlyArray<Record<string, unknown>>): Promise<string> {
  const node = oldestNodeMajor(manifests) ?? (await pinnedNodeMajor(root, packageDir));
  const vite = declaredMajor(manifests, 'vite');
  return (node !== undefined && node < VITEST4_NODE) || (vite !== undefined && vite < VITEST4_VITE) ? VITEST_NODE18 : VITEST_CURRENT;
}

/** The smallest major in `engines.node` (">=18", "^18 || ^20", "18.x" → 18); undefined when none says. */
function oldestNodeMajor(manifests: ReadonlyArray<Record<string, unknown>>): number | undefined {
  for (const manifest of manifests) {
    const range = (manifest['engines'] as Record<string, unknown> | undefined)?.['node'];
    if (typeof range !== 'string') continue;
    const majors = [...range.matchAll(/(?:^|[^\d.])(\d+)/g)].map((match) => Number(match[1]));
    if (majors.length > 0) return Math.min(...majors);
  }
  return undefined;
}

/** The major of the first numeric `.nvmrc` / `.node-version` (`v18.19.0`, `18`); an alias (`lts/*`) says nothing. */
async function pinnedNodeMajor(root: string, packageDir: string): Promise<number | undefined> {
  const dirs = [...new Set([path.join(root, packageDir), root])];
  for (const dir of dirs) {
    for (const file of ['.nvmrc', '.node-version']) {
      const text = await readFile(path.join(dir, file), 'utf8').catch(() => undefined);
      const major = text === undefined ? undefined : /^\s*v?(\d+)/.exec(text)?.[1];
      if (major !== undefined) return Number(major);
    }
  }
  return undefined;
}

/** The major a manifest's range for `name` starts at (`^5.4.0`, `~5`, `5.x` → 5); undefined when not declared. */
function declaredMajor(manifests: ReadonlyArray<Record<string, unknown>>, name: string): number | undefined {
  for (const manifest of manifests) {
    for (const key of ['dependencies', 'devDependencies', 'peerDependencies']) {
      const range = (manifest[key] as Record<string, unknown> | undefined)?.[name];
      const major = typeof range === 'string' ? /(\d+)/.exec(range)?.[1] : undefined;
      if (major !== undefined) return Number(major);
    }
  }
  return undefined;
}

/**
 * Releases TypeScript before 5 can read, for packages whose newest typings it cannot: prom-client 15 and today's
 * mysql2 (through sql-escaper) use syntax TypeScript 3.x does not parse, and @types/express 4.17.13 pulls today's
 * @types/express-serve-static-core, which TypeScript 4.2 cannot parse either (the older one, added beside it, is the
 * copy npm then keeps). Each was checked by compiling an import of it with TypeScript 3.8, 3.9 and 4.2 from the
 * registry; oldTypings.test.ts compiles the scaffold against them. mysql2 2.3 rather than 3.11 (which parses too):
 * TypeORM 0.2, the ORM of such projects, declares mysql2 ^2.2.5 as a peer, and npm refuses a 3.x beside it. The store
 * also runs on it: storeContract/mysql2Old.test.ts passes the store contract against MariaDB on mysql2 2.3.3.
 * @types/pg depends on pg-protocol "*", whose typings from 1.15 write `Buffer<ArrayBufferLike>`: a generic Buffer
 * only today's @types/node declares, and the @types/node such a compiler reads (14, 16) says "Type 'Buffer' is not
 * generic" without skipLibCheck. pg-protocol 1.14, beside it, is the copy @types/pg then resolves (pg keeps its own
 * newer one when its range asks for it); oldTypeScriptJest23.test.ts compiles the scaffold with TypeScript 3.9,
 * @types/node 14 and no skipLibCheck against it and today's @types/pg.
 */
const BEFORE_TYPESCRIPT_5: Readonly<Record<string, readonly string[]>> = {
  'prom-client': ['prom-client@14.2'],
  mysql2: ['mysql2@2.3'],
  '@types/express': ['@types/express@4.17.13', '@types/express-serve-static-core@4.17.28'],
  '@types/pg': ['@types/pg', 'pg-protocol@1.14'],
};

/**
 * The packages to add, pinned where the project's TypeScript (major * 100 + minor) cannot read the newest release;
 * unchanged for TypeScript 5 or when the version is unknown.
 */
export function pinForTypeScript(names: readonly string[], typescriptVersion: number | undefined): string[] {
  if (typescriptVersion === undefined || typescriptVersion >= 500) return [...names];
  return [...new Set(names.flatMap((name) => BEFORE_TYPESCRIPT_5[name] ?? [name]))].sort();
}

/**
 * Packages whose typings no release line the scaffold runs on lets TypeScript before `version` (major * 100 + minor)
 * parse, so no pin helps and the hint says so: ioredis 5 declares labelled tuple elements (TypeScript 4.0), and
 * ioredis 4's typings (@types/ioredis 4.28) lack callBuffer, which the Redis store calls. Both were checked by
 * compiling the generated store with TypeScript 3.9; oldTypings.test.ts compiles it under 4.2 with ioredis 5.0.
 */
const NEEDS_TYPESCRIPT: Readonly<Record<string, { version: number; why: string }>> = {
  ioredis: {
    version: 400,
    why: "ioredis 5's typings need TypeScript 4.0 or later (they use labelled tuple elements), and pinning ioredis 4 is no way out: its typings (@types/ioredis) lack callBuffer, which the Redis store calls",
  },
};

/** What to tell a project whose TypeScript cannot read the typings of packages the scaffold imports; [] when none. */
export function typingsBeyondTypeScript(packages: Iterable<string>, typescriptVersion: number | undefined): string[] {
  if (typescriptVersion === undefined) return [];
  const label = `${Math.floor(typescriptVersion / 100)}.${typescriptVersion % 100}`;
  return [...new Set(packages)]
    .sort()
    .flatMap((name) => {
      const need = NEEDS_TYPESCRIPT[name];
      return need && typescriptVersion < need.version ? [`This project compiles with TypeScript ${label}: ${need.why}. Upgrade TypeScript to 4.x or later before compiling the scaffolding.`] : [];
    });
}
