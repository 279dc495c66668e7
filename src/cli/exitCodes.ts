/** The exit codes scripts rely on (CONTRACT §1); main.ts is the only place that sets them. */
export const EXIT = {
  ok: 0,
  findings: 1,
  usage: 2,
  internal: 70,
  cancelled: 130,
  terminated: 143,
} as const;

/** Printed under every command's --help, and mirrored in the README. */
export const EXIT_CODES_HELP = `
Exit codes:
  0    success
  1    findings: stale files (generate --check), verification failures, files changed since inspection (apply)
  2    usage, config or environment error (the message says how to fix it)
  70   internal error: a bug in idempotency-builder (please report it)
  130  cancelled: Ctrl-C at a prompt or SIGINT (143 for SIGTERM); nothing half-written`;
