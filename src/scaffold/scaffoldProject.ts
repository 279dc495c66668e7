import type { DesignModel } from '../model/types.js';
import { documentExcerpts, generateScaffold } from './index.js';
import { detectMigrationTool } from './migrationTools/detectMigrationTool.js';
import { renderToolMigration } from './migrationTools/renderToolMigration.js';
import { dependencyNotes, planScaffolds } from './placement/planScaffolds.js';
import type { PackageManager } from './placement/installCommands.js';
import { readProjectProfile } from './profile/readProjectProfile.js';
import type { ProjectProfile } from './profile/types.js';
import { findTarget, referenceTarget } from './registry.js';
import type { CodeExcerpt, ExcerptId, ScaffoldFile } from './types.js';

export interface ProjectScaffolding {
  files: ScaffoldFile[];
  /** What the document embeds: the scaffold in the configured folder. */
  excerpts: Partial<Record<ExcerptId, CodeExcerpt>>;
  /** Said in the terminal: the dependencies to add per package. */
  notes: string[];
  /** Set when the stack has no target and the reference target was generated (terminal and document say so). */
  reference?: string;
}

export interface ScaffoldProjectInput {
  root: string;
  model: DesignModel;
  /** The configured scaffold folder, normalized and relative to root; undefined = no scaffolding (excerpts only). */
  dir: string | undefined;
  packageManager: PackageManager;
}

/**
 * The scaffolding for a project as it is: one per package holding protected handlers, each following the tsconfig,
 * package.json and test runner of the package it lands in, and the reference target where the stack has none.
 */
