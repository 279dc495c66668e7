import { Command, CommanderError } from 'commander';
import { CancelledError, FindingsError, UserError, isKnownError } from '../errors.js';
import { createLogger } from '../logger.js';
import { registerCommands } from './commands.js';

/** The only place that decides exit codes: 0 ok, 1 findings, 2 usage/config/environment, 130 cancelled. */
export async function main(argv: readonly string[]): Promise<void> {
  const program = new Command('idempotency-builder')
    .description('Make critical actions safe to retry: inspect a codebase, design idempotency, generate the document and code.')
    .option('--verbose', 'print stack traces for unexpected errors')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ writeErr: (text) => process.stderr.write(text) });
  registerCommands(program);
  try {
    await program.parseAsync([...argv]);
    process.exitCode ??= 0;
  } catch (error) {
    process.exitCode = handleError(error, argv.includes('--verbose'));
  }
}

function handleError(error: unknown, verbose: boolean): number {
  const log = createLogger();
  if (error instanceof CommanderError) {
    // Help and version are "errors" to commander but success to the user.
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') return 0;
    return 2;
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
    }
    if (verbose && error.stack) process.stderr.write(`${error.stack}\n`);
    return error.exitCode;
  }
  log.error(`This is a bug in idempotency-builder: ${(error as Error)?.message ?? String(error)}`);
  process.stderr.write(`${(error as Error)?.stack ?? ''}\nPlease report it with the command you ran and the stack above.\n`);
  return 2;
}
