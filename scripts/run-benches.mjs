// `npm run bench`: runs every bench/*.mjs in name order, each in its own process, and fails if any of them fails.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';

const dir = path.resolve(import.meta.dirname, '../bench');
const benches = readdirSync(dir)
  .filter((name) => name.endsWith('.mjs'))
  .sort();
let failed = 0;
for (const name of benches) {
  console.log(`\n▶ bench/${name}`);
  const run = spawnSync(process.execPath, [path.join(dir, name), ...process.argv.slice(2)], { stdio: 'inherit' });
  if (run.status !== 0) {
    failed++;
    console.error(`bench/${name} exited ${run.status ?? run.signal}`);
  }
}
process.exitCode = failed > 0 ? 1 : 0;
