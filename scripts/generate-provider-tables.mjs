#!/usr/bin/env node
/**
 * Writes src/inspect/providers/<provider>.ts: every operation a payment SDK exposes, with its HTTP verb and a risk
 * class, read from the installed SDK itself (public methods from its .d.ts, verbs from its request code). Run after
 * bumping an SDK (`node scripts/generate-provider-tables.mjs`); test/inspect/provider-tables.test.ts fails when an
 * installed SDK has operations the checked-in table lacks.
 */
import { readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ts } from 'ts-morph';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const modulesDir = (...parts) => path.join(ROOT, 'node_modules', ...parts);

const camel = (s) => s.charAt(0).toLowerCase() + s.slice(1);
const kebabToCamel = (s) => s.replace(/[-_](\w)/g, (_, c) => c.toUpperCase());

function walk(dir, accept) {
  const out = [];
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...walk(full, accept));
    else if (accept(entry.name)) out.push(full);
  }
  return out.sort();
}

/** Public methods of the classes (or interfaces) declared in a .d.ts file. */
export function declaredMethods(file) {
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const names = new Set();
  for (const statement of sf.statements) {
    if (!ts.isClassDeclaration(statement)) continue;
    for (const member of statement.members) {
      if (!ts.isMethodDeclaration(member) || !member.name || !ts.isIdentifier(member.name)) continue;
      const modifiers = ts.getModifiers?.(member) ?? [];
      if (modifiers.some((m) => m.kind === ts.SyntaxKind.PrivateKeyword || m.kind === ts.SyntaxKind.ProtectedKeyword || m.kind === ts.SyntaxKind.StaticKeyword)) continue;
      if (member.name.text.startsWith('_')) continue;
      names.add(member.name.text);
    }
  }
  return [...names];
}

/** For each method defined in a JS file, the first HTTP verb its body names. */
function verbsFromJs(file, methodStart, verbPattern) {
  if (!existsSync(file)) return new Map();
  const text = readFileSync(file, 'utf8');
  const starts = [...text.matchAll(methodStart)].map((m) => ({ name: m[1], at: m.index }));
  const verbs = new Map();
  starts.forEach((start, i) => {
    const body = text.slice(start.at, starts[i + 1]?.at ?? text.length);
    const verb = verbPattern.exec(body)?.[1];
    if (verb && !verbs.has(start.name)) verbs.set(start.name, verb.toUpperCase());
  });
  return verbs;
}

/** When the SDK bundles its request code, the method name is the only hint; these are its conventions. */
function verbFromName(method) {
  if (/^(get|list|page|iterate|all|retrieve|search|find|preview|fetch)/i.test(method)) return 'GET';
  if (/^(delete|remove|del|revoke)/i.test(method)) return 'DELETE';
  if (/^update/i.test(method)) return 'PATCH';
  return 'POST';
}

const READ_NAME = /^(bulkRetrieve|batchRetrieve|batchGet|retrieve|list|get|search|find|all|iterate|page|preview|upcoming|count|fetch|download|lookup|show|validate|calculate|verify|check|paymentMethods|cardDetails|balance|getCostEstimate|parse|generate(?!Token)|query)/i;
const MONEY_METHOD = /^(createUsageRecord|capture|refund|pay$|payInvoice|sale|credit$|charge|submitForSettlement|submitForPartialSettlement|incrementAuthorization|incrementAuthorisation|updateAuthorisedAmount|authorise|authorize|reauthori[sz]e|payout|makeInstantCardPayout|transfer|topup|donate$|donations$|payments$|paymentsDetails|finalizeInvoice|createReversal|createOneTimeCharge|complete|captureOrder|captureAuthorizedPayment|refundCapturedPayment|captureAuthorisedPayment|refundOrCancelPayment|confirm|adjustAuthorization|cloneTransaction|createRefund|createCapture)/i;
const MONEY_RESOURCE = /payment(?!Method|Link|Record)|charge(?!back)|refund|payout|transfer|topup|capture|authori[sz]ation|transaction|donation|order(?!Template)|subscription(?!Item|Schedule)|creditNote|cashBalance|terminal|storedValue|giftCard|outboundPayment|receivedCredit|inboundTransfer|financialAccount|adjustment/i;
const HARMLESS_METHOD = /session|link|token|nonce/i;
const HARMLESS = /session|link|ephemeral|token|portal|file|clientToken|nonce|webhook|configuration|domain|verification|report|login|sigma|radar|identity|tax(Code|Rate|Id)?s?\b|calculation|meterEvent|template|notificationSetting|simulation|eventDestination|setupIntent|confirmationToken|shippingRate|promotionCode|coupon|price|product|plan\b|plans|discount|addOn|feature/i;

