import { cacheKey, pruneCache, readCache, writeCache } from '../emit/diskCache.js';
import { toolFingerprint } from '../emit/inputsKey.js';
import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { Figure } from './figure.js';
import type { SvgMeta } from './finishSvg.js';
import type { RendererName } from './renderers/diagramRenderer.js';
import { DEFAULT_RENDERER, renderers } from './renderers/registry.js';
import { readRenderedSvgs, renderKey } from './svgCache.js';

export interface RenderFiguresOptions {
  renderer?: RendererName;
  /** HTML previously written (the document, or every page of a split folder): its SVGs are reused when still valid. */
  previousHtml?: readonly string[];
  /** The user's project, where optional renderers are looked up. */
  cwd?: string;
  /**
   * The project whose cache (`.idempotency-builder/cache/svg/`) holds SVGs laid out by earlier runs, by render key and
   * tool build; `writeCache` stores this run's layouts there (a writing run only) and drops the ones it did not use.
   */
  cacheRoot?: string;
  writeCache?: boolean;
  /**
   * Lay beautiful-mermaid figures out on a worker thread, so a caller that does not await at once (generate, which
   * builds the scaffolding meanwhile) runs both on two cores. Same renderer, same SVG; falls back to this thread.
   */
  background?: boolean;
  /** A layout worker started before the figures were known (startLayoutWorker): used when figures need laying out, else ended. */
  worker?: LayoutWorker;
}

const SVG_BUCKET = 'svg';

/** Layouts made in this process, by render key: a second generate (init, tests, the API) lays nothing out again. */
const renderedInProcess = new Map<string, string>();

/** Returns the figures with `svg` filled in; the input is not modified. */
export async function renderFigures(figures: Figure[], options: RenderFiguresOptions = {}): Promise<Figure[]> {
  if (figures.length === 0) {
    options.worker?.close();
    return [];
  }
  const rendererName = options.renderer ?? DEFAULT_RENDERER;
  const previous = readRenderedSvgs(options.previousHtml ?? []);
  for (const [key, svg] of renderedInProcess) if (!previous.has(key)) previous.set(key, svg);
  const keyed = figures.map((figure) => ({ figure, key: renderKey(figure, rendererName) }));
  // The on-disk entry is named by the render key and the tool's build: a rebuilt tool lays everything out afresh.
  const build = options.cacheRoot === undefined ? undefined : await toolFingerprint();
  const entryOf = (key: string) => cacheKey(key, build ?? '');
  const onDisk = new Set<string>();
  if (options.cacheRoot !== undefined) {
    for (const { key } of keyed) {
      const cached = await readCache(options.cacheRoot, SVG_BUCKET, entryOf(key));
      if (cached === undefined) continue;
      onDisk.add(key);
      if (!previous.has(key)) previous.set(key, cached);
    }
  }
  const store = async () => {
    if (options.cacheRoot === undefined || !options.writeCache) return;
    for (const { key } of keyed) if (!onDisk.has(key)) await writeCache(options.cacheRoot, SVG_BUCKET, entryOf(key), previous.get(key)!);
    await pruneCache(options.cacheRoot, SVG_BUCKET, new Set(keyed.map(({ key }) => entryOf(key))));
  };
  if (keyed.every(({ key }) => previous.has(key))) {
    options.worker?.close();
    await store();
    return keyed.map(({ figure, key }) => ({ ...figure, svg: previous.get(key)!, renderKey: key }));
  }
  const missing = keyed.filter(({ key }) => !previous.has(key));
  if (rendererName === 'beautiful-mermaid' && (options.background || options.worker)) {
    const jobs = missing.map(({ figure }) => ({ mermaid: figure.mermaid, meta: { id: figure.id, title: figure.title, desc: figure.caption } }));
    const svgs = await (options.worker ? options.worker.layOut(jobs) : layOutInWorker(jobs));
    svgs?.forEach((svg, i) => previous.set(missing[i]!.key, svg));
  } else {
    options.worker?.close();
  }
  let session: Awaited<ReturnType<(typeof renderers)[RendererName]>> | undefined;
  try {
    const rendered: Figure[] = [];
    // One at a time: the mermaid-cli session shares one browser, and order keeps output stable.
    for (const { figure, key } of keyed) {
      let svg = previous.get(key);
      if (svg === undefined) {
        session ??= await renderers[rendererName]({ cwd: options.cwd ?? process.cwd() });
        svg = await session.render(figure.mermaid, { id: figure.id, title: figure.title, desc: figure.caption });
      }
      if (renderedInProcess.size >= 100) renderedInProcess.clear();
      renderedInProcess.set(key, svg);
      previous.set(key, svg);
      rendered.push({ ...figure, svg, renderKey: key });
    }
    await store();
    return rendered;
  } finally {
    await session?.close();
  }
}

