import { describe, expect, it } from 'vitest';
import { formatFinding, verifyPath } from '../../src/verify/index.js';
import { fixtureNames } from '../helpers/fixtures.js';
import { generateFixture } from '../split/generateFixture.js';

// generate already refuses to write a document that fails verification; this checks the written
// result from disk too, the way a user's `idempotency-builder verify` would see it.
describe.each(fixtureNames())('verify on what generate writes for %s', (name) => {
  for (const format of ['html', 'md'] as const) {
    for (const split of ['auto', 'always'] as const) {
      it(`${format}, split ${split}: no findings`, async () => {
        const project = await generateFixture(name, { format, split });
        expect((await verifyPath(project.documentPath)).map(formatFinding)).toEqual([]);
      });
    }
  }
});
