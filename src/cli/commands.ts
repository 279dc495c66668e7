import type { Command } from 'commander';
import { auditCommand } from './audit.js';
import { generateCommand } from './generate.js';
import { initCommand } from './init.js';
import { inspectCommand } from './inspect.js';
import { verifyCommand } from './verify.js';

/**
 * The command registry: adding a command is one module exporting `xCommand(): Command` plus one line here.
 * Command modules keep heavy libraries (ts-morph, prettier, the diagram renderer) behind dynamic imports.
 */
const commands: Array<() => Command> = [initCommand, generateCommand, inspectCommand, verifyCommand, auditCommand];

export function registerCommands(program: Command): void {
  for (const create of commands) program.addCommand(create());
}
