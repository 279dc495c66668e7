import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { validateConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CONFIG_DIR = `${ROOT}fixtures/configs/`;
export const BIN = `${ROOT}bin/idempotency-builder.js`;
/** Every test renders with this clock so outputs are comparable. */
export const NOW = new Date('2026-12-02T10:00:00Z');

export function fixtureNames(): string[] {
  return readdirSync(CONFIG_DIR)
    .filter((name) => name.endsWith('.json'))
    .map((name) => name.slice(0, -5))
    .sort();
}

export function rawFixture(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(`${CONFIG_DIR}${name}.json`, 'utf8')) as Record<string, unknown>;
}

export function loadFixture(name: string): Config {
  return validateConfig(rawFixture(name), `${name}.json`);
}