/**
 * The worker imports elkjs's 1.6 MB CommonJS bundle (from beautiful-mermaid's ESM), whose package has no "type":
 * Node's module-syntax detection then compiles the whole bundle once more just to learn it is CommonJS (about a
 * quarter of the worker's time in a cold generate's profile). Every module the worker loads declares its format
 * (our dist and beautiful-mermaid say "module", elkjs is plain CommonJS), so the worker turns detection off.
 * Only when the process was started without flags: a worker given `execArgv` no longer inherits the process's own,
 * and some of those (V8 options) a worker rejects; then, and on a Node without the switch, it keeps the default.
 */
export function layoutWorkerExecArgv(): string[] | undefined {
  return process.execArgv.length === 0 && process.allowedNodeEnvironmentFlags.has('--no-experimental-detect-module') ? ['--no-experimental-detect-module'] : undefined;
}

/**
 * The layouts from a worker running layoutWorker.js, or undefined when no worker can run it (the sources run by a
 * test runner, where the worker file is TypeScript) or it failed: the caller then renders on this thread and meets
 * the same error, if any, there.
 */
async function layOutInWorker(jobs: ReadonlyArray<{ mermaid: string; meta: SvgMeta }>): Promise<string[] | undefined> {
  const script = new URL('./layoutWorker.js', import.meta.url);
  if (jobs.length === 0 || !import.meta.url.endsWith('.js') || !existsSync(script)) return undefined;
  return new Promise((resolve) => {
    let worker: InstanceType<typeof Worker>;
    try {
      const execArgv = layoutWorkerExecArgv();
      worker = new Worker(script, { workerData: { jobs }, ...(execArgv === undefined ? {} : { execArgv }) });
    } catch {
      resolve(undefined);
      return;
    }
    // Not ended on its answer: it still saves the renderer's code cache, then ends itself.
    worker.once('message', (answer: { svgs?: string[]; error?: string }) => resolve(answer.svgs?.length === jobs.length ? answer.svgs : undefined));
    worker.once('error', () => resolve(undefined));
    worker.once('exit', () => resolve(undefined));
  });
}

type LayoutJob = { mermaid: string; meta: SvgMeta };

/** A layout worker already loading the renderer, waiting for its jobs. */
export interface LayoutWorker {
  /** The layouts, or undefined when the worker failed (the caller then renders on its own thread). */
  layOut(jobs: readonly LayoutJob[]): Promise<string[] | undefined>;
  /** Ends the worker unused. */
  close(): void;
}

/**
 * Starts the layout worker before the figures are known, so loading beautiful-mermaid and elkjs (most of the
 * worker's time in a cold generate) overlaps reading the project and building the design too. Only worth it when
 * layout is certain (generate asks only when the project has no SVG cache yet); an unused worker is ended by
 * renderFigures. Unreferenced until it has jobs, so an error before then does not keep the process alive.
 * undefined where renderFigures would not use a worker either (sources run by a test runner).
 */
export function startLayoutWorker(): LayoutWorker | undefined {
  const script = new URL('./layoutWorker.js', import.meta.url);
  if (!import.meta.url.endsWith('.js') || !existsSync(script)) return undefined;
  let worker: Worker;
  try {
    const execArgv = layoutWorkerExecArgv();
    worker = new Worker(script, { ...(execArgv === undefined ? {} : { execArgv }) });
  } catch {
    return undefined;
  }
  worker.unref();
  // Until layOut listens, a failed start is only remembered (layOut then answers undefined at once).
  let failed = false;
  const onEarlyEnd = () => {
    failed = true;
  };
  worker.once('error', onEarlyEnd);
  worker.once('exit', onEarlyEnd);
  return {
    layOut(jobs) {
      worker.off('error', onEarlyEnd);
      worker.off('exit', onEarlyEnd);
      if (failed || jobs.length === 0) {
        void worker.terminate();
        return Promise.resolve(jobs.length === 0 ? [] : undefined);
      }
      worker.ref();
      return new Promise((resolve) => {
        // Not ended on its answer: it still saves the renderer's code cache, then ends itself.
        worker.once('message', (answer: { svgs?: string[]; error?: string }) => resolve(answer.svgs?.length === jobs.length ? answer.svgs : undefined));
        worker.once('error', () => resolve(undefined));
        worker.once('exit', () => resolve(undefined));
        worker.postMessage({ jobs });
      });
    },
    close() {
      void worker.terminate();
    },
  };
}
