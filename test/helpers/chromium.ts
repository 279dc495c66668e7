import { existsSync } from 'node:fs';

export const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Undefined when Chromium can run here; otherwise the reason, which the test prints when it skips. */
export function chromiumMissing(): string | undefined {
  if (existsSync(CHROMIUM)) return undefined;
  const reason = `Chromium not found at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH); browser checks skipped.`;
  if (process.env['CI']) throw new Error(`${reason} CI must run them.`);
  console.warn(reason);
  return reason;
}
