import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Packages that serve HTTP. Next.js last: in a workspace that has both, the Next.js app is usually the front end
 * and the Express/Fastify/NestJS/Koa/Hono package the API.
 */
export const SERVER_FRAMEWORKS = ['express', 'fastify', '@nestjs/core', 'koa', 'hono', 'next'] as const;

/**
 * The workspace package that serves HTTP: the one whose package.json depends on a server framework, preferring the
 * earlier framework in SERVER_FRAMEWORKS, then the order given. Where the scaffold goes when no protected handler
 * says which package it belongs to (no actions found, or handlers outside every package). Undefined when none does.
 */
export function findServerPackage(root: string, packageDirs: readonly string[], readText: (file: string) => string | undefined = readOrUndefined): string | undefined {
  const ranked = packageDirs
    .map((dir, index) => ({ dir, index, rank: frameworkRank(readText(path.join(root, dir, 'package.json'))) }))
    .filter((entry) => entry.rank !== undefined)
    .sort((a, b) => a.rank! - b.rank! || a.index - b.index);
  return ranked[0]?.dir;
}

function frameworkRank(manifestText: string | undefined): number | undefined {
  let manifest: unknown;
  try {
    manifest = JSON.parse(manifestText ?? '');
  } catch {
    return undefined;
  }
  if (manifest === null || typeof manifest !== 'object') return undefined;
  const declared = new Set(
    // Not devDependencies: a library that starts an Express app in its tests does not serve anything.
    ['dependencies', 'peerDependencies'].flatMap((key) => {
      const deps = (manifest as Record<string, unknown>)[key];
      return deps !== null && typeof deps === 'object' ? Object.keys(deps) : [];
    }),
  );
  const index = SERVER_FRAMEWORKS.findIndex((name) => declared.has(name));
  return index === -1 ? undefined : index;
}

function readOrUndefined(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
