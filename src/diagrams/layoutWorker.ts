import { parentPort, workerData } from 'node:worker_threads';
import type { SvgMeta } from './finishSvg.js';
import { openBeautifulMermaid } from './renderers/beautifulMermaid.js';

type Job = { mermaid: string; meta: SvgMeta };

/**
 * Lays out beautiful-mermaid figures off the main thread (see renderFigures): the same renderer, so the same SVG,
 * while generate builds and formats the scaffolding. The jobs come in `workerData`, or, for a worker started before
 * the figures were known (startLayoutWorker), in the first message; either way the renderer (elkjs's large bundle)
 * starts loading at once. Answers `{ svgs }` in order, or `{ error }`.
 */
const opening = openBeautifulMermaid();
// Awaited below, once the jobs are here; until then a failure must not surface as an unhandled rejection.
opening.catch(() => undefined);
const jobs =
  (workerData as { jobs?: Job[] } | null)?.jobs ?? (await new Promise<Job[]>((resolve) => parentPort!.once('message', (message: { jobs: Job[] }) => resolve(message.jobs))));
try {
  const session = await opening;
  try {
    const svgs: string[] = [];
    for (const job of jobs) svgs.push(await session.render(job.mermaid, job.meta));
    parentPort!.postMessage({ svgs });
  } finally {
    // After the answer: closing keeps V8's code for the next run (the renderer's code cache), while the main thread
    // goes on with the document; the worker then ends itself.
    await session.close();
  }
} catch (error) {
  parentPort!.postMessage({ error: error instanceof Error ? error.message : String(error) });
}
process.exit(0);
