/**
 * Programmatic API: the same operations as the CLI, without process exits or terminal output.
 * Errors are thrown as UserError (bad input, with a fix) or FindingsError (drift, verification failures).
 */
export { generate, type GenerateOptions, type GenerateResult } from './generate.js';
export { inspectProject as inspect } from './inspect/index.js';
export type { Inspection, Finding, StackFacts, StoreConnection } from './inspect/types.js';
export { buildDesign, type BuildOptions, type InspectionInput } from './model/index.js';
export type { DesignModel, ActionDesign } from './model/types.js';
export { loadConfig, parseConfig, validateConfig } from './config/load.js';
export type { Config, ConfigInput } from './config/schema.js';
export { UserError, FindingsError, CancelledError } from './errors.js';
export { verifyPath as verify } from './verify/index.js';
