/**
 * Typed errors. Commands throw these; only src/cli/main.ts turns them into an exit code,
 * so library callers (src/index.ts) see exceptions, never process.exit.
 */
export class UserError extends Error {
  readonly exitCode: number = 2;
  constructor(
    message: string,
    /** What the user should do about it, printed on its own line. */
    readonly fix?: string,
  ) {
    super(message);
    this.name = 'UserError';
  }
}

/** Findings such as drift or verification failures: the command worked, the answer is "no". */
export class FindingsError extends Error {
  readonly exitCode: number = 1;
  constructor(
    message: string,
    readonly findings: readonly string[] = [],
  ) {
    super(message);
    this.name = 'FindingsError';
  }
}

/** The user pressed Ctrl-C at a prompt. */
export class CancelledError extends Error {
  readonly exitCode: number = 130;
  constructor(message = 'Cancelled; nothing was written.') {
    super(message);
    this.name = 'CancelledError';
  }
}

export function isKnownError(error: unknown): error is UserError | FindingsError | CancelledError {
  return error instanceof UserError || error instanceof FindingsError || error instanceof CancelledError;
}
