import type { ActionConfig } from '../config/schema.js';
import { lineMapping } from '../emit/unifiedDiff.js';
import { ruleById } from '../findings/registry.js';
import type { FileChange } from './planApply.js';
import type { ManualStep } from './types.js';

const SOURCE = /^(?:\.\/)?(.*?):(\d+)((?::\d+)?)$/;

/** An action's `source` as file, line and the optional column tail. */
const parseSource = (source: string | undefined) => {
  const m = source ? SOURCE.exec(source) : null;
  return m ? { file: m[1]!, line: Number(m[2]), column: m[3]! } : undefined;
};

/** Where a line of a file stands after the changes (each file's mapping worked out once): the same line in a file they leave alone. */
export function mover(changes: readonly Pick<FileChange, 'path' | 'before' | 'after'>[]): (file: string, line: number) => number {
  const maps = new Map<string, (line: number) => number>();
  return (file, line) => {
    const change = changes.find((c) => c.path === file && c.before !== undefined);
    if (!change || change.before === undefined) return line;
    if (!maps.has(file)) maps.set(file, lineMapping(change.before, change.after));
    return maps.get(file)!(line);
  };
}

/**
 * The config text with each action's `source` moved to where its line stands after apply's edits: the imports and
 * decorators apply inserts push a handler down, and a stale line would make `audit` and the next `init` read the
 * wrong function. Only the JSON string of a source that appears once is replaced, so the rest of the file (the
 * user's formatting) stays byte for byte; undefined when no source moved.
 */
export function movedSources(configText: string, actions: readonly ActionConfig[], changes: readonly FileChange[]): { text: string; count: number } | undefined {
  const move = mover(changes);
  let text = configText;
  let count = 0;
  for (const action of actions) {
    const at = parseSource(action.source);
    if (!at) continue;
    const moved = move(at.file, at.line);
    if (moved === at.line) continue;
    const before = JSON.stringify(action.source);
    const index = text.indexOf(before);
    if (index < 0 || text.indexOf(before, index + before.length) >= 0) continue;
    count++;
    text = `${text.slice(0, index)}${JSON.stringify(`${at.file}:${moved}${at.column}`)}${text.slice(index + before.length)}`;
  }
  return count === 0 ? undefined : { text, count };
}

/**
 * Manual steps placed at their action's recorded line (the route as inspected) moved to where that line stands once
 * the changes are written, so the step and the config's new source agree; steps the transforms placed in the edited
 * text, and recorded findings, keep their lines.
 */
export function movedSteps(manual: readonly ManualStep[], actions: readonly ActionConfig[], changes: readonly FileChange[]): ManualStep[] {
  const move = mover(changes);
  return manual.map((step) => {
    // A recorded finding ("rule-id: fix") keeps the line its inspection gave; relocateFindings places those.
    const rule = /^([a-z0-9]+(?:-[a-z0-9]+)+): /.exec(step.reason)?.[1];
    if (rule && ruleById(rule)) return step;
    const at = parseSource(actions.find((a) => a.name === step.action)?.source);
    return at && step.file === at.file && step.line === at.line ? { ...step, line: move(at.file, at.line) } : step;
  });
}
