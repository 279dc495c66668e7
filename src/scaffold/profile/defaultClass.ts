/**
 * Packages whose main class every release exports as the default (and as `module.exports` itself) but only later
 * ones by name: ioredis 5.0.x has no `Redis` export, or one that is a type only (5.3 added the value). Code that
 * must run on all of them reaches the class through the default: `{ default as Redis }` in TypeScript outside Node's
 * ES module loader, `const { default: Redis } = require('ioredis')` in CommonJS JavaScript (the typings say so too, so
 * checkJs sees the class; `require('ioredis')` itself is typed as the module).
 */
export const DEFAULT_CLASS: Readonly<Record<string, string>> = { ioredis: 'Redis' };
