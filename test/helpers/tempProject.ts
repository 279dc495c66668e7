import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A throwaway project in the temp folder holding `files` (path → text); the caller removes it. */
export async function tempProject(files: Readonly<Record<string, string>>, prefix = 'ib-project-'): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), text);
  }
  return dir;
}

/** tempProject for a test that builds its project outside an async function (a describe body, a sync helper). */
export function tempProjectSync(files: Readonly<Record<string, string>>, prefix = 'ib-project-'): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  return dir;
}
