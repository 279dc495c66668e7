import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { buildFigures, renderFigures } from '../../src/diagrams/index.js';
import { layoutWorkerExecArgv, type startLayoutWorker } from '../../src/diagrams/renderFigures.js';
import { expressStripe, nestjsAdyenSaga } from '../diagrams/models.js';
import { CLI_TEST_TIMEOUT, ROOT } from './cli.js';

const WORKER = path.join(ROOT, 'dist/diagrams/layoutWorker.js');

/** Runs `fn` as if the process had been started with `execArgv` (the test runner's own flags differ from a CLI run's). */
function withExecArgv<T>(execArgv: string[], fn: () => T): T {
  const saved = process.execArgv;
  process.execArgv = execArgv;
  try {
    return fn();
  } finally {
    process.execArgv = saved;
  }
}

describe('diagram layout on a worker thread (built CLI)', () => {
  it('turns module-syntax detection off only for a process started without flags (a worker given execArgv inherits none)', () => {
    const supported = process.allowedNodeEnvironmentFlags.has('--no-experimental-detect-module');
    expect(withExecArgv([], layoutWorkerExecArgv)).toEqual(supported ? ['--no-experimental-detect-module'] : undefined);
    expect(withExecArgv(['--import', './probe.mjs'], layoutWorkerExecArgv)).toBeUndefined();
  });

  it(
    'gives byte-identical SVG to the main thread, in order',
    async () => {
      // Like every e2e test, this runs the build (npm test builds first).
      expect(existsSync(WORKER), 'dist/ is missing: run `npm run build`').toBe(true);
      const figures = [...buildFigures(nestjsAdyenSaga), ...buildFigures(expressStripe)];
      const inProcess = await renderFigures(figures);
      const jobs = figures.map((figure) => ({ mermaid: figure.mermaid, meta: { id: figure.id, title: figure.title, desc: figure.caption } }));
      const answer = await new Promise<{ svgs?: string[]; error?: string }>((resolve, reject) => {
        // With the flags a plain CLI run gives it (module-syntax detection off where Node has the switch).
        const execArgv = withExecArgv([], layoutWorkerExecArgv);
        const worker = new Worker(WORKER, { workerData: { jobs }, ...(execArgv === undefined ? {} : { execArgv }) });
        worker.once('message', (message: { svgs?: string[]; error?: string }) => {
          resolve(message);
          void worker.terminate();
        });
        worker.once('error', reject);
      });
      expect(answer.error).toBeUndefined();
      expect(answer.svgs).toEqual(inProcess.map((figure) => figure.svg));
    },
    CLI_TEST_TIMEOUT,
  );

  it(
    'answers an error instead of dying on input the renderer rejects',
    async () => {
      const answer = await new Promise<{ svgs?: string[]; error?: string }>((resolve, reject) => {
        const worker = new Worker(WORKER, { workerData: { jobs: [{ mermaid: 'not a diagram ((', meta: { id: 'x', title: 'x', desc: 'x' } }] } });
        worker.once('message', (message: { svgs?: string[]; error?: string }) => {
          resolve(message);
          void worker.terminate();
        });
        worker.once('error', reject);
      });
      expect(answer.svgs ?? answer.error).toBeDefined();
    },
    CLI_TEST_TIMEOUT,
  );

  it(
    'a worker started before its jobs (startLayoutWorker, as generate does on a project without an SVG cache) lays out the same SVG',
    async () => {
      expect(existsSync(WORKER), 'dist/ is missing: run `npm run build`').toBe(true);
      // The built module: under the test runner the sources' worker would be TypeScript, and none is started.
      const built = (await import(pathToFileURL(path.join(ROOT, 'dist/diagrams/renderFigures.js')).href)) as { startLayoutWorker: typeof startLayoutWorker };
      const figures = buildFigures(expressStripe);
      const inProcess = await renderFigures(figures);
      const jobs = figures.map((figure) => ({ mermaid: figure.mermaid, meta: { id: figure.id, title: figure.title, desc: figure.caption } }));
      const worker = built.startLayoutWorker();
      expect(worker).toBeDefined();
      expect(await worker!.layOut(jobs)).toEqual(inProcess.map((figure) => figure.svg));
      // One that turns out not to be needed (every figure cached) is ended unused.
      built.startLayoutWorker()!.close();
    },
    CLI_TEST_TIMEOUT,
  );
});
