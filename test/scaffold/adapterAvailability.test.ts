import { describe, expect, it } from 'vitest';
import { FRAMEWORKS, LANGUAGES } from '../../src/config/schema.js';
import { scaffoldAvailable } from '../../src/questions/scaffoldQuestion.js';
import type { StackAnswer } from '../../src/questions/types.js';
import { findTarget } from '../../src/scaffold/registry.js';
import { modelFor } from './generateInto.js';

/**
 * The wizard decides whether to offer scaffolding without loading the targets; this keeps its answer equal to the
 * registry's for every framework and language on PostgreSQL, so a new target is never silently document-only.
 */
describe('init offers scaffolding exactly where a target exists', () => {
  it.each(FRAMEWORKS.filter((framework) => framework !== 'unknown').flatMap((framework) => LANGUAGES.filter((language) => language !== 'unknown').map((language) => ({ framework, language }))))(
    '$framework in $language on PostgreSQL',
    async ({ framework, language }) => {
      const model = await modelFor('minimal-one-action', (raw) => void Object.assign(raw.stack as Record<string, unknown>, { framework, language, database: 'postgres' }));
      const stack = { language, framework, database: 'postgres' } as unknown as StackAnswer;
      expect(scaffoldAvailable(stack)).toBe(findTarget(model.stack) !== undefined);
    },
  );
});
