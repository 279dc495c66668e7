const UNITS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

export const DURATION_PATTERN = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;
export const DURATION_HELP = 'a number followed by ms, s, m, h or d, e.g. "50ms", "30s", "72h", "31d"';

/** Parses "72h" into milliseconds; undefined when the text is not a duration. */
export function parseDuration(text: string): number | undefined {
  const match = DURATION_PATTERN.exec(text.trim());
  if (!match) return undefined;
  const unit = match[2] as keyof typeof UNITS;
  return Math.round(Number(match[1]) * UNITS[unit]);
}

/** The shortest exact rendering of a duration in the config syntax; days only past three days, where hours stop reading well. */
export function formatDuration(ms: number): string {
  if (ms % 86_400_000 === 0 && ms > 3 * 86_400_000) return `${ms / 86_400_000}d`;
  if (ms % 3_600_000 === 0 && ms >= 3_600_000) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0 && ms >= 60_000) return `${ms / 60_000}m`;
  if (ms % 1_000 === 0 && ms >= 1_000) return `${ms / 1_000}s`;
  return `${ms}ms`;
}

/** Words for prose: "72 hours", "31 days", "1.5 seconds". */
export function describeDuration(ms: number): string {
  const plural = (n: number, unit: string) => `${Number.isInteger(n) ? n : n.toFixed(1)} ${unit}${n === 1 ? '' : 's'}`;
  if (ms % 86_400_000 === 0 && ms > 3 * 86_400_000) return plural(ms / 86_400_000, 'day');
  if (ms >= 3_600_000 && ms % 1_800_000 === 0) return plural(ms / 3_600_000, 'hour');
  if (ms >= 60_000 && ms % 30_000 === 0) return plural(ms / 60_000, 'minute');
  if (ms >= 1_000) return plural(ms / 1_000, 'second');
  return plural(ms, 'millisecond');
}
