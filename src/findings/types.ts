import type { ts } from 'ts-morph';
import type { Config } from '../config/schema.js';
import type { Inspection } from '../inspect/types.js';
import type { SchemaFacts } from './schemaFacts.js';
import type { PathAlias } from '../scaffold/profile/pathAliases.js';

/**
 * The findings contract: plain data that `audit`, the design model and the document all read. A finding is a
 * defect a reviewer would accept, with where it is, why it matters and how to fix it.
 */

export type Severity = 'error' | 'warning' | 'note';

export const SEVERITIES: readonly Severity[] = ['note', 'warning', 'error'];

export interface CodeFinding {
  ruleId: string;
  /** The rule's short title, carried so readers of findings need not load the rules (and ts-morph). */
  title: string;
  severity: Severity;
  /** Relative to the audited root, POSIX slashes. */
  file: string;
  /** 1-based line and column of the evidence. */
  line: number;
  column: number;
  /** One sentence naming the code: what is wrong here. */
  message: string;
  /** The source line(s) the finding points at, trimmed. */
  evidence: string;
  /** What to change. */
  fix: string;
  /** Anchor of the rule's explanation in the design document and README. */
  docsAnchor: string;
  /** Stable across unrelated edits (no line number): rule, file, enclosing function and the evidence text. */
  fingerprint: string;
  /** Nearest named function, for the document and the fingerprint. */
  enclosingFunction?: string;
  /** The configured action a project rule reports on, when it reports on one (action-not-wrapped). */
  action?: string;
  /** Set when an inline comment accepts the finding. */
  suppressed?: { reason: string };
  /** Set when the baseline file accepts it. */
  baselined?: boolean;
}

/** What one rule reports before the engine adds location, fingerprint and rule metadata. */
export interface RuleReport {
  node: ts.Node;
  message: string;
  /** Overrides the rule's fix text when the fix depends on the code (e.g. names the key to use). */
  fix?: string;
  /** Overrides the rule's severity when the impact depends on the operation (a duplicate charge vs a duplicate draft). */
  severity?: Severity;
}

/** A project rule's report: it may point into a file the engine did not parse (the config, vercel.json). */
export interface ProjectReport {
  file: string;
  line: number;
  message: string;
  evidence?: string;
  fix?: string;
  severity?: Severity;
  enclosingFunction?: string;
  /** The configured action the report is about: the finding is tied to it alone. */
  action?: string;
}

export interface SourceContext {
  rel: string;
  text: string;
  sf: ts.SourceFile;
  schema: SchemaFacts;
  /** Installed provider SDK versions by package name, from package.json. */
  dependencies: ReadonlyMap<string, string>;
  /**
   * The project's database as its config names it (`stack.database`), when it has one: what a fix speaks of. A MongoDB
   * project that installed `pg` for the generated store still keeps its own data in MongoDB.
   */
  database?: string;
}

export interface ProjectContext {
  /** Every source file the engine parsed. */
  sources: readonly SourceContext[];
  /** The tsconfig `paths` folder aliases (`@gitroom/nestjs-libraries/*` → libraries/nestjs-libraries/src), for imports. */
  aliases?: readonly PathAlias[];
  schema: SchemaFacts;
  /** idempotency.config.json when the project has one; rules about configured actions need it. */
  config?: Config;
  /** Texts of non-source files that matter (vercel.json), by relative path. */
  auxiliary: ReadonlyMap<string, string>;
  dependencies: ReadonlyMap<string, string>;
  /** What the inspector found (consumers, crons): project rules reuse it instead of detecting twice. */
  inspection?: Pick<Inspection, 'findings'>;
}

/** One rule = one module. File rules see one parsed file; project rules see the config and every file. */
export interface Rule {
  id: string;
  severity: Severity;
  /** Short title for SARIF and the document's findings table. */
  title: string;
  /** Why it matters, two or three sentences. */
  description: string;
  fix: string;
  docsAnchor: string;
  /** Cheap text test: files that cannot contain the pattern are not walked. */
  mentions?: RegExp;
  checkFile?(ctx: SourceContext): RuleReport[];
  /** Called once per source while its tree is parsed, before any checkProject: a project rule keeps what it needs. */
  scanFile?(ctx: SourceContext): void;
  checkProject?(ctx: ProjectContext): ProjectReport[];
}
