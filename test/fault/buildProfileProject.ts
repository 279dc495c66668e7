import { execFile } from 'node:child_process';
import { cp, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'vite';
import type { DesignModel } from '../../src/model/types.js';
import type { Generated } from '../scaffold/generateInto.js';
import { generateProfileProject, SCAFFOLD_DIR, TSC, type ProfileCase } from '../scaffold/profileCases.js';

const run = promisify(execFile);

/**
 * The scaffold of a profile's project (profileCases.ts), built the way that project ships it: tsc's output under the
 * profile's tsconfig; for bundler resolution (extensionless ESM imports Node cannot load) tsc type-checks and Vite
 * bundles, as a Vite/tsup project would; JavaScript runs as written. `outDir` holds index.js and providers.js.
 * `appSources`: a folder whose files join the project's src/ beside the scaffold (the user's own app, importing it)
 * and are compiled with it, so the app runs as the project's tsc emits it (TypeScript, non-bundled profiles).
 */
export async function buildProfileProject(profileCase: ProfileCase, model: DesignModel, label: string, appSources?: string): Promise<Generated> {
  const { dir, profile, files } = await generateProfileProject(profileCase, model, label);
  if (appSources) await cp(appSources, path.join(dir, 'src'), { recursive: true });
  const format = profile.moduleSystem;
  if (profileCase.language === 'javascript') {
    const outDir = path.join(dir, SCAFFOLD_DIR);
    await expectFormat(path.join(outDir, 'index.js'), format);
    return { dir, outDir, files, tscOutput: '', format };
  }
  const outDir = path.join(dir, 'dist/idempotency');
  const bundled = profileCase.compilerOptions?.['moduleResolution'] === 'bundler';
  const tscOutput = await run(process.execPath, [TSC, '-p', dir, ...(bundled ? [] : ['--noEmit', 'false'])], { cwd: dir, maxBuffer: 16 * 1024 * 1024 }).then(
    () => '',
    (error: { stdout?: string }) => String(error.stdout),
  );
  if (bundled && !tscOutput) {
    // An SSR build keeps the packages (pg, express) external, resolved from node_modules at run time.
    await build({
      root: dir,
      configFile: false,
      logLevel: 'warn',
      build: {
        ssr: true,
        outDir,
        emptyOutDir: true,
        minify: false,
        rolldownOptions: {
          input: { index: path.join(dir, SCAFFOLD_DIR, 'index.ts'), providers: path.join(dir, SCAFFOLD_DIR, 'providers.ts') },
          output: { format: 'es', entryFileNames: '[name].js' },
        },
      },
    });
  }
  if (!tscOutput) await expectFormat(path.join(outDir, 'index.js'), format);
  return { dir, outDir, files, tscOutput, format };
}

/**
 * Node 20.19+ require()s an ES module and detects module syntax in a .js file, so a CommonJS profile whose output
 * were ES modules would still load: the emitted entry must be what the profile says.
 */
async function expectFormat(file: string, format: 'esm' | 'commonjs'): Promise<void> {
  const code = await readFile(file, 'utf8');
  const esmSyntax = /^(import|export)\b/m.test(code);
  if (esmSyntax !== (format === 'esm')) throw new Error(`${file} is not ${format === 'esm' ? 'an ES module' : 'CommonJS'} as its profile says`);
}
