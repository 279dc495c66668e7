import { describe, expect, it } from 'vitest';
import { wireSource, type WireSourceOptions } from '../../src/apply/planApply.js';
import type { WiringTarget } from '../../src/apply/types.js';

const file = 'packages/api/src/router/post.ts';
const options: WireSourceOptions = {
  framework: 'plain',
  scaffoldDir: 'packages/api/src/idempotency',
  imports: { aliases: [], defaultExtension: '' },
  scaffoldModules: new Set(['index', 'instance']),
};
const target = (extra: Partial<WiringTarget> = {}): WiringTarget => ({ action: 'createPost', codeName: 'createPost', trigger: 'http', transport: 'trpc', file, line: 7, scope: 'global', keySource: 'derived', ...extra });

// The shape of t3-oss/create-t3-turbo@e69b585's postRouter: a procedure whose resolver is not async.
const router = `import { protectedProcedure } from '../trpc';

export const postRouter = {
  create: protectedProcedure
    .input(CreatePostSchema)
    .mutation(({ ctx, input }) => {
      return { title: input.title };
    }),
};
`;

describe('tRPC procedures', () => {
  it('wraps a resolver that is not async: tRPC awaits the Promise it now returns', () => {
    const out = wireSource(file, router, [target({ line: 6 })], options);
    expect(out.stale).toEqual([]);
    expect(out.manual).toEqual([]);
    expect(out.text).toContain('return idempotency.createPost({ fingerprintInput: input }, async () => {');
    const again = wireSource(file, out.text, [target({ line: 6 })], { ...options, anyLine: true });
    expect(again.text).toBe(out.text);
  });

  it("a key from the caller stays a step that says where a procedure can get it", () => {
    const out = wireSource(file, router, [target({ line: 6, keySource: 'client' })], options);
    expect(out.text).toBe(router);
    expect(out.manual.map((m) => m.reason)).toEqual([expect.stringContaining('a tRPC procedure sees no request: put the request\'s Idempotency-Key header into the context your createContext returns')]);
  });
});
