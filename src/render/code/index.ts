/**
 * The code the document shows: excerpts of the files generated for the design, each titled with its generated path.
 * There are no code sketches written for the document alone, so every block is code that exists (and compiles) in
 * the scaffolding.
 */
export type CodeSampleId = 'ddl' | 'middleware' | 'fingerprint' | 'cleanup' | 'tests' | 'monitoring';

export interface CodeSample {
  language: string;
  code: string;
  /** The generated file it is taken from, project-relative. */
  path: string;
  /** Show only this top-level declaration (and the comment lines right above it) of the file. */
  declaration?: string;
  formatted?: boolean;
}

/** A block per excerpt the scaffolding offers; a missing one is said in prose by the section. */
export type CodeSamples = Partial<Record<CodeSampleId, CodeSample>>;

export interface GeneratedFileRef {
  path: string;
  contents: string;
  role: string;
}

/**
 * Fills the store-definition excerpt for a store without a migration (Redis): its claim script, the part of the
 * store that makes a second claim of a live key impossible.
 */
export function completeSamples(samples: CodeSamples, files: readonly GeneratedFileRef[]): CodeSamples {
  if (samples.ddl) return samples;
  const store = files.find((file) => file.role === 'store' && /Store\.(ts|js|mjs|cjs)$/.test(file.path) && /^const CLAIM = /m.test(file.contents));
  if (!store) return samples;
  const language = /\.ts$/.test(store.path) ? 'typescript' : 'javascript';
  const complete = /^const COMPLETE = /m.test(store.contents);
  return {
    ...samples,
    ddl: { language, code: store.contents, path: store.path, declaration: 'CLAIM' },
    // No cleanup job: the completion script gives each record its retention as an expiry.
    ...(samples.cleanup || !complete ? {} : { cleanup: { language, code: store.contents, path: store.path, declaration: 'COMPLETE' } }),
  };
}

/** The excerpt's text from its file's final (formatted) contents. */
export function excerptText(sample: Pick<CodeSample, 'declaration'>, contents: string): string {
  if (!sample.declaration) return contents.trimEnd();
  const lines = contents.split('\n');
  const start = lines.findIndex((line) => line.startsWith(`const ${sample.declaration} = `) || line.startsWith(`export const ${sample.declaration} = `));
  if (start === -1) throw new Error(`bug: ${sample.declaration} is not declared in the file the document excerpts`);
  let first = start;
  while (first > 0 && lines[first - 1]!.startsWith('//')) first -= 1;
  // A declaration ends at the first line that closes a statement at the top level.
  let end = start;
  while (end < lines.length - 1 && !/^\S.*;$|^`;$|^\};$|^\];$|^\);$/.test(lines[end]!)) end += 1;
  return lines.slice(first, end + 1).join('\n');
}
