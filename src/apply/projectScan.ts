import { AsyncLocalStorage } from 'node:async_hooks';
import { readInside } from '../emit/safePath.js';
import { walkProject, type WalkOptions, type WalkResult } from '../inspect/files/walkProject.js';

/**
 * One apply plan walks the project and reads its files once: the passes that look across the project (principal,
 * webhook middleware, named handlers, client callers, Next.js and NestJS wiring, provider keys) share what the first
 * of them read. The cache lives for one planApply call (planning writes nothing), so a later run sees the files anew.
 */
interface Scan {
  walks: Map<string, Promise<WalkResult>>;
  texts: Map<string, Promise<string | undefined>>;
}

const scope = new AsyncLocalStorage<Scan>();

/** Runs `plan` with a project cache that its walks and reads (below) share. */
export function withProjectScan<T>(plan: () => Promise<T>): Promise<T> {
  return scope.run({ walks: new Map(), texts: new Map() }, plan);
}

/** walkProject, once per root and options within a plan. */
export function projectFiles(root: string, options: WalkOptions = {}): Promise<WalkResult> {
  const scan = scope.getStore();
  if (!scan) return walkProject(root, options);
  const key = `${options.tests === true ? 'tests' : 'sources'}\0${root}`;
  let walk = scan.walks.get(key);
  if (!walk) scan.walks.set(key, (walk = walkProject(root, options)));
  return walk;
}

/** A project file's text (undefined when it cannot be read inside the root), once per plan. */
export function projectFile(root: string, rel: string): Promise<string | undefined> {
  const scan = scope.getStore();
  const read = () => readInside(root, rel).catch(() => undefined);
  if (!scan) return read();
  const key = `${root}\0${rel}`;
  let text = scan.texts.get(key);
  if (!text) scan.texts.set(key, (text = read()));
  return text;
}