/** Moves money, creates a billable object, creates a harmless object (a session URL), or only reads. */
export function classify(resource, method, verb) {
  const res = resource.join('.');
  // Previews (`invoices.createPreview`) compute and return; nothing is created at the provider.
  if (/Preview$/.test(method)) return 'read';
  if (verb === 'GET' || (READ_NAME.test(method) && !MONEY_METHOD.test(method) && verb !== 'DELETE' && !/^(create|update)/.test(method))) return 'read';
  if (MONEY_METHOD.test(method) && !/^(confirm|complete)$/i.test(method)) return 'moves-money';
  if (/^(create|confirm|complete|sync|async|post|submit)$/i.test(method) && MONEY_RESOURCE.test(res) && !HARMLESS.test(res)) return 'moves-money';
  // Usage reported for metered billing is charged per event: a duplicate bills twice.
  if (/^create/.test(method) && /meterEvent(s|Adjustments|Stream)?$|usageRecord/i.test(res)) return 'moves-money';
  if (HARMLESS.test(res) || HARMLESS_METHOD.test(method)) return 'harmless-object';
  return 'billable-object';
}

/** Each SDK: where its operations are, and how a resource is addressed from the client object. */
export const SDKS = {
  stripe: {
    module: 'stripe',
    extract() {
      const base = modulesDir('stripe', 'cjs', 'resources');
      return walk(base, (n) => n.endsWith('.d.ts') && n !== 'index.d.ts').flatMap((dts) => {
        const rel = path.relative(base, dts).replace(/\.d\.ts$/, '').split(path.sep);
        const resource = rel.map((p) => (p === 'OAuth' ? 'oauth' : camel(p)));
        const verbs = verbsFromJs(dts.replace(/\.d\.ts$/, '.js'), /^ {4}(\w+)\([^)]*\) \{/gm, /_makeRequest\('(\w+)'/);
        return declaredMethods(dts).map((method) => ({ resource, method, verb: verbs.get(method) ?? verbFromName(method) }));
      });
    },
  },
  adyen: {
    module: '@adyen/api-library',
    extract() {
      const base = modulesDir('@adyen', 'api-library', 'lib', 'src', 'services');
      return walk(base, (n) => n.endsWith('.d.ts') && n !== 'index.d.ts' && n !== 'resource.d.ts' && n !== 'service.d.ts').flatMap((dts) => {
        const rel = path.relative(base, dts).replace(/\.d\.ts$/, '').split(path.sep);
        const resource = rel.map((p, i) => (i === rel.length - 1 && /Api$/.test(p) ? p.charAt(0).toUpperCase() + p.slice(1) : p));
        const verbs = verbsFromJs(dts.replace(/\.d\.ts$/, '.js'), /^ {4}(?:async )?(\w+)\([^)]*\) \{/gm, /method: "(\w+)"/);
        return declaredMethods(dts).map((method) => ({ resource, method, verb: verbs.get(method) ?? 'POST' }));
      });
    },
  },
  paypal: {
    module: '@paypal/paypal-server-sdk',
    extract() {
      const base = modulesDir('@paypal', 'paypal-server-sdk', 'dist', 'cjs', 'types', 'controllers');
      return walk(base, (n) => n.endsWith('Controller.d.ts') && n !== 'baseController.d.ts').flatMap((dts) => {
        const name = path.basename(dts, '.d.ts');
        const js = modulesDir('@paypal', 'paypal-server-sdk', 'dist', 'cjs', 'controllers', `${name}.js`);
        const verbs = verbsFromJs(js, /\.prototype\.(\w+) = function/g, /createRequest\('(\w+)'/);
        return declaredMethods(dts).map((method) => ({ resource: [name], method, verb: verbs.get(method) ?? verbFromName(method) }));
      });
    },
  },
  braintree: {
    module: 'braintree',
    // Braintree ships no type definitions: its gateway classes are the API surface.
    extract() {
      const base = modulesDir('braintree', 'lib', 'braintree');
      return walk(base, (n) => n.endsWith('_gateway.js') && n !== 'braintree_gateway.js' && n !== 'gateway.js').flatMap((js) => {
        const resource = [kebabToCamel(path.basename(js, '_gateway.js'))];
        const verbs = verbsFromJs(js, /^ {2}(\w+)\([^)]*\) \{/gm, /http\.(post|put|get|delete|patch)\(/);
        return [...verbs.keys()].concat(methodsWithoutVerb(js, verbs))
          .filter((m) => m !== 'constructor' && !/^(responseHandler|pagingFunctionGenerator|createResponseHandler)$/.test(m) && !m.startsWith('_'))
          .map((method) => ({ resource, method, verb: verbs.get(method) ?? verbFromName(method) }));
      });
    },
  },
  square: {
    module: 'square',
    extract() {
      const base = modulesDir('square', 'api', 'resources');
      return walk(base, (n) => n === 'Client.d.ts').flatMap((dts) => {
        const rel = path.relative(base, path.dirname(dts)).split(path.sep).filter((p) => p !== 'client' && p !== 'resources');
        const verbs = verbsFromJs(dts.replace(/\.d\.ts$/, '.js'), /^ {4}(\w+)\([^)]*\) \{/gm, /method: "(\w+)"/);
        return declaredMethods(dts).map((method) => ({ resource: rel, method, verb: verbs.get(method) ?? verbFromName(method) }));
      });
    },
  },
  mollie: {
    module: '@mollie/api-client',
    extract() {
      const base = modulesDir('@mollie', 'api-client', 'dist', 'types', 'binders');
      return walk(base, (n) => n.endsWith('Binder.d.ts') && n !== 'Binder.d.ts').flatMap((dts) => {
        const name = path.basename(dts, 'Binder.d.ts');
        const resource = [MOLLIE_CLIENT_NAMES[name] ?? camel(name)];
        return declaredMethods(dts).map((method) => ({ resource, method, verb: verbFromName(method) }));
      });
    },
  },
  paddle: {
    module: '@paddle/paddle-node-sdk',
    extract() {
      const base = modulesDir('@paddle', 'paddle-node-sdk', 'dist', 'types', 'resources');
      return walk(base, (n) => n === 'index.d.ts').filter((f) => path.dirname(f) !== base).flatMap((dts) => {
        const resource = [kebabToCamel(path.basename(path.dirname(dts)))];
        return declaredMethods(dts).map((method) => ({ resource, method, verb: verbFromName(method) }));
      });
    },
  },
};

/** Mollie binder class → the property on the client that holds it, where they differ. */
const MOLLIE_CLIENT_NAMES = {
  PaymentCaptures: 'paymentCaptures', PaymentRefunds: 'paymentRefunds', PaymentChargebacks: 'paymentChargebacks',
  CustomerPayments: 'customerPayments', CustomerMandates: 'customerMandates', CustomerSubscriptions: 'customerSubscriptions',
  OrderLines: 'orderLines', OrderShipments: 'orderShipments', OrderRefunds: 'orderRefunds', OrderPayments: 'orderPayments',
  SubscriptionPayments: 'subscriptionPayments', ProfileMethods: 'profileMethods', PaymentRoutes: 'paymentRoutes',
};

function methodsWithoutVerb(js, verbs) {
  const text = readFileSync(js, 'utf8');
  return [...text.matchAll(/^ {2}(\w+)\([^)]*\) \{/gm)].map((m) => m[1]).filter((m) => !verbs.has(m));
}

export function installedVersion(module) {
  return JSON.parse(readFileSync(modulesDir(...module.split('/'), 'package.json'), 'utf8')).version;
}

/** Sorted, de-duplicated operations of one installed SDK. */
export function extractOperations(provider) {
  const seen = new Map();
  for (const op of SDKS[provider].extract()) {
    const key = `${op.resource.join('.')}#${op.method}`;
    if (!seen.has(key)) seen.set(key, { ...op, risk: classify(op.resource, op.method, op.verb) });
  }
  return [...seen.values()].sort((a, b) => `${a.resource.join('.')}#${a.method}`.localeCompare(`${b.resource.join('.')}#${b.method}`));
}

function render(provider) {
  const sdk = SDKS[provider];
  const ops = extractOperations(provider);
  const rows = ops.map((op) => `    [${JSON.stringify(op.resource.join('.'))}, ${JSON.stringify(op.method)}, ${JSON.stringify(op.verb)}, ${JSON.stringify(op.risk)}],`);
  return [
    `// Generated by scripts/generate-provider-tables.mjs from ${sdk.module}@${installedVersion(sdk.module)}. Do not edit by hand.`,
    `import type { ProviderTable } from './providerTable.js';`,
    '',
    `export const ${provider}Table: ProviderTable = {`,
    `  provider: ${JSON.stringify(provider)},`,
    `  sdk: ${JSON.stringify(sdk.module)},`,
    `  version: ${JSON.stringify(installedVersion(sdk.module))},`,
    '  // [resource path on the client, method, HTTP verb, risk]',
    '  operations: [',
    ...rows,
    '  ],',
    '};',
    '',
  ].join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const provider of Object.keys(SDKS)) {
    const out = path.join(ROOT, 'src', 'inspect', 'providers', `${provider}.ts`);
    writeFileSync(out, render(provider));
    console.log(`${path.relative(ROOT, out)}: ${extractOperations(provider).length} operations`);
  }
}
