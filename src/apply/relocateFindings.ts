import { ruleById } from '../findings/registry.js';
import { readSchemaFacts } from '../findings/schemaFacts.js';
import type { SourceContext } from '../findings/types.js';
import { parseSource } from '../inspect/parse/parseSource.js';
import type { FindingDesign } from '../model/findings.js';
import { mover } from './movedSources.js';
import type { ManualStep } from './types.js';

/** How far a formatter may move a reported call within its statement (an argument added, the call re-wrapped). */
const NEARBY_LINES = 3;

/** A file apply edits: its text as inspected and as apply leaves it. */
export interface EditedText {
  path: string;
  before?: string;
  after: string;
}

type Report = { line: number; message: string };

/**
 * The recorded findings listed as manual steps, as they stand in the edited files: each finding's rule is run again
 * on the text before and after apply's edits. A finding the transforms fixed (a per-attempt key now derived) is no
 * longer listed; one that remains gets its line in the edited file (imports and statements apply inserted move it).
 * The recorded line is init's: on a file the last apply wrote (`written`), it predates that apply's edits, so the
 * finding is found by its message alone, and one the rule no longer reports was fixed then. Elsewhere a finding the
 * rule does not report on the untouched text (an older inspection) is listed as recorded.
 * Schema facts are not re-read: a rule that needs them may report more on the re-run, never fewer of what it found.
 */
export function relocateFindings(manual: readonly ManualStep[], findings: ReadonlyMap<ManualStep, FindingDesign>, edited: readonly EditedText[], dependencies: ReadonlyMap<string, string>, written: (file: string) => boolean): ManualStep[] {
  const cache = new Map<string, Report[]>();
  const reports = (ruleId: string, file: string, text: string): Report[] => {
    const id = `${ruleId}\u0000${file}\u0000${text}`;
    const cached = cache.get(id);
    if (cached) return cached;
    const rule = ruleById(ruleId);
    const source: SourceContext = { rel: file, text, sf: parseSource(file, text).sf, schema: readSchemaFacts(new Map()), dependencies };
    const found = (rule?.checkFile?.(source) ?? []).map((r) => ({ line: source.sf.getLineAndCharacterOfPosition(r.node.getStart(source.sf)).line + 1, message: r.message }));
    cache.set(id, found);
    return found;
  };
  const move = mover(edited);
  // How many recorded findings with this rule, file and message came before: the n-th is the rule's n-th report.
  const seen = new Map<string, number>();
  return manual.flatMap((step) => {
    const finding = findings.get(step);
    const change = finding && edited.find((c) => c.path === finding.file && c.before !== undefined);
    if (!finding || !change || change.before === undefined || !ruleById(finding.ruleId)?.checkFile) return [step];
    const sameMessage = `${finding.ruleId}\u0000${finding.file}\u0000${finding.message}`;
    const order = seen.get(sameMessage) ?? 0;
    seen.set(sameMessage, order + 1);
    const before = reports(finding.ruleId, change.path, change.before);
    const onLine = before.filter((r) => r.line === finding.line);
    const match = written(change.path) ? before.filter((r) => r.message === finding.message)[order] : (onLine.find((r) => r.message === finding.message) ?? onLine[0]);
    if (!match) return written(change.path) ? [] : [step];
    // Where the edits moved that line; the report there (give or take the lines a formatter re-wraps) is the same
    // finding. Not the n-th of the same message: two calls alike (Adyen's paymentsDetails in two handlers) where
    // apply keyed the first would hand the first's finding to the second.
    const moved = move(change.path, match.line);
    const after = reports(finding.ruleId, change.path, change.after).filter((r) => r.message === match.message && Math.abs(r.line - moved) <= NEARBY_LINES);
    const now = after.sort((a, b) => Math.abs(a.line - moved) - Math.abs(b.line - moved))[0];
    return now ? [{ ...step, line: now.line }] : [];
  });
}
