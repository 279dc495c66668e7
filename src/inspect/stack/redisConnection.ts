import { readFile } from 'node:fs/promises';
import { ts } from 'ts-morph';
import { walkProject } from '../files/walkProject.js';
import { lineOf } from '../parse/astHelpers.js';
import { parseSource } from '../parse/parseSource.js';
import type { StoreConnection } from '../types.js';

/** A Redis variable: REDIS_URL, REDIS_HOST, BULL_REDIS_PASSWORD; not Upstash's REST endpoint and token, which are no Redis protocol. */
const REDIS_VARIABLE = /REDIS/i;
const REST_VARIABLE = /REST/i;
const URL_VARIABLE = /(URL|URI|DSN|CONNECTION(_STRING)?)$/i;

/**
 * Where the project's own code says its Redis is, for the instance apply writes when the store is Redis: a
 * `process.env.REDIS_URL`-like variable it reads (a URL), else an object whose `host` (and `port`, `password`) it reads
 * from REDIS variables (orders-bullmq@be502b6's BullMQ connection: `{ host: process.env.REDIS_HOST || 'localhost',
 * port: Number(process.env.REDIS_PORT) || 6379 }`), looked for in `packageDir` first. Files under `skip` (the
 * generated scaffold) are not the project's.
 */
export async function findRedisConnection(root: string, skip?: string, packageDir = ''): Promise<StoreConnection | undefined> {
  const { files } = await walkProject(root);
  // The scaffold's own package first (a service beside the root app reads its own variables), then the rest.
  const own = (rel: string) => packageDir === '' || rel.startsWith(`${packageDir}/`);
  const ordered = [...files.filter((f) => own(f.rel)), ...files.filter((f) => !own(f.rel))];
  let parts: StoreConnection | undefined;
  for (const file of ordered) {
    // What the package itself says wins over a URL elsewhere in the repository.
    if (parts && !own(file.rel) && own(parts.file)) return parts;
    if (file.kind !== 'source' || (skip !== undefined && (file.rel === skip || file.rel.startsWith(`${skip}/`)))) continue;
    const text = await readFile(file.abs, 'utf8').catch(() => '');
    if (!REDIS_VARIABLE.test(text) || !text.includes('process.env')) continue;
    const { sf } = parseSource(file.rel, text, { parents: false });
    let url: StoreConnection | undefined;
    const visit = (node: ts.Node): void => {
      if (url) return;
      const name = envName(node);
      if (name && REDIS_VARIABLE.test(name) && !REST_VARIABLE.test(name) && URL_VARIABLE.test(name)) url = { store: 'redis', url: name, file: file.rel, line: lineOf(sf, node) };
      if (!parts && ts.isObjectLiteralExpression(node)) {
        const read = (key: string) => {
          const prop = node.properties.find((p) => p.name !== undefined && ts.isIdentifier(p.name) && p.name.text === key);
          return prop && ts.isPropertyAssignment(prop) ? firstEnvName(prop.initializer) : undefined;
        };
        const host = read('host');
        if (host && REDIS_VARIABLE.test(host)) {
          const port = read('port');
          const password = read('password');
          parts = { store: 'redis', host, ...(port ? { port } : {}), ...(password ? { password } : {}), file: file.rel, line: lineOf(sf, node) };
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
    if (url) return url;
  }
  return parts;
}

/** NAME of `process.env.NAME` or `process.env['NAME']`. */
function envName(node: ts.Node): string | undefined {
  const isEnv = (e: ts.Expression) => ts.isPropertyAccessExpression(e) && e.name.text === 'env' && ts.isIdentifier(e.expression) && e.expression.text === 'process';
  if (ts.isPropertyAccessExpression(node) && isEnv(node.expression)) return node.name.text;
  if (ts.isElementAccessExpression(node) && isEnv(node.expression) && ts.isStringLiteralLike(node.argumentExpression)) return node.argumentExpression.text;
  return undefined;
}

/** The first variable an expression reads (`Number(process.env.REDIS_PORT) || 6379` → REDIS_PORT). */
function firstEnvName(node: ts.Node): string | undefined {
  const own = envName(node);
  if (own) return own;
  let found: string | undefined;
  ts.forEachChild(node, (child) => {
    found ??= firstEnvName(child);
  });
  return found;
}
