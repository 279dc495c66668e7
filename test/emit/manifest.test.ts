import { describe, expect, it } from 'vitest';
import { parseManifest, serializeManifest, sha256Of } from '../../src/emit/manifest.js';

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
