/**
 * Packages whose main class every release exports as the default (and as `module.exports` itself) but only later
 * ones by name: ioredis 5.0.x has no `Redis` export, or one that is a type only (5.3 added the value). Code that
 * must run on all of them reaches the class through the default: the template reads `IORedis.default` from a default
 * import (Node ESM, where that import is the module; the class carries `default` too), other TypeScript profiles from
 * `import * as IORedis` (applyProfile), CommonJS JavaScript from `require('ioredis')`, typed as the module too; a
 * named `{ Redis }` becomes `{ default as Redis }` / `const { default: Redis } = require('ioredis')`.
 */
export const DEFAULT_CLASS: Readonly<Record<string, string>> = { ioredis: 'Redis' };
