import { existsSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { buildFigures, renderFigures } from '../../src/diagrams/index.js';
import { layoutWorkerExecArgv } from '../../src/diagrams/renderFigures.js';
import { expressStripe, nestjsAdyenSaga } from '../diagrams/models.js';
import { CLI_TEST_TIMEOUT, ROOT } from './cli.js';

const WORKER = path.join(ROOT, 'dist/diagrams/layoutWorker.js');

describe('diagram layout on a worker thread (built CLI)', () => {
  it(
    'gives byte-identical SVG to the main thread, in order',
    async () => {
      // Like every e2e test, this runs the build (npm test builds first).
      expect(existsSync(WORKER), 'dist/ is missing: run `npm run build`').toBe(true);
      const figures = [...buildFigures(nestjsAdyenSaga), ...buildFigures(expressStripe)];
      const inProcess = await renderFigures(figures);
      const jobs = figures.map((figure) => ({ mermaid: figure.mermaid, meta: { id: figure.id, title: figure.title, desc: figure.caption } }));
      const answer = await new Promise<{ svgs?: string[]; error?: string }>((resolve, reject) => {
        // With the flags generate gives it (module-syntax detection off where Node has the switch).
        const worker = new Worker(WORKER, { workerData: { jobs }, execArgv: layoutWorkerExecArgv() });
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
});
