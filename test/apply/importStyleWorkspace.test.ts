import { describe, expect, it } from 'vitest';
import { importStyleFor } from '../../src/apply/importStyle.js';

/** gitroomhq/postiz-app: a shared Nx library whose Stripe service apply keys from the backend app's scaffold. */
describe('import spelling for a file in another part of a workspace', () => {
  const imports = {
    aliases: [
      { prefix: '@gitroom/backend/', dir: 'apps/backend/src' },
      { prefix: '@gitroom/nestjs-libraries/', dir: 'libraries/nestjs-libraries/src' },
    ],
    defaultExtension: '' as const,
  };
  const scaffold = 'apps/backend/src/idempotency';

  it("uses the workspace's alias for the scaffold when the file imports through aliases, not a path out of its package", () => {
    const text = "import Stripe from 'stripe';\nimport { makeId } from '@gitroom/nestjs-libraries/services/make.is';\n";
    const style = importStyleFor('libraries/nestjs-libraries/src/services/stripe.service.ts', text, scaffold, imports);
    expect(style.specifier('providers')).toBe('@gitroom/backend/idempotency/providers');
  });

  it('keeps relative paths inside the scaffold\'s own package, and for a file that imports nothing through an alias', () => {
    const own = importStyleFor('apps/backend/src/api/routes/billing.controller.ts', "import { makeId } from '@gitroom/nestjs-libraries/services/make.is';\n", scaffold, imports);
    expect(own.specifier('index')).toBe('../../idempotency/index');
    const plain = importStyleFor('libraries/nestjs-libraries/src/services/stripe.service.ts', "import Stripe from 'stripe';\nimport { x } from './x';\n", scaffold, imports);
    expect(plain.specifier('index')).toBe('../../../../apps/backend/src/idempotency/index');
  });

  it('tells packages apart by their package.json, not by the first two folders of the path', () => {
    const nested = {
      aliases: [
        { prefix: '@shop/billing/', dir: 'packages/services/billing/src' },
        { prefix: '@shop/orders/', dir: 'packages/services/orders/src' },
      ],
      defaultExtension: '' as const,
      packageOf: (file: string) => /^packages\/services\/[^/]+/.exec(file)?.[0] ?? '',
    };
    const text = "import { money } from '@shop/billing/money';\n";
    const other = importStyleFor('packages/services/orders/src/checkout.ts', text, 'packages/services/billing/src/idempotency', nested);
    expect(other.specifier('providers')).toBe('@shop/billing/idempotency/providers');
    // The same package: a relative path, although the file imports through an alias that does not cover the scaffold.
    const own = importStyleFor('packages/services/billing/src/routes/pay.ts', "import { order } from '@shop/orders/order';\n", 'packages/services/billing/src/idempotency', nested);
    expect(own.specifier('providers')).toBe('../idempotency/providers');
  });
});
