import { stderr, stdout } from 'node:process';

export interface Logger {
  info(message: string): void;
  success(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  /** A value inside a message: a path, a number, a flag. */
  value(text: string | number): string;
  dim(text: string): string;
}

export interface LoggerOptions {
  quiet?: boolean;
  color?: boolean;
  out?: NodeJS.WritableStream;
  err?: NodeJS.WritableStream;
}

function colorWanted(stream: NodeJS.WritableStream): boolean {
  if (process.env['NO_COLOR'] !== undefined && process.env['NO_COLOR'] !== '') return false;
  if (process.env['FORCE_COLOR'] !== undefined && process.env['FORCE_COLOR'] !== '0') return true;
  return Boolean((stream as NodeJS.WriteStream).isTTY);
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const out = options.out ?? stdout;
  const err = options.err ?? stderr;
  const color = options.color ?? colorWanted(out);
  const paint = (code: number, text: string) => (color ? `\u001b[${code}m${text}\u001b[0m` : text);
  return {
    info: (message) => {
      if (!options.quiet) out.write(`${message}\n`);
    },
    success: (message) => {
      if (!options.quiet) out.write(`${paint(32, '✔')} ${message}\n`);
    },
    warn: (message) => err.write(`${paint(33, 'warning')} ${message}\n`),
    error: (message) => err.write(`${paint(31, 'error')} ${message}\n`),
    value: (text) => paint(36, String(text)),
    dim: (text) => paint(2, text),
  };
}
