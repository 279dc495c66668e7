// Module hooks (registered with --import) that append every module URL Node loads to $IB_IMPORT_LOG, so a test can
// see what a command pulled in without parsing a CPU profile.
import { appendFileSync } from 'node:fs';

export async function load(url, context, nextLoad) {
  appendFileSync(process.env.IB_IMPORT_LOG, `${url}\n`);
  return nextLoad(url, context);
}
