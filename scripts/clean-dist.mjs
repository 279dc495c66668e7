// Empties dist/ before a release build, so files of since-deleted sources never end up in the published tarball.
import { rm } from 'node:fs/promises';

await rm(new URL('../dist/', import.meta.url), { recursive: true, force: true });
