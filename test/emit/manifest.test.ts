import { describe, expect, it } from 'vitest';
import { parseManifest, serializeManifest, sha256Of } from '../../src/emit/manifest.js';
import { nextManifest } from '../../src/emit/nextManifest.js';
import type { PlannedWrite } from '../../src/emit/planWrites.js';

describe('manifest', () => {
  it('serializes sorted and byte-stable, and reads back what it wrote', () => {
    const entries = [
      { path: 'src/idempotency/core.ts', class: 'scaffold' as const, sha256: sha256Of('core') },
      { path: 'docs/idempotency-design.html', class: 'managed' as const, sha256: sha256Of('doc') },
    ];
    const text = serializeManifest({ date: '2026-12-02', files: entries });
    expect(serializeManifest({ date: '2026-12-02', files: [...entries].reverse() })).toBe(text);
    expect(text.endsWith('}\n')).toBe(true);
    expect(parseManifest(text)).toEqual({ date: '2026-12-02', files: [entries[1], entries[0]] });
  });

  it('keeps the inputs key only when the whole plan was applied, and ignores a malformed one', () => {
    const inputs = sha256Of('inputs');
    const written: PlannedWrite = { path: 'docs/idempotency-design.html', class: 'managed', contents: 'doc', action: 'create' };
    const manifest = nextManifest([written], { date: '2026-12-02', inputs });
    expect(manifest.inputs).toBe(inputs);
    expect(parseManifest(serializeManifest(manifest))).toEqual(manifest);
    // A rename that failed half-way: the files no longer all match what the key vouches for.
    expect(nextManifest([written], { inputs, applied: new Set() }).inputs).toBeUndefined();
    expect(parseManifest('{"inputs":"not a hash","files":[]}')).toEqual({ files: [] });
  });

  it('hashes text independently of line endings and a byte-order mark', () => {
    expect(sha256Of('a\r\nb\r\n')).toBe(sha256Of('a\nb\n'));
    expect(sha256Of('\uFEFFa\n')).toBe(sha256Of('a\n'));
    expect(sha256Of('a\n')).not.toBe(sha256Of('a'));
  });

  it('explains what is wrong with a damaged manifest', () => {
    expect(() => parseManifest('not json')).toThrow(/damaged \(not valid JSON\)/);
    expect(() => parseManifest('{"files":[{"path":"a","class":"other","sha256":"x"}]}')).toThrow(/files\[0\]/);
  });
});
