import { Command, Option } from 'commander';
import { BROKERS, CONCURRENCY, CONFIG_FILE, DATABASES, FORMATS, FRAMEWORKS, LANGUAGES, TEST_FRAMEWORKS } from '../config/choices.js';
import type { GenerateResult } from '../generate.js';
import type { Logger } from '../logger.js';
import type { Prompter } from '../questions/prompter.js';
import type { Resolution } from '../questions/resolveAnswers.js';
import type { QuestionFlags } from '../questions/types.js';
import type { CliContext } from './commands.js';
import type { Interrupts } from './interrupt.js';

export interface InitFlags extends QuestionFlags {
  cwd?: string;
  config?: string;
  yes?: boolean;
  interactive?: boolean;
  date?: string;
}

export interface InitDeps {
  /** Tests inject a scripted prompter; otherwise the inquirer one is loaded when needed. */
  prompter?: Prompter;
  /** Overrides the TTY/CI decision (tests). */
  interactive?: boolean;
  log?: Logger;
  /** Ctrl-C/SIGTERM while generating: stop with nothing half-written (main.ts provides it). */
  interrupts?: Interrupts;
}

export interface InitResult {
  configPath: string;
  resolution: Resolution;
  generated: GenerateResult;
}

export function initCommand(context: CliContext = {}): Command {
  const list = (values: readonly string[]) => values.join('|');
  return new Command('init')
    .description('Inspect the codebase, ask only what it cannot answer, write idempotency.config.json and generate the design.')
    .option('--cwd <dir>', 'project root', '.')
    .option('--config <file>', 'config file to write, relative to the project root', CONFIG_FILE)
    .option('-y, --yes', 'accept the inferred answers and defaults without asking')
    .option('--interactive', 'ask even when CI is set or the terminal check fails')
    .addOption(new Option('--format <format>', `document format (${list(FORMATS)})`))
    .option('--out <path>', 'document path, e.g. docs/idempotency-design.html')
    .option('--actions <json|file>', 'Q1 actions to protect: JSON array (as in the config) or a path to a JSON file')
    .addOption(new Option('--language <language>', `Q2 ${list(LANGUAGES)}`))
    .addOption(new Option('--framework <framework>', `Q2 ${list(FRAMEWORKS)}`))
    .addOption(new Option('--database <database>', `Q2 ${list(DATABASES)}`))
    .addOption(new Option('--broker <broker>', `Q2 ${list(BROKERS)}`))
    .addOption(new Option('--test-framework <name>', `Q2 ${list(TEST_FRAMEWORKS)}`))
    .option('--retry-sources <list>', 'Q3 comma-separated, e.g. client-retry,double-click,queue-redelivery')
    .option('--payments <list>', 'Q4 comma-separated providers (stripe,adyen,paypal,bank-transfer) or none')
    .addOption(new Option('--concurrency <level>', `Q5 ${list(CONCURRENCY)}`))
    .option('--retention <duration>', 'Q6 key retention, e.g. 72h')
    .option('--detection-latency <duration>', 'Q7 how fast a duplicate is rejected, e.g. 50ms')
    .option('--scaffold-dir <dir>', 'folder for the runnable scaffolding, e.g. src/idempotency')
    .option('--no-scaffold', 'write the document only')
    .option('--date <yyyy-mm-dd>', 'date for the document footer (reproducible output)')
    .action(async (flags: InitFlags) => {
      await runInit(flags, { interrupts: context.interrupts });
    });
}


/** The wizard: decide interactivity once, inspect, resolve every question, write the config, generate, summarise. */
export async function runInit(flags: InitFlags, deps: InitDeps = {}): Promise<InitResult> {
  // Loaded on use: the questions pull in the config schema (zod), which `--help` must not pay for.
  const { runInitWizard } = await import('./initWizard.js');
  return runInitWizard(flags, deps);
}
