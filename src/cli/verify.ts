import { Command } from 'commander';
import { FindingsError } from '../errors.js';
import { createLogger } from '../logger.js';

interface VerifyFlags {
  quiet?: boolean;
}

export function verifyCommand(): Command {
  return new Command('verify')
    .description('Check a design document or split folder: links and anchors, self-containment, diagrams, sections, deliverables, constraints.')
    .argument('<path>', 'the document file (.html or .md) or its split folder')
    .option('--quiet', 'print only failures')
    .action(async (target: string, flags: VerifyFlags) => {
      await runVerify(target, flags);
    });
}

export async function runVerify(target: string, flags: VerifyFlags = {}): Promise<void> {
  const log = createLogger({ quiet: flags.quiet });
  const { formatFinding, verifyPath } = await import('../verify/index.js');
  const findings = await verifyPath(target);
  if (findings.length > 0) {
    throw new FindingsError(`${target} failed verification with ${findings.length} problem${findings.length === 1 ? '' : 's'}.`, findings.map(formatFinding));
  }
  log.success(`${log.value(target)} passed verification: links, anchors, self-containment, diagrams, the 12 sections, the 10 deliverables and the 7 constraints.`);
}
