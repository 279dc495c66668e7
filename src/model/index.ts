export { buildDesign, type BuildOptions, type InspectionInput } from './buildDesign.js';
export type * from './types.js';
