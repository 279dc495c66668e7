import { UserError } from '../errors.js';
import type { Answers, Question, QuestionContext, StackAnswer } from './types.js';

const DEFAULT_DIR = 'src/idempotency';

/** Frameworks with a PostgreSQL scaffold target (src/scaffold/targets), and the languages each can write. */
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

/**
 * Mirrors the scaffold targets' rules for a *known* stack. Kept as a plain check so the wizard does not load the
 * templates to decide; an agnostic design gets the document only.
 */
export function scaffoldAvailable(stack: StackAnswer | undefined): boolean {
  return stack?.database === 'postgres' && (SCAFFOLD_LANGUAGES[stack.framework] ?? []).includes(stack.language);
}

const validateDir = (text: string): true | string => {
  const trimmed = text.trim();
  if (trimmed === '') return true;
  if (trimmed.startsWith('/') || trimmed.split(/[\\/]/).includes('..')) return 'Keep it inside the project (a relative path without "..").';
  return true;
};

const fallbackFor = (ctx: QuestionContext): Answers['scaffold'] => (scaffoldAvailable(ctx.answers.stack) ? { dir: DEFAULT_DIR } : false);

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
      ctx.prompter.note('  No scaffolding target for this stack yet: the document embeds the code to adapt.');
      return false;
    }
    const start = prefill === undefined ? DEFAULT_DIR : prefill === false ? '' : prefill.dir;
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
