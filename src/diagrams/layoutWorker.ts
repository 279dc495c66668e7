import { parentPort, workerData } from 'node:worker_threads';
import type { SvgMeta } from './finishSvg.js';
import { openBeautifulMermaid } from './renderers/beautifulMermaid.js';

/**
 * Lays out beautiful-mermaid figures off the main thread (see renderFigures): the same renderer, so the same SVG,
 * while generate builds and formats the scaffolding. Answers `{ svgs }` in order, or `{ error }`.
 */
const { jobs } = workerData as { jobs: Array<{ mermaid: string; meta: SvgMeta }> };
try {
  const session = await openBeautifulMermaid();
  try {
    const svgs: string[] = [];
    for (const job of jobs) svgs.push(await session.render(job.mermaid, job.meta));
    parentPort!.postMessage({ svgs });
  } finally {
    await session.close();
  }
} catch (error) {
  parentPort!.postMessage({ error: error instanceof Error ? error.message : String(error) });
}
