import { describe, expect, it } from 'vitest';
import { DATABASES, FRAMEWORKS, LANGUAGES } from '../../src/config/schema.js';
import { scaffoldAvailable } from '../../src/questions/scaffoldQuestion.js';
import type { StackAnswer } from '../../src/questions/types.js';
import { findTarget } from '../../src/scaffold/registry.js';
import { modelFor } from './generateInto.js';

/**
 * The wizard decides whether to offer scaffolding without loading the targets; this keeps its answer equal to the
 * registry's for every framework, language and database, so a new target is never silently document-only.
 */
describe('init offers scaffolding exactly where a target exists', () => {
  const known = <T extends string>(values: readonly T[]) => values.filter((value) => value !== 'unknown');
  it.each(known(DATABASES).flatMap((database) => known(FRAMEWORKS).flatMap((framework) => known(LANGUAGES).map((language) => ({ framework, language, database })))))(
    '$framework in $language on $database',
    async ({ framework, language, database }) => {
      const model = await modelFor('minimal-one-action', (raw) => void Object.assign(raw.stack as Record<string, unknown>, { framework, language, database }));
      const stack = { language, framework, database } as unknown as StackAnswer;
      expect(scaffoldAvailable(stack)).toBe(findTarget(model.stack) !== undefined);
    },
  );
});
