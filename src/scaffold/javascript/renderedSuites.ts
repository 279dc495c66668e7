import type { ScaffoldView } from '../scaffoldView.js';
import { STORE_MODULES } from '../stores/index.js';

/**
 * Rendered files whose text does not depend on the design, so the build can precompile them like the templates:
 * each store's store-contract.test.ts (the vitest form; renderContractTest reads nothing of the view). The table is
 * keyed by the TypeScript text, so a suite that came to depend on the design would simply miss and be transpiled.
 * Only the build (scripts/precompile-templates.mjs) and tests import this; generate never does.
 */
export function renderedSuites(): Array<{ name: string; source: string }> {
  const view = {} as ScaffoldView;
  return STORE_MODULES.map((store) => ({ name: 'store-contract.test.ts', source: store.renderContractTest(view) }));
}
