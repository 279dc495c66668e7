import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { layoutCertain } from '../../src/cli/prestartLayout.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'ib-prestart-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function project(name: string, config: object | string, svgCache = false): string {
  const dir = path.join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'idempotency.config.json'), typeof config === 'string' ? config : JSON.stringify(config));
  if (svgCache) mkdirSync(path.join(dir, '.idempotency-builder', 'cache', 'svg'), { recursive: true });
  return dir;
}

describe('layoutCertain (the CLI starts the layout worker before loading generate)', () => {
  it('says yes for a generate of an HTML document in a project never laid out', () => {
    const html = project('html', { format: 'html' });
    expect(layoutCertain(['generate', '--cwd', html, '--quiet'])).toBe(true);
    expect(layoutCertain(['generate', `--cwd=${html}`, '--check'])).toBe(true);
    // HTML is the default format.
    expect(layoutCertain(['generate', '--cwd', project('default', {})])).toBe(true);
    expect(layoutCertain(['generate', '--cwd', project('md-config', { format: 'md' }), '--format', 'html'])).toBe(true);
  });

  it('says no when generate would not lay anything out, or when it cannot tell', () => {
    const html = project('html2', { format: 'html' });
    expect(layoutCertain(['generate', '--cwd', project('md', { format: 'md' })])).toBe(false);
    expect(layoutCertain(['generate', '--cwd', html, '--format=md'])).toBe(false);
    expect(layoutCertain(['generate', '--cwd', project('cached', { format: 'html' }, true)])).toBe(false);
    expect(layoutCertain(['generate', '--cwd', html, '--diagrams', 'mermaid-cli'])).toBe(false);
    expect(layoutCertain(['generate', '--cwd', html, '--help'])).toBe(false);
    expect(layoutCertain(['inspect', html])).toBe(false);
    expect(layoutCertain(['generate', '--cwd', project('broken', '{ not json')])).toBe(false);
    expect(layoutCertain(['generate', '--cwd', path.join(root, 'missing')])).toBe(false);
  });
});
