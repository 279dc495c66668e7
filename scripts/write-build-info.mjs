// Records which build this is (package version + digest of src, templates and dependencies) in dist/build-info.json,
// so `generate --check` trusts only an inputs key that the same build recorded (see src/emit/inputsKey.ts).
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { computeToolFingerprint } from '../dist/emit/inputsKey.js';

const fingerprint = await computeToolFingerprint(fileURLToPath(new URL('..', import.meta.url)));
await writeFile(new URL('../dist/build-info.json', import.meta.url), `${JSON.stringify({ fingerprint }, null, 2)}\n`);
