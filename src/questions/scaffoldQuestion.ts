import { UserError } from '../errors.js';
import { planPlacement, scaffoldDirIn } from '../scaffold/placement/planPlacement.js';
import { findServerPackage } from '../scaffold/placement/serverPackage.js';
import { focusSources } from './stackFromInspection.js';
import type { Answers, Question, QuestionContext, StackAnswer } from './types.js';

const DEFAULT_DIR = 'src/idempotency';

/** Frameworks with a scaffold adapter (src/scaffold/targets/adapters.ts), and the languages each can write. */
const SCAFFOLD_LANGUAGES: Readonly<Record<string, readonly string[]>> = {
  express: ['typescript', 'javascript'],
  fastify: ['typescript'],
  nestjs: ['typescript'],
  koa: ['typescript', 'javascript'],
  hono: ['typescript', 'javascript'],
  nextjs: ['typescript', 'javascript'],
  // No web framework (workers, scripts): the plain idempotent(fn) wrapper.
  none: ['typescript', 'javascript'],
};

/** Databases with a store module (src/scaffold/stores): every adapter runs on each of them. */
const SCAFFOLD_DATABASES: readonly string[] = ['postgres', 'mysql', 'mariadb', 'sqlite', 'libsql', 'redis', 'dynamodb'];

/**
 * Mirrors the scaffold targets' rules for a *known* stack. Kept as a plain check so the wizard does not load the
 * templates to decide; an agnostic design gets the document only.
 */
export function scaffoldAvailable(stack: StackAnswer | undefined): boolean {
  return stack !== undefined && SCAFFOLD_DATABASES.includes(stack.database) && (SCAFFOLD_LANGUAGES[stack.framework] ?? []).includes(stack.language);
}

/**
 * Into the package that holds the protected handlers (a monorepo's api package, not its root), following its
 * layout; the first package when actions live in several (generate places one scaffold per package). When no
 * handler says which package (none found, or they sit outside every workspace package in a root without code of
 * its own), the package that serves HTTP.
 */
function defaultDir(ctx: QuestionContext): string {
  let sources = focusSources(ctx.answers.actions ?? []);
  if (sources.every((source) => !source)) sources = ctx.inspection.findings.filter((finding) => finding.kind === 'endpoint').map((finding) => finding.file);
  const first = sources.length > 0 ? planPlacement({ root: ctx.cwd, sources })[0] : undefined;
  // The root's own code (an app in src/ beside a service folder) is a package too.
  if (first && (first.packageDir !== '' || ctx.inspection.stack.root)) return first.dir;
  const server = findServerPackage(ctx.cwd, (ctx.inspection.stack.packages ?? []).map((pkg) => pkg.dir));
  if (server !== undefined) return scaffoldDirIn(ctx.cwd, server);
  return first?.dir ?? DEFAULT_DIR;
}

const validateDir = (text: string): true | string => {
  const trimmed = text.trim();
  if (trimmed === '') return true;
  if (trimmed.startsWith('/') || trimmed.split(/[\\/]/).includes('..')) return 'Keep it inside the project (a relative path without "..").';
  return true;
};

// Never a silent document only: a stack without its own target gets the reference target (generate says so).
const fallbackFor = (ctx: QuestionContext): Answers['scaffold'] => ({ dir: defaultDir(ctx) });

export const scaffoldQuestion: Question<'scaffold'> = {
  key: 'scaffold',
  title: 'Scaffolding',
  help: 'Runnable code next to the document: migration (DDL), middleware, store, fingerprint, cleanup job and tests.',
  examples: ['--scaffold-dir src/idempotency', '--no-scaffold'],
  flags: ['--scaffold-dir', '--no-scaffold'],
  flagExample: '--scaffold-dir src/idempotency (or --no-scaffold)',
  inspectable: false,
  needsConsent: false,
  fromFlags: (flags) => {
    if (flags.scaffold === false) return false;
    if (flags.scaffoldDir === undefined) return undefined;
    const verdict = validateDir(flags.scaffoldDir);
    if (verdict !== true) throw new UserError(`--scaffold-dir "${flags.scaffoldDir}" is not allowed.`, verdict);
    return flags.scaffoldDir.trim() === '' ? false : { dir: flags.scaffoldDir.trim() };
  },
  fromConfig: (config) => {
    const value = config['scaffold'];
    if (value === false) return false;
    if (value && typeof value === 'object' && typeof (value as { dir?: unknown }).dir === 'string') return { dir: (value as { dir: string }).dir };
    return undefined;
  },
  infer: () => undefined,
  whenNeeded: () => true,
  fallback: (ctx) => ({ value: fallbackFor(ctx) }),
  ask: async (ctx, prefill) => {
    if (!scaffoldAvailable(ctx.answers.stack)) {
      ctx.prompter.note('  No scaffolding target for this stack yet: the reference target (TypeScript/JavaScript + Express + PostgreSQL) is generated to adapt.');
    }
    const start = prefill === undefined ? defaultDir(ctx) : prefill === false ? '' : prefill.dir;
    const dir = await ctx.prompter.input({
      id: 'scaffold',
      message: 'Folder for the runnable scaffolding? (empty = document only)',
      help: scaffoldQuestion.help,
      default: start,
      validate: validateDir,
    });
    return dir.trim() === '' ? false : { dir: dir.trim() };
  },
};
