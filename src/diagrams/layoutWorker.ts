import { parentPort, workerData } from 'node:worker_threads';
import type { SvgMeta } from './finishSvg.js';
import type { DiagramRenderer } from './renderers/diagramRenderer.js';
import { openBeautifulMermaid } from './renderers/beautifulMermaid.js';

type Job = { mermaid: string; meta: SvgMeta };

/**
 * A request flow in the shape generate draws (rounded start, decisions, labelled and dotted edges). Laying it out
 * once while a worker started early waits for its jobs compiles and optimises the layout code, which otherwise
 * happens during the first real layout: about two thirds of its time in a cold run. Nothing is kept from it, and
 * the layout of a graph does not depend on what was laid out before (the SVG tests render every figure twice).
 */
const WARM_UP = [
  'flowchart TD',
  '    request("request with key")',
  '    valid{"key valid?"}',
  '    rejected["400"]',
  '    claim{"claim key"}',
  '    replay["stored response"]',
  '    run["run the action"]',
  '    done(["201"])',
  '    request --> valid',
  '    valid -->|no| rejected',
  '    valid -->|yes| claim',
  '    claim -->|done before| replay',
  '    claim -->|new| run',
  '    run -->|success| done',
  '    run -.->|failure: release| claim',
].join('\n');

function warmUp(session: DiagramRenderer): void {
  // Only while nothing else is waiting: jobs that already came go first.
  if (arrived) return;
  try {
    session.render(WARM_UP, { id: 'warm-up', title: 'warm-up', desc: 'warm-up' }).catch(() => undefined);
  } catch {
    // A warm-up that fails leaves the real layouts as they were.
  }
}

/**
 * Lays out beautiful-mermaid figures off the main thread (see renderFigures): the same renderer, so the same SVG,
 * while generate builds and formats the scaffolding. The jobs come in `workerData`, or, for a worker started before
 * the figures were known (startLayoutWorker), in the first message; either way the renderer (elkjs's large bundle)
 * starts loading at once. Answers `{ svgs }` in order, or `{ error }`.
 */
const opening = openBeautifulMermaid();
// Awaited below, once the jobs are here; until then a failure must not surface as an unhandled rejection.
opening.catch(() => undefined);
const given = (workerData as { jobs?: Job[] } | null)?.jobs;
let arrived: Job[] | undefined;
const waiting = given ? undefined : new Promise<Job[]>((resolve) => parentPort!.once('message', (message: { jobs: Job[] }) => resolve((arrived = message.jobs))));
if (!given) void opening.then(warmUp, () => undefined);
const jobs = given ?? (await waiting!);
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

