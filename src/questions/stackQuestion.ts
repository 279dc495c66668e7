import { BROKERS, DATABASES, FRAMEWORKS, LANGUAGES, TEST_FRAMEWORKS, stackSchema } from '../config/schema.js';
import { databaseWithoutClient, EMBEDDED_DATABASE } from './embeddedStore.js';
import { noHttpRoute, type ReachedBy } from '../model/httplessActions.js';
import { parseChoice } from './parseFlagValue.js';
import type { PromptChoice } from './prompter.js';
import { detectedFrameworks, focusSources, foundNoDatabase, stackFromInspection } from './stackFromInspection.js';
import type { AskContext, QuestionContext, QuestionFlags, Question, StackAnswer } from './types.js';

type Part = keyof StackAnswer;
const CRITICAL = ['language', 'framework', 'database'] as const satisfies readonly Part[];

const PARTS: Record<Part, { flag: string; flagKey: keyof QuestionFlags; allowed: readonly string[]; message: string; labels: Record<string, string>; again: string }> = {
  language: {
    flag: '--language', flagKey: 'language', allowed: LANGUAGES, message: 'Language of the service?',
    labels: { typescript: 'TypeScript', javascript: 'JavaScript', unknown: 'Not sure' },
    again: 'A tsconfig.json or .ts files mean TypeScript; only .js/.mjs files mean JavaScript.',
  },
  framework: {
    flag: '--framework', flagKey: 'framework', allowed: FRAMEWORKS, message: 'HTTP framework?',
    labels: { express: 'Express', fastify: 'Fastify', nestjs: 'NestJS', koa: 'Koa', hono: 'Hono', nextjs: 'Next.js route handlers', none: 'None (workers or jobs only)', unknown: 'Not sure' },
    again: 'Look for the import that creates the server: `express()` → Express, `Fastify()` → Fastify, `@Controller` → NestJS, `app/api/**/route.ts` → Next.js.',
  },
  database: {
    flag: '--database', flagKey: 'database', allowed: DATABASES, message: 'Database where the idempotency records will live?',
    labels: { postgres: 'PostgreSQL', mysql: 'MySQL', mariadb: 'MariaDB', sqlite: 'SQLite', libsql: 'libSQL (Turso)', mongodb: 'MongoDB', dynamodb: 'DynamoDB', redis: 'Redis', unknown: 'Not sure' },
    again: 'Usually the database your orders or payments are stored in: `pg`/`postgres`/Prisma with "postgresql" → PostgreSQL, `mysql2` → MySQL, `mongoose` → MongoDB.',
  },
  broker: {
    flag: '--broker', flagKey: 'broker', allowed: BROKERS, message: 'Message broker?',
    labels: { none: 'None', bullmq: 'BullMQ', bull: 'Bull (legacy)', kafka: 'Kafka', rabbitmq: 'RabbitMQ', sqs: 'Amazon SQS', nats: 'NATS', unknown: 'Not sure' },
    again: '',
  },
  testFramework: {
    flag: '--test-framework', flagKey: 'testFramework', allowed: TEST_FRAMEWORKS, message: 'Test framework for the generated tests?',
    labels: { vitest: 'Vitest', jest: 'Jest', 'node-test': 'node:test', mocha: 'Mocha', unknown: 'Not sure (Vitest)' },
    again: '',
  },
};
const ORDER: Part[] = ['language', 'framework', 'database', 'broker', 'testFramework'];

/** Parts given as flags; each is validated on its own so the error names the one flag that is wrong. */
function pinnedParts(flags: QuestionFlags): Partial<StackAnswer> {
  const pins: Record<string, string> = {};
  for (const part of ORDER) {
    const raw = flags[PARTS[part].flagKey];
    if (typeof raw === 'string') pins[part] = parseChoice(PARTS[part].flag, raw, PARTS[part].allowed);
  }
  return pins as Partial<StackAnswer>;
}

function inferred(ctx: QuestionContext): StackAnswer {
  const draft = stackFromInspection(ctx.inspection, focusSources(ctx.answers.actions ?? []));
  const merged = { ...draft, ...pinnedParts(ctx.flags) };
  return {
    language: merged.language ?? 'unknown',
    framework: merged.framework ?? 'unknown',
    database: merged.database ?? databaseWithoutClient(ctx, merged),
    broker: merged.broker ?? 'none',
    testFramework: merged.testFramework ?? 'unknown',
  };
}

const isComplete = (stack: StackAnswer) => CRITICAL.every((part) => stack[part] !== 'unknown');
export const describeStack = (stack: StackAnswer) =>
  ORDER.map((part) => `${part === 'testFramework' ? 'tests' : part} ${PARTS[part].labels[stack[part]] ?? stack[part]}`).join(' · ');

