import type { DesignModel } from '../../model/types.js';
import type { CodeSamples } from '../document/buildDocument.js';
import { storeDdl, type CodeSample } from './ddl.js';
import { middlewareSample } from './middleware.js';
import { cleanupSample, fingerprintSample, monitoringSample, testSample } from './samples.js';

/**
 * The code the document shows. Where a scaffold target exists for the stack, its real files
 * replace these samples (see `excerpts`), so the document embeds exactly what was generated.
 */
export function codeSamples(model: DesignModel, excerpts: Partial<Record<keyof CodeSamples, CodeSample>> = {}): CodeSamples {
  return {
    ddl: excerpts.ddl ?? storeDdl(model),
    middleware: excerpts.middleware ?? middlewareSample(model),
    fingerprint: excerpts.fingerprint ?? fingerprintSample(model),
    cleanup: excerpts.cleanup ?? cleanupSample(model),
    tests: excerpts.tests ?? testSample(model),
    monitoring: excerpts.monitoring ?? monitoringSample(model),
  };
}

/** JavaScript projects read JavaScript: strip the types from the TypeScript samples. */
export async function toJavaScript(samples: CodeSamples): Promise<CodeSamples> {
  const { ts } = await import('ts-morph');
  const convert = (sample: CodeSamples[keyof CodeSamples]) => {
    if (sample.language !== 'typescript') return sample;
    const output = ts.transpileModule(sample.code, {
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, removeComments: false },
      reportDiagnostics: false,
    }).outputText;
    return { ...sample, language: 'javascript', code: output.replace(/^export \{\};\n?/m, '').trimEnd(), path: sample.path?.replace(/\.ts$/, '.js') };
  };
  return {
    ddl: convert(samples.ddl),
    middleware: convert(samples.middleware),
    fingerprint: convert(samples.fingerprint),
    cleanup: convert(samples.cleanup),
    tests: convert(samples.tests),
    monitoring: convert(samples.monitoring),
  };
}

const PARSERS: Record<string, string> = { typescript: 'typescript', javascript: 'babel', yaml: 'yaml' };

/** Samples are formatted like the scaffolding, so the document reads like real code; SQL stays as written. */
export async function formatSamples(samples: CodeSamples): Promise<CodeSamples> {
  if (Object.values(samples).every((sample) => sample.formatted || !PARSERS[sample.language])) return samples;
  const prettier = await import('prettier');
  const entries = await Promise.all(
    Object.entries(samples).map(async ([id, sample]) => {
      const parser = PARSERS[sample.language];
      if (!parser || sample.formatted) return [id, sample] as const;
      try {
        const code = await prettier.format(sample.code, { parser, singleQuote: true, printWidth: 110, trailingComma: 'all' });
        return [id, { ...sample, code: code.trimEnd() }] as const;
      } catch {
        return [id, sample] as const;
      }
    }),
  );
  return Object.fromEntries(entries) as unknown as CodeSamples;
}
