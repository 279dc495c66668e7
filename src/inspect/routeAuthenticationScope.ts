/**
 * Where the route-authentication reader looks, in words, for the assumption init writes: a module of its own so init's
 * fast path (questions/settleActions) reads it without loading the reader and, through it, the TypeScript compiler.
 */
export const WHERE_LOOKED = "the route's own middleware and hooks, use() and addHook() on its router before it, and the middleware where the router is mounted, up to the app";
