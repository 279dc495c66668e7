import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ownScaffoldOnly } from '../../src/apply/planApply.js';
import type { ManualStep, WiringTarget } from '../../src/apply/types.js';
import type { DesignModel } from '../../src/model/types.js';

describe('apply in a repository whose actions live in several packages', () => {
  it('wires the actions of scaffold.dir\'s package and names the other package\'s own scaffold for the rest', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'ib-own-scaffold-'));
    writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'repo', private: true, workspaces: ['packages/*'] }));
    for (const name of ['api', 'worker']) {
      mkdirSync(path.join(root, `packages/${name}/src`), { recursive: true });
      writeFileSync(path.join(root, `packages/${name}/package.json`), JSON.stringify({ name }));
    }
    const model = { actions: [{ name: 'createOrder', source: 'packages/api/src/orders.ts:4' }, { name: 'consumeJobs', source: 'packages/worker/src/jobs.ts:9' }] } as unknown as DesignModel;
    const target = (action: string, file: string, line: number, trigger: WiringTarget['trigger']): WiringTarget => ({ action, codeName: action, trigger, file, line });
    const manual: ManualStep[] = [];
    const kept = ownScaffoldOnly(root, model, 'packages/api/src/idempotency', [target('createOrder', 'packages/api/src/orders.ts', 4, 'http'), target('consumeJobs', 'packages/worker/src/jobs.ts', 9, 'consumer')], manual);
    expect(kept.map((t) => t.action)).toEqual(['createOrder']);
    expect(manual).toEqual([
      {
        action: 'consumeJobs',
        file: 'packages/worker/src/jobs.ts',
        line: 9,
        reason: "its package (packages/worker) has its own scaffold in packages/worker/src/idempotency, and apply wires the one in packages/api/src/idempotency (scaffold.dir) only: wire it with packages/worker/src/idempotency as that folder's README shows",
      },
    ]);
  });
});
