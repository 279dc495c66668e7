import type { RawCompilerOptions } from './readTsconfig.js';
import type { ProjectProfile } from './types.js';

const TARGET_YEARS: Record<string, number> = { es3: 3, es5: 5, es6: 2015, esnext: 2099 };
const yearOf = (value: unknown, fallback: number): number => {
  const text = typeof value === 'string' ? value.toLowerCase() : '';
  return TARGET_YEARS[text] ?? (/^es(\d{4})$/.exec(text) ? Number(text.slice(2)) : fallback);
};
const lower = (value: unknown): string | undefined => (typeof value === 'string' ? value.toLowerCase() : undefined);

/**
 * The profile part that follows from compiler options alone, as written in tsconfig, and the package's "type".
 * `unresolved` names bases that could not be read: in an ES-module package such a base most likely sets NodeNext
 * (the Node bases do), where TypeScript's own default would be CommonJS with extensionless imports, which Node
 * cannot load from a "type": "module" package.
 */
export function profileFromOptions(written: RawCompilerOptions, packageType: 'module' | 'commonjs', unresolved: readonly string[] = []): Omit<ProjectProfile, 'testRunner' | 'paths' | 'tsconfig'> {
  const options = unresolved.length > 0 && written['module'] === undefined && packageType === 'module' ? { module: 'NodeNext', ...written } : written;
  const target = yearOf(options['target'], 5);
  const module = lower(options['module']) ?? (target >= 2015 ? 'es2015' : 'commonjs');
  const nodeModule = module === 'node16' || module === 'node18' || module === 'nodenext';
  const resolution = (lower(options['moduleResolution']) ?? (nodeModule ? 'nodenext' : module === 'preserve' ? 'bundler' : 'node10')).replace(/^node$/, 'node10');
  const moduleSystem: ProjectProfile['moduleSystem'] = nodeModule
    ? packageType === 'module'
      ? 'esm'
      : 'commonjs'
    : module === 'commonjs' || module === 'amd' || module === 'umd'
      ? 'commonjs'
      : 'esm';
  const nodeResolution = resolution === 'node16' || resolution === 'nodenext';
  // Node's ESM loader needs the extension; bundlers, ts-jest and require() do not, and some (jest) fail with it.
  const relativeImports = moduleSystem === 'esm' && (nodeResolution || (resolution !== 'bundler' && packageType === 'module')) ? 'js-extension' : 'extensionless';
  const interop = typeof options['esModuleInterop'] === 'boolean' ? options['esModuleInterop'] : nodeModule;
  const synthetic = typeof options['allowSyntheticDefaultImports'] === 'boolean' ? options['allowSyntheticDefaultImports'] : interop || module === 'system' || resolution === 'bundler';
  return {
    language: 'typescript',
    moduleSystem,
    relativeImports,
    defaultImportInterop: moduleSystem === 'commonjs' ? interop : synthetic,
    esLibrary: libraryYear(options, target),
  };
}

function libraryYear(options: RawCompilerOptions, target: number): number {
  const year = (text: string) => (/^(?:lib\.)?esnext/i.test(text) ? 2099 : Number(/^(?:lib\.)?es(\d{4})/i.exec(text)?.[1] ?? (/^(?:lib\.)?es6/i.test(text) ? 2015 : 0)));
  const fromTarget = target >= 2015 ? target : 5;
  const lib = Array.isArray(options['lib']) ? options['lib'].filter((entry): entry is string => typeof entry === 'string') : [];
  const libs = lib.map(year).filter((value) => value > 0);
  return libs.length > 0 ? Math.max(...libs) : fromTarget;
}
