import path from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // A safety net for a hung test, not a speed limit: on a saturated 2-core runner a suite that compiles a scaffold
    // and runs its generated tests against a real server took past 60 s with nothing wrong (nestjsScaffold, CI).
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // Suites that share PostgreSQL/MariaDB/Redis use their own schemas and key prefixes, so files may run in parallel.
    pool: 'forks',
    // Two workers on two cores: most suites wait on PostgreSQL, brokers or child processes, not the CPU.
    maxWorkers: 2,
    // The CLI keeps a per-user V8 code cache (src/diagrams/renderers/v8CodeCache.ts); tests, and the CLIs they
    // spawn, keep theirs under .tmp rather than in the developer's ~/.cache.
    env: { XDG_CACHE_HOME: path.resolve('.tmp/xdg-cache') },
  },
});
