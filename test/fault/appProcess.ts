import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** stack.framework of the design the app is generated from; 'none' is the plain idempotent(fn) wrapper. */
export type Adapter = 'express' | 'fastify' | 'nestjs' | 'koa' | 'hono' | 'nextjs' | 'none';

export interface AppEnvironment {
  /** Folder of the compiled scaffold (holds index.js and providers.js). */
  readonly scaffoldOutDir: string;
  /** How a project of the scaffold's profile loads it: import() for ES modules, require() for CommonJS. */
  readonly scaffoldFormat: 'esm' | 'commonjs';
  /** Where the idempotency store connects: the fault proxy, or the database itself. */
  readonly storeUrl: string;
  /** Direct connection for the executions / effects tables. */
  readonly recorderUrl: string;
  readonly providerUrl: string;
  readonly barrierUrl: string;
  /**
   * The entry of an app compiled with the scaffold (exports bootstrap(action)); without it, the adapter's app in
   * apps/ is wired in plain JavaScript.
   */
  readonly appMain?: string;
}

/** One instance of the app as its own Node process, as it would run behind a load balancer. */
export interface AppProcess {
  readonly url: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** Resolves when the process has exited (SIGKILL included). */
  readonly exited: Promise<void>;
  /** What the process wrote to stderr, for failure messages. */
  stderr(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

const APPS = path.join(import.meta.dirname, 'apps');

export async function startApp(adapter: Adapter, environment: AppEnvironment): Promise<AppProcess> {
  const app = environment.appMain ? 'compiledApp.mjs' : `${adapter === 'none' ? 'plain' : adapter}App.mjs`;
  const child = spawn(process.execPath, [path.join(APPS, app)], {
    env: {
      ...process.env,
      SCAFFOLD_INDEX: pathToFileURL(path.join(environment.scaffoldOutDir, 'index.js')).href,
      SCAFFOLD_PROVIDERS: pathToFileURL(path.join(environment.scaffoldOutDir, 'providers.js')).href,
      SCAFFOLD_FORMAT: environment.scaffoldFormat,
      STORE_URL: environment.storeUrl,
      RECORDER_URL: environment.recorderUrl,
      PROVIDER_URL: environment.providerUrl,
      BARRIER_URL: environment.barrierUrl,
      ...(environment.appMain ? { APP_MAIN: environment.appMain } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let errors = '';
  child.stderr!.setEncoding('utf8').on('data', (text: string) => (errors += text));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.once('exit', (code, signal) => reject(new Error(`${adapter} app exited before listening (${code ?? signal}): ${errors}`)));
    child.stdout!.setEncoding('utf8').on('data', (text: string) => {
      output += text;
      const port = /listening (\d+)/.exec(output)?.[1];
      if (port) resolve(`http://127.0.0.1:${port}`);
    });
  });
  return {
    url,
    pid: child.pid!,
    child,
    exited,
    stderr: () => errors,
    async kill(signal = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
