import type { Command } from 'commander';
import { applyCommand } from './apply.js';
import { auditCommand } from './audit.js';
import { EXIT_CODES_HELP } from './exitCodes.js';
import { generateCommand } from './generate.js';
import { initCommand } from './init.js';
import { inspectCommand } from './inspect.js';
import type { Interrupts } from './interrupt.js';
import { verifyCommand } from './verify.js';

/** What main.ts hands every command: today only the Ctrl-C/SIGTERM seam. */
export interface CliContext {
  interrupts?: Interrupts;
}

/**
 * The command registry: adding a command is one module exporting `xCommand(context): Command` plus one line here.
 * Command modules keep heavy libraries (ts-morph, prettier, the diagram renderer) behind dynamic imports.
 */
const commands: Array<(context: CliContext) => Command> = [initCommand, generateCommand, inspectCommand, verifyCommand, auditCommand, applyCommand];

export function registerCommands(program: Command, context: CliContext = {}): void {
  for (const create of commands) {
    // addCommand does not pass settings down: without this a flag error in a subcommand would exit(1) directly.
    const command = create(context).copyInheritedSettings(program).addHelpText('after', EXIT_CODES_HELP);
    program.addCommand(command);
  }
}
