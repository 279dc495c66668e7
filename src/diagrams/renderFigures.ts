import { cacheKey, pruneCache, readCache, writeCache } from '../emit/diskCache.js';
import { toolFingerprint } from '../emit/inputsKey.js';
import type { Figure } from './figure.js';
import { layOutInWorker, type LayoutWorker } from './layoutWorkerClient.js';
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

export { layoutWorkerExecArgv, startLayoutWorker, type LayoutWorker } from './layoutWorkerClient.js';
