import { releaseHeldLocksSync } from '../emit/projectLock.js';
import { removePendingTempFilesSync } from '../emit/writeAtomic.js';
import { EXIT } from './exitCodes.js';

/**
 * Ctrl-C and SIGTERM. A command that writes registers itself with `cancellable()`: the first signal aborts its
 * AbortSignal, and it stops at the next safe point (temp files discarded, lock released, nothing half-written).
 * A second signal, or a signal while nothing cancellable runs, exits at once after deleting pending temp files.
 */
export interface Interrupts {
  signal: AbortSignal;
  /** The signal received, if any. */
  received(): NodeJS.Signals | undefined;
  /** Run `work` while signals abort it instead of exiting the process. */
  cancellable<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T>;
  dispose(): void;
}

export const exitCodeFor = (signal: NodeJS.Signals | undefined): number => (signal === 'SIGTERM' ? EXIT.terminated : EXIT.cancelled);

export function installInterrupts(): Interrupts {
  const controller = new AbortController();
  let received: NodeJS.Signals | undefined;
  let active = 0;
  const hardExit = (signal: NodeJS.Signals) => {
    removePendingTempFilesSync();
    releaseHeldLocksSync();
    process.stderr.write(`\nCancelled (${signal}).\n`);
    process.exit(exitCodeFor(signal));
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (received !== undefined || active === 0) return hardExit(received ?? signal);
    received = signal;
    process.stderr.write(`\nCancelling (${signal}): stopping at the next safe point; press Ctrl-C again to quit at once.\n`);
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: controller.signal,
    received: () => received,
    async cancellable(work) {
      active++;
      try {
        return await work(controller.signal);
      } finally {
        active--;
      }
    },
    dispose() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