export const stackQuestion: Question<'stack'> = {
  key: 'stack',
  number: 2,
  title: 'Tech stack',
  help: 'Language, framework, database and broker decide the code in the document and the scaffolding.',
  examples: ['--language typescript --framework express --database postgres', '--language javascript --framework fastify --database mysql --broker bullmq'],
  flags: ['--language', '--framework', '--database'],
  flagExample: '--language typescript --framework express --database postgres (also --broker, --test-framework)',
  inspectable: true,
  needsConsent: true,
  fromFlags: (flags, ctx) => {
    const pins = pinnedParts(flags);
    return CRITICAL.every((part) => pins[part] !== undefined) ? inferred(ctx) : undefined;
  },
  fromConfig: (config) => {
    const result = stackSchema.safeParse(config['stack']);
    return result.success ? result.data : undefined;
  },
  pin: (ctx, value) => ({ ...value, ...pinnedParts(ctx.flags) }),
  infer: inferred,
  isComplete,
  whenNeeded: (inspection, given) => !given.stack && !isComplete(inferred({ inspection, answers: given, cwd: '.', flags: {} })),
  fallback: (ctx) => {
    const value = inferred(ctx);
    return { value, assumption: unknownAssumption(value, ctx.answers.actions ?? []) };
  },
  ask: askStack,
};

function unknownAssumption(stack: StackAnswer, actions: readonly ReachedBy[]): string | undefined {
  const unknown = CRITICAL.filter((part) => stack[part] === 'unknown');
  if (unknown.length === 0) return undefined;
  // No action is a route a web framework would serve: the plain wrapper is the whole integration, nothing to adapt
  // (the design says so itself, src/model/stack.ts).
  if (unknown.length === 1 && unknown[0] === 'framework' && noHttpRoute(actions)) return undefined;
  return `The ${unknown.join(', ')} could not be determined from the code or answers: the design is technology-agnostic on the PostgreSQL reference schema, and its code needs adapting.`;
}

async function askStack(ctx: AskContext, prefill: StackAnswer | undefined, mode: 'ask' | 'confirm'): Promise<StackAnswer> {
  const pins = pinnedParts(ctx.flags);
  let stack: StackAnswer = { ...inferred(ctx), ...prefill, ...pins };
  let toAsk = ORDER.filter((part) => pins[part] === undefined);
  if (mode === 'confirm' && isComplete(stack)) {
    const right = await ctx.prompter.confirm({
      id: 'stack:confirm',
      message: `Stack: ${describeStack(stack)}. Correct?`,
      help: `Q2 · ${ctx.inspection.findings.length > 0 || ctx.inspection.stack.frameworks.length > 0 ? 'Read from package.json and the code.' : 'From your config.'}${stack.database === EMBEDDED_DATABASE && foundNoDatabase(ctx.inspection) ? ' No database was found: SQLite is the embedded store for one instance.' : ''}`,
      default: true,
    });
    if (right) return stack;
  } else {
    // Only the holes: what the code settled is not asked again.
    toAsk = toAsk.filter((part) => (CRITICAL.includes(part as never) && stack[part] === 'unknown') || (part === 'framework' && detectedFrameworks(ctx.inspection).length > 1));
  }
  for (const part of toAsk) stack = { ...stack, [part]: await askPart(ctx, part, stack, false) };
  // Partial-context protocol: the critical parts get exactly one more try, with examples of where to look.
  for (const part of CRITICAL) {
    if (stack[part] === 'unknown' && pins[part] === undefined) stack = { ...stack, [part]: await askPart(ctx, part, stack, true) };
  }
  const assumption = unknownAssumption(stack, ctx.answers.actions ?? []);
  if (assumption) ctx.assumptions.push(assumption);
  return stack;
}

async function askPart(ctx: AskContext, part: Part, stack: StackAnswer, again: boolean): Promise<string> {
  const spec = PARTS[part];
  const detected = part === 'framework' ? detectedFrameworks(ctx.inspection) : [];
  const values = detected.length > 1 ? [...detected, ...spec.allowed.filter((v) => !detected.includes(v as never))] : spec.allowed;
  const choices: Array<PromptChoice<string>> = values.map((value) => ({
    value,
    name: spec.labels[value] ?? value,
    group: detected.length > 1 ? (detected.includes(value as never) ? 'Found in this project' : 'Others') : undefined,
  }));
  return ctx.prompter.select({
    id: again ? `stack:${part}:again` : `stack:${part}`,
    message: again ? `${spec.message} (asking once more; "Not sure" continues with a technology-agnostic design)` : spec.message,
    help: again ? spec.again : `Q2 · ${stackQuestion.help}`,
    choices,
    default: again ? 'unknown' : stack[part] !== 'unknown' ? stack[part] : (detected[0] ?? spec.allowed[0]),
  });
}
