import { Command } from 'commander';
export function generateCommand(): Command {
  return new Command('generate');
}
