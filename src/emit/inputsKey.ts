import { createHash } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * One hash of everything a generation's bytes depend on, recorded in the manifest by a run that wrote (or found
 * unchanged) every file. While it and every file on disk still match, `generate --check` knows the answer without
 * rendering, formatting or laying out anything. Bump KEY_FORMAT when the list of inputs below changes.
 */
const KEY_FORMAT = 'inputs@3';

/** What `apply` wired and left manual: the document's wiring table is rendered from it. */
const APPLY_RECORD = '.idempotency-builder/apply.json';

export interface GenerationInputs {
  /** The config file's text (LF-normalized): the same text validated by the same build gives the same config. */
  configText: string;
  /** The protection snapshot's file text ('' when there is none). */
  snapshot: string;
  format: string;
  output: string;
  split?: string;
  diagrams?: string;
  /** The footer date (YYYY-MM-DD) the files carry. */
  date: string;
  /** Every generated path, project-relative. */
  files: readonly string[];
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

export async function inputsKey(root: string, inputs: GenerationInputs): Promise<string> {
  const files = [...inputs.files].sort();
  const parts = [KEY_FORMAT, await toolFingerprint(), inputs.configText, inputs.snapshot, inputs.format, inputs.output, inputs.split ?? null, inputs.diagrams ?? null, inputs.date, files];
  const applyRecord = await readFile(path.join(path.resolve(root), APPLY_RECORD), 'utf8').catch(() => '');
  return sha256(JSON.stringify([...parts, applyRecord, await environmentDigest(root, files)]));
}

/**
 * Files outside the config that change what generate writes: prettier's config (scaffold code follows the user's,
 * looked up from each file's folder upwards, as prettier does) and package.json ("type" decides the JavaScript
 * module format; it may hold a "prettier" key) and tsconfig files (module system and target shape the scaffold), and
 * ESLint's config and ignore file (its --fix has the last word on scaffold code). A shared prettier or ESLint config
 * installed as a package is not followed: after changing one, run a plain `generate`.
 */
const ENVIRONMENT_FILE = /^(?:package\.json|tsconfig(?:\.[\w.-]+)?\.json|\.prettierrc(?:\.[\w.]+)?|prettier\.config\.[cm]?[jt]s|eslint\.config\.[cm]?[jt]s|\.eslintrc(?:\.[\w]+)?|\.eslintignore)$/;

async function environmentDigest(projectRoot: string, files: readonly string[]): Promise<string> {
  const root = path.resolve(projectRoot);
  const folders = new Set<string>();
  for (const file of files) {
    for (let dir = path.dirname(path.resolve(root, file)); !folders.has(dir); dir = path.dirname(dir)) {
      folders.add(dir);
      if (path.dirname(dir) === dir) break;
    }
  }
  const hash = createHash('sha256');
  for (const dir of [...folders].sort()) {
    const names = (await readdir(dir).catch(() => [] as string[])).filter((name) => ENVIRONMENT_FILE.test(name)).sort();
    for (const name of names) {
      const text = await readFile(path.join(dir, name), 'utf8').catch(() => '');
      // Relative, so a clone in another folder (CI) computes the same key.
      hash.update(`${path.relative(root, dir).split(path.sep).join('/')}/${name}\0${text}\0`);
    }
  }
  return hash.digest('hex');
}

let fingerprint: Promise<string> | undefined;

/**
 * Which build of the tool is running: the package version plus a digest of its sources, templates and pinned
 * dependencies, so a rebuilt tool with a new template never trusts a key an older build recorded. `npm run build`
 * stores it in dist/build-info.json; running from src (tests) computes the same value from the files.
 */
export function toolFingerprint(): Promise<string> {
  fingerprint ??= readFile(new URL('../build-info.json', import.meta.url), 'utf8')
    .then((text) => (JSON.parse(text) as { fingerprint?: unknown }).fingerprint)
    .catch(() => undefined)
    .then((stored) => (typeof stored === 'string' ? stored : computeToolFingerprint(fileURLToPath(new URL('../../', import.meta.url)))));
  return fingerprint;
}

/** The digest behind toolFingerprint, for the package rooted at `packageRoot`. */
export async function computeToolFingerprint(packageRoot: string): Promise<string> {
  const hash = createHash('sha256');
  const manifest = JSON.parse(await readFile(path.join(packageRoot, 'package.json'), 'utf8')) as { version?: string; dependencies?: unknown };
  hash.update(JSON.stringify([manifest.version, manifest.dependencies])).update('\0');
  for (const folder of ['src', 'templates']) {
    const entries = await readdir(path.join(packageRoot, folder), { recursive: true, withFileTypes: true }).catch(() => []);
    const files = entries.filter((entry) => entry.isFile()).map((entry) => path.relative(packageRoot, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'));
    for (const file of files.sort()) hash.update(file).update('\0').update(await readFile(path.join(packageRoot, file))).update('\0');
  }
  return `${manifest.version ?? '0.0.0'}+${hash.digest('hex').slice(0, 16)}`;
}