export async function scaffoldProject(input: ScaffoldProjectInput): Promise<ProjectScaffolding> {
  const { root, model } = input;
  const languageOf = (stack: DesignModel['stack']): 'javascript' | 'typescript' => (stack.language === 'javascript' ? 'javascript' : 'typescript');
  const profileAt = (dir: string, language = languageOf(model.stack)): Promise<ProjectProfile> => readProjectProfile({ root, dir, language, testFramework: model.stack.testFramework });
  if (input.dir === undefined) return { files: [], excerpts: documentExcerpts(model, { dir: 'src/idempotency', profile: await profileAt('.') }), notes: [] };
  const plans = planScaffolds(root, model, input.dir);
  const files: ScaffoldFile[] = [];
  const notes: string[] = [];
  if (!plans.some((plan) => plan.dir === input.dir)) {
    notes.push(`The configured scaffold folder ${input.dir} is in none of the packages that hold the protected handlers, which could not import it: each package got its own (${plans.map((plan) => plan.dir).join(', ')}). Set scaffold.dir to one of them to keep it.`);
  }
  let excerpts: ProjectScaffolding['excerpts'] = {};
  for (const [index, plan] of plans.entries()) {
    // A plain JavaScript package beside the TypeScript app gets its scaffold in JavaScript (planScaffolds decides).
    const language = languageOf(plan.model.stack);
    const profile = await profileAt(plan.dir, language);
    const generated = generateScaffold(plan.model, { dir: plan.dir, profile, reference: true });
    files.push(...generated);
    // The store's migration also goes where the package keeps its migrations, in its tool's format.
    const ddl = generated.find((file) => file.role === 'ddl' && file.path.endsWith('.sql'));
    // Only when the DDL is in the project's own dialect: a reference PostgreSQL store in a MySQL project stays in
    // the scaffold folder rather than among the MySQL migrations.
    const reference = model.stack.agnostic || !findTarget(model.stack);
    const sameDialect = !reference && model.stack.database === model.stack.storeDatabase;
    const own = ddl && sameDialect ? await detectMigrationTool(root, plan.packageDir) : { kind: 'none' as const };
    // A workspace package with no migrations of its own uses the repository's (every dependency and the Prisma
    // schema at the root, as in gitroomhq/postiz-app); written once when several packages share it.
    const tool = own.kind === 'none' && ddl && sameDialect && plan.packageDir !== '' ? await detectMigrationTool(root, '') : own;
    if (ddl && tool.kind !== 'none') {
      const migrations = renderToolMigration({ tool, ddl: ddl.contents, table: model.storage.table, stepTable: model.storage.stepTable, language, moduleSystem: profile.moduleSystem }).filter((m) => !files.some((f) => f.path === m.path));
      files.push(...migrations);
      for (const migration of migrations) {
        if (/\/meta\/(_journal|\d+_snapshot)\.json$/.test(migration.path)) continue;
        if (tool.kind === 'drizzle' && !migration.path.endsWith('.sql')) {
          const entry = tool.schemaEntry ? ` (re-export it from ${tool.schemaEntry} or list both in drizzle.config's schema)` : '';
          notes.push(`The store's tables are in ${migration.path} as a Drizzle schema${entry}; its migration is journaled in ${tool.folder}, so \`drizzle-kit migrate\` applies it.`);
          continue;
        }
        // A runner that pairs migrations (postgrator, golang-migrate) gets the undo beside it: named in the up note.
        const undo = tool.kind === 'sql' ? migrations.find((m) => m.role === 'other') : undefined;
        if (migration === undo) continue;
        if (undo) notes.push(`The store's migration is also in ${migration.path}, its undo in ${undo.path} (your SQL migrations folder); apply it with your migration tool.`);
        else if (migration.path.endsWith('.prisma')) notes.push(`The store's tables are ${tool.kind === 'prisma' && tool.modelsFile === migration.path ? 'in' : 'appended to'} ${migration.path} as Prisma models (@@map to the same tables)${tool.kind === 'prisma' && tool.push ? '; your scripts apply the schema with `prisma db push`, which creates them' : ''}.`);
        else notes.push(`The store's migration is also in ${migration.path} (${tool.kind === 'sql' ? 'your SQL migrations folder' : tool.kind}); ${tool.kind === 'prisma' ? 'run `prisma migrate dev` to apply it' : 'apply it with your migration tool'}.`);
      }
      if (tool.kind === 'prisma') addReadmeNote(files, plan.dir, migrations.filter((m) => !m.path.endsWith('.prisma')), tool.modelsFile ?? tool.schema?.path, tool.push === true);
    }
    if (index === plans.findIndex((candidate) => candidate.dir === input.dir) || (index === 0 && !plans.some((candidate) => candidate.dir === input.dir))) {
      excerpts = documentExcerpts(plan.model, { dir: plan.dir, profile, reference: true });
    }
    notes.push(...(await dependencyNotes(root, plan, generated, input.packageManager, language === 'typescript', profile.jestTransform ? [profile.jestTransform] : [])));
    if (profile.unreadExtends && profile.tsconfig) {
      notes.push(`${profile.tsconfig} extends ${profile.unreadExtends.join(', ')}, which could not be read (not installed, or only outside the project): the scaffold in ${plan.dir} follows the options read without ${profile.unreadExtends.length === 1 ? 'it' : 'them'} (${profile.moduleSystem === 'esm' ? 'ES modules' : 'CommonJS'}, ${profile.relativeImports === 'js-extension' ? 'relative imports with .js' : 'extensionless relative imports'}). Install the dependencies and run \`idempotency-builder generate\` again.`);
    }
    if (profile.jestTransform) {
      notes.push(`The Jest of ${plan.packageDir === '' ? 'the project' : plan.packageDir} has no TypeScript transform (no ts-jest, @swc/jest or Babel TypeScript preset), so it cannot load the generated .ts suites: with ts-jest installed (in the line above), add \`preset: '${profile.moduleSystem === 'esm' ? 'ts-jest/presets/default-esm' : 'ts-jest'}'\` to its Jest config (the generator does not edit it${profile.moduleSystem === 'esm' ? `; ${plan.dir}/README.md has the rest an ES module project needs` : ''}).`);
    }
    // Said where it is seen, not only in the scaffold README: `npm test` would pass without running them.
    if (profile.jestIgnoresSuites && profile.testRunner === 'jest') {
      notes.push(`The Jest config of ${plan.packageDir === '' ? 'the project' : plan.packageDir} (testMatch, testRegex or roots) does not collect the generated suites in ${plan.dir}, so its test command skips them: add the folder to it (the generator does not edit it; ${plan.dir}/README.md says how).`);
    }
  }
  const target = model.stack.agnostic || !findTarget(model.stack) ? referenceTarget(model.stack, model.actions) : undefined;
  return { files, excerpts, notes, ...(target ? { reference: target.label } : {}) };
}

/** The scaffold README says how a Prisma project applies the store: its own migration command, not psql. */
function addReadmeNote(files: ScaffoldFile[], dir: string, migrations: readonly ScaffoldFile[], schema: string | undefined, push: boolean): void {
  const index = files.findIndex((file) => file.role === 'readme' && file.path === `${dir}/README.md`);
  if (index === -1) return;
  const code = (text: string) => `\`${text.replace(/`/g, "'")}\``;
  // The same text whether or not this run appended the models, so a second generate leaves the README alone.
  const models = schema ? ` Its tables are models in ${code(schema)} (added there while absent, @@map to the same tables).` : '';
  const note = push && schema
    ? `\n## Prisma\n\nThe store's tables are models in ${code(schema)} (added there while absent, @@map to the same tables). The project applies its schema with \`prisma db push\` and keeps no migrations folder, so that command creates them; not the SQL file in this folder.\n`
    : `\n## Prisma\n\nThe store's migration is also in ${migrations.map((m) => code(m.path)).join(' and ')}.${models} Apply it with \`npx prisma migrate dev\` (\`prisma migrate deploy\` in production), not the SQL file in this folder.\n`;
  files[index] = { ...files[index]!, contents: `${files[index]!.contents.replace(/\s*$/, '\n')}${note}` };
}
