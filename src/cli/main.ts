import type { CommanderError } from 'commander';
import { readFileSync } from 'node:fs';
import { CancelledError, FindingsError, UserError, isKnownError } from '../errors.js';
import { createLogger } from '../logger.js';
import { EXIT, EXIT_CODES_HELP } from './exitCodes.js';
import { exitCodeFor, installInterrupts, type Interrupts } from './interrupt.js';

/** The package's own version: dist/cli/main.js and src/cli/main.ts both sit two folders below package.json. */
function packageVersion(): string {
  const raw = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  return typeof raw.version === 'string' ? raw.version : '0.0.0';
}

/** The only place that decides exit codes: 0 ok, 1 findings, 2 usage/config/environment, 70 bug, 130 cancelled. */
export async function main(argv: readonly string[]): Promise<void> {
  const args = argv.slice(2);
  if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
    // The most common probe of an installed CLI loads nothing at all, not even the argument parser.
    process.stdout.write(`${packageVersion()}\n`);
    process.exitCode ??= EXIT.ok;
    return;
  }
  // A cold `generate` spends most of its time laying diagrams out on a worker: start it before loading anything else.
  const layout = args[0] === 'generate' ? await prestartLayout(args) : undefined;
  const [{ Command, CommanderError: CommanderErrorClass }, { registerCommands }] = await Promise.all([import('commander'), import('./commands.js')]);
  const interrupts = installInterrupts();
  const program = new Command('idempotency-builder')
    .description('Make critical actions safe to retry: inspect a codebase, design idempotency, generate the document and code.')
    .version(packageVersion(), '-V, --version', 'print the version')
    .option('--verbose', 'print stack traces for unexpected errors')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ writeErr: (text) => process.stderr.write(text) })
    .addHelpText('after', EXIT_CODES_HELP);
  registerCommands(program, { interrupts });
  try {
    await program.parseAsync([...argv]);
    process.exitCode ??= EXIT.ok;
  } catch (error) {
    process.exitCode = handleError(error, argv.includes('--verbose'), interrupts, CommanderErrorClass);
  } finally {
    interrupts.dispose();
    // Unclaimed when generate stopped early (an error, a usage message): it must not go on loading for nothing.
    layout?.claimPrestartedWorker()?.close();
  }
}

async function prestartLayout(args: readonly string[]) {
  // The small test first: `generate --help` and a Markdown or cached run must not load the diagram client.
  const { layoutCertain } = await import('./prestartLayout.js');
  if (!layoutCertain(args)) return undefined;
  const client = await import('../diagrams/layoutWorkerClient.js');
  client.prestartLayoutWorker();
  return client;
}

function handleError(error: unknown, verbose: boolean, interrupts: Interrupts, CommanderErrorClass: typeof CommanderError): number {
  const log = createLogger();
  if (error instanceof CommanderErrorClass) {
    // Asked-for help and the version are "errors" to commander but success to the user; help shown because no
    // command was given, an unknown option or a value outside the allowed choices is a usage error.
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return EXIT.ok;
    return EXIT.usage;
  }
  if (isKnownError(error)) {
    if (error instanceof FindingsError) {
      log.error(error.message);
      for (const finding of error.findings) process.stderr.write(`  - ${finding}\n`);
    } else if (error instanceof UserError) {
      log.error(error.message);
      if (error.fix) process.stderr.write(`  ${error.fix}\n`);
    } else if (error instanceof CancelledError) {
      process.stderr.write(`${error.message}\n`);
      if (verbose && error.stack) process.stderr.write(`${error.stack}\n`);
      return exitCodeFor(interrupts.received());
    }
    if (verbose && error.stack) process.stderr.write(`${error.stack}\n`);
    return error.exitCode;
  }
  log.error(`This is a bug in idempotency-builder: ${(error as Error)?.message ?? String(error)}`);
  process.stderr.write(`${(error as Error)?.stack ?? ''}\nPlease report it with the command you ran and the stack above.\n`);
  return EXIT.internal;
}
