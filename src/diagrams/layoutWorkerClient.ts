import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { SvgMeta } from './finishSvg.js';

/*
 * The diagram layout worker, seen from the thread that starts it. Kept apart from renderFigures (and light: Node
 * built-ins only) so the CLI can start the worker before the rest of generate has loaded.
 */

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
export async function layOutInWorker(jobs: ReadonlyArray<{ mermaid: string; meta: SvgMeta }>): Promise<string[] | undefined> {
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

export type LayoutJob = { mermaid: string; meta: SvgMeta };

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

let prestarted: LayoutWorker | undefined;

/**
 * Starts the layout worker at the very beginning of a CLI run that will lay figures out (see cli/prestartLayout), so
 * loading the renderer overlaps loading and running everything else; generate claims it with claimPrestartedWorker.
 */
export function prestartLayoutWorker(): void {
  prestarted ??= startLayoutWorker();
}

/** The worker prestartLayoutWorker started, handed over once (undefined if none, or already claimed). */
export function claimPrestartedWorker(): LayoutWorker | undefined {
  const worker = prestarted;
  prestarted = undefined;
  return worker;
}
