import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { UserError } from '../../src/errors.js';
import { fixtureNames, rawFixture } from '../helpers/fixtures.js';

const base = () => rawFixture('minimal-one-action');

function errorFor(raw: unknown): string {
  try {
    parseConfig(typeof raw === 'string' ? raw : JSON.stringify(raw), 'idempotency.config.json');
  } catch (error) {
    expect(error).toBeInstanceOf(UserError);
    return (error as UserError).message;
  }
  throw new Error('expected the config to be rejected');
}

describe('config validation', () => {
  it.each(fixtureNames())('accepts the %s fixture', (name) => {
    expect(() => parseConfig(JSON.stringify(rawFixture(name)))).not.toThrow();
  });

  it('reports a JSON syntax error with the fix', () => {
    expect(errorFor('{ "actions": [ }')).toMatch(/idempotency\.config\.json is not valid JSON/);
  });

  it('names an unknown key by its path', () => {
    expect(errorFor({ ...base(), retentoin: '24h' })).toContain('retentoin: unknown key');
  });

  it('names the path, the value found and the allowed values for an unknown framework', () => {
    const raw = base();
    (raw['stack'] as Record<string, unknown>)['framework'] = 'rails';
    const message = errorFor(raw);
    expect(message).toContain('stack.framework: found "rails"');
    expect(message).toContain('"express"');
    expect(message).toContain('"nestjs"');
  });

  it('rejects a wrong type with the expected type', () => {
    const raw = base();
    (raw['actions'] as Array<Record<string, unknown>>)[0]!['expectedDurationMs'] = '800';
    expect(errorFor(raw)).toContain('actions[0].expectedDurationMs: found "800"; expected number');
  });

  it('rejects empty actions', () => {
    expect(errorFor({ ...base(), actions: [] })).toContain('actions: found []; expected at least one action to protect');
  });

  it('rejects a duration written in words', () => {
    expect(errorFor({ ...base(), retention: '3 days' })).toMatch(/retention: found "3 days"; expected a number followed by ms, s, m, h or d/);
  });

  it('reports a missing required key as missing', () => {
    const { concurrency: _drop, ...raw } = base();
    expect(errorFor(raw)).toContain('concurrency: missing');
  });

  it('lists every problem at once', () => {
    const message = errorFor({ ...base(), retention: 'soon', detectionLatency: 5 });
    expect(message).toContain('retention:');
    expect(message).toContain('detectionLatency:');
  });

  it('rejects a derived key without its source fields', () => {
    const raw = base();
    (raw['actions'] as Array<Record<string, unknown>>)[0]!['key'] = { source: 'derived' };
    expect(errorFor(raw)).toContain('actions[0].key.from');
  });

  it('accepts a transport for an HTTP action, and names the path and allowed values for an unknown one', () => {
    const raw = base();
    const action = (raw['actions'] as Array<Record<string, unknown>>)[0]!;
    action['trigger'] = 'http';
    action['transport'] = 'graphql';
    expect(parseConfig(JSON.stringify(raw)).actions[0]!.transport).toBe('graphql');
    action['transport'] = 'grpc';
    const message = errorFor(raw);
    expect(message).toContain('actions[0].transport: found "grpc"');
    for (const allowed of ['"graphql"', '"trpc"', '"server-action"']) expect(message).toContain(allowed);
  });

  it('rejects a transport on an action that is not HTTP, naming the path', () => {
    const raw = base();
    const action = (raw['actions'] as Array<Record<string, unknown>>)[0]!;
    action['trigger'] = 'consumer';
    action['transport'] = 'trpc';
    expect(errorFor(raw)).toContain('actions[0].transport: found "trpc"; expected no transport for a consumer action');
  });

  it('fills documented defaults', () => {
    const config = parseConfig(JSON.stringify(base()));
    expect(config.format).toBe('html');
    expect(config.split).toBe('auto');
    expect(config.conflictStatus).toBe(422);
    expect(config.scaffold).toBe(false);
  });
});
