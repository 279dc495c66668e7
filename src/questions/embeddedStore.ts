import type { AnswerSource } from './resolveAnswers.js';
import { foundNoDatabase } from './stackFromInspection.js';
import type { Answers, QuestionContext } from './types.js';

/**
 * A project whose inspection found no database gets the embedded store: SQLite through better-sqlite3, a file opened
 * in the process, nothing to run beside it. It serialises duplicates only inside that one process, so it is the
 * default only while the service runs as one instance.
 */
export const EMBEDDED_DATABASE = 'sqlite' as const;

/**
 * The stack question's database when the code settles none: SQLite where the project has no database, else unknown.
 * Only for a project whose language and framework are known: SQLite targets exist for every framework, while a stack
 * still unknown in those parts gets the technology-agnostic design, whose reference is PostgreSQL.
 */
export function databaseWithoutClient(
  ctx: Pick<QuestionContext, 'inspection'>,
  stack: Partial<Pick<Answers['stack'], 'language' | 'framework'>>,
): Answers['stack']['database'] {
  const known = (part: string | undefined) => part !== undefined && part !== 'unknown';
  return known(stack.language) && known(stack.framework) && foundNoDatabase(ctx.inspection) ? EMBEDDED_DATABASE : 'unknown';
}

/** Q5 was not answered: a project on the embedded store is assumed to run as the one instance that store can serve. */
export function embeddedConcurrency(ctx: Pick<QuestionContext, 'inspection' | 'answers'>): boolean {
  return ctx.answers.stack?.database === EMBEDDED_DATABASE && foundNoDatabase(ctx.inspection);
}

export interface EmbeddedStoreOutcome {
  stack: Answers['stack'];
  /** What was chosen and why, for the terminal and (as an assumption) the document; absent when nothing was defaulted. */
  note?: string;
}

/**
 * After every answer is in (concurrency, Q5, comes after the stack, Q2): keeps the SQLite default for one instance,
 * or, when several instances or regions share the work, goes back to the PostgreSQL reference, because requests
 * reaching different instances cannot be serialised by a file each one opens for itself. A database the user named
 * (flag or config) is theirs and is kept whatever the concurrency.
 */
export function settleEmbeddedStore(
  answers: Pick<Answers, 'stack' | 'concurrency'>,
  source: AnswerSource | undefined,
  ctx: Pick<QuestionContext, 'inspection' | 'flags'>,
): EmbeddedStoreOutcome {
  const { stack } = answers;
  const named = source === 'flag' || source === 'config' || ctx.flags.database !== undefined;
  if (named || stack.database !== EMBEDDED_DATABASE || !foundNoDatabase(ctx.inspection)) return { stack };
  const found = 'Inspection found no database in the project (no database client, ORM or database-backed queue in its package.json)';
  if (answers.concurrency === 'single-server') {
    return {
      stack,
      note: `${found}: the idempotency records live in an embedded SQLite file (better-sqlite3), which serialises duplicate requests within this one instance only. Move them to a shared store (PostgreSQL, MySQL or Redis) before running a second instance or process.`,
    };
  }
  return {
    stack: { ...stack, database: 'unknown' },
    note: `${found}, but the service runs as ${answers.concurrency === 'global' ? 'instances in several regions' : 'several instances'}: an embedded SQLite file cannot serialise duplicates that reach different instances, so the design uses the PostgreSQL reference. Pass --database with the shared store the records should live in (postgres, mysql or redis).`,
  };
}
