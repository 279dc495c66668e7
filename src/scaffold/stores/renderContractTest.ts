import type { ScaffoldView } from '../scaffoldView.js';

export interface ContractTestParts {
  /** Import lines for the driver and the store (after store-contract's). */
  readonly imports: string;
  /** Module-level lines: read the environment and decide RUN (a boolean), warning when the suite cannot run. */
  readonly gate: string;
  /** The body of the async factory that returns a StoreContractSubject (four-space indented). */
  readonly open: string;
}

/** store-contract.test.ts: the shipped contract suite pointed at this scaffold's store, on a throwaway store. */
export function renderContractTest(_view: ScaffoldView, parts: ContractTestParts): string {
  return `// The store contract: the guarantees core.ts relies on, checked against this store on its real server. To check a
// store of your own, copy this file and return your store (and one pointed at a dead server) from the factory.
import { randomBytes } from 'node:crypto';
import { describe, it } from 'vitest';
import { runStoreContract } from './store-contract.js';
${parts.imports}

${parts.gate}

// The contract checks what the store guarantees, not how fast this machine answers: on a busy CI runner a statement
// can stall past the design's budget and fail a case for the wrong reason. The store under test gets at least 5 s
// per call (lock waits keep the design's bound); the outage case checks that calls past their bound fail closed.
const BOUNDS = {
  ...POLICY,
  acquireTimeoutMs: Math.max(POLICY.acquireTimeoutMs, 5_000),
  statementTimeoutMs: Math.max(POLICY.statementTimeoutMs, 5_000),
  storeTimeoutMs: Math.max(POLICY.storeTimeoutMs, 10_000),
};

if (RUN) {
  runStoreContract(STORE_NAME, async () => {
${parts.open}
  });
} else {
  describe.skip(STORE_NAME, () => it('needs a server', () => undefined));
}

function throwaway(): string {
  return \`idem_contract_\${randomBytes(6).toString('hex')}\`;
}
`;
}
