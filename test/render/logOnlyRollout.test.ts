import { describe, expect, it } from 'vitest';
import { rawFixture } from '../helpers/fixtures.js';
import { renderConfig } from '../helpers/generateInto.js';

/**
 * An action switched to "rollout": "log-only": the document says what the generated runtime then does (it runs every
 * request and counts what it would have refused), and settings.ts carries the switch; an enforcing action gets neither.
 */
describe('document and scaffold of an action in log-only rollout', () => {
  it('marks the log-only action, qualifies the store-error metric, and emits the switch into settings.ts', async () => {
    const raw = rawFixture('express-stripe-payments') as { actions: Array<Record<string, unknown>> };
    raw.actions[0]!.rollout = 'log-only';
    const result = await renderConfig(raw, { format: 'md' });
    expect(result.text).toContain('| **Rollout** | Log-only ("rollout": "log-only" in the config): nothing is refused or replayed yet.');
    expect(result.text).toContain('each became a 503. An action in log-only rollout runs anyway instead.');
    expect(result.text).toContain('**Add the middleware in log-only mode**');
    const settings = result.plan.find((item) => item.path.endsWith('/settings.ts'))!.contents;
    expect(settings.match(/rollout: 'log-only'/g)).toHaveLength(1);
    const readme = result.plan.find((item) => item.path.endsWith('/README.md'))!.contents;
    expect(readme).toContain(`(now: \`${String(raw.actions[0]!.name)}\`)`);
    // The per-action suites assert enforcement: gated on the same switch, so a log-only action's suite is skipped.
    const suites = result.plan.filter((item) => /\.test\.ts$/.test(item.path) && item.contents.includes('const ENFORCED'));
    expect(suites.length).toBeGreaterThan(0);
    for (const suite of suites) expect(suite.contents).toMatch(/suiteIf\([^)]*&& ENFORCED\)/);

    const enforced = await renderConfig(rawFixture('express-stripe-payments'), { format: 'md' });
    expect(enforced.text).not.toContain('| **Rollout** |');
    expect(enforced.text).not.toContain('An action in log-only rollout');
    expect(enforced.plan.find((item) => item.path.endsWith('/settings.ts'))!.contents).not.toContain('rollout');
  });

  it('an explicit "enforce" is the default: nothing in settings.ts', async () => {
    const raw = rawFixture('express-stripe-payments') as { actions: Array<Record<string, unknown>> };
    raw.actions[0]!.rollout = 'enforce';
    const result = await renderConfig(raw, { format: 'md' });
    expect(result.plan.find((item) => item.path.endsWith('/settings.ts'))!.contents).not.toContain('rollout');
  });
});
