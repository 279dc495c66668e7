import { ts } from 'ts-morph';

export interface ParsedSource {
  sf: ts.SourceFile;
  /** First syntax error, if any: the file is still analysed (the parser recovers), but the user is told. */
  syntaxError?: { line: number; message: string };
}

function scriptKindOf(file: string): ts.ScriptKind {
  if (file.endsWith('.tsx')) return ts.ScriptKind.TSX;
  if (file.endsWith('.jsx')) return ts.ScriptKind.JSX;
  if (/\.[cm]?ts$/.test(file)) return ts.ScriptKind.TS;
  // Plain .js may contain JSX in React-era projects; JSX parsing is a superset for our purposes.
  return ts.ScriptKind.JSX;
}

/**
 * JSDoc is not parsed (nothing here reads it: ~10 % of a parse of commented code) and parent links are set by one
 * plain walk, about half the cost of the compiler's own pass, which also visits JSDoc.
 */
const OPTIONS: ts.CreateSourceFileOptions = { languageVersion: ts.ScriptTarget.Latest, jsDocParsingMode: ts.JSDocParsingMode.ParseNone };

/** `parents: false` leaves `node.parent` unset, for a caller that links them in its own walk (indexSource does). */
export function parseSource(file: string, text: string, { parents = true }: { parents?: boolean } = {}): ParsedSource {
  const sf = ts.createSourceFile(file, text, OPTIONS, false, scriptKindOf(file));
  if (parents) linkParents(sf);
  // parseDiagnostics is internal but stable for a decade; the public route needs a Program, which costs 10×.
  const diagnostics = (sf as unknown as { parseDiagnostics?: ts.DiagnosticWithLocation[] }).parseDiagnostics ?? [];
  const first = diagnostics[0];
  if (!first) return { sf };
  return {
    sf,
    syntaxError: {
      line: sf.getLineAndCharacterOfPosition(first.start).line + 1,
      message: ts.flattenDiagnosticMessageText(first.messageText, ' '),
    },
  };
}

/** Read once: ts-morph's `ts` is an object of getters, and this runs for every node of every file audit parses. */
const forEachChild = ts.forEachChild;

/** `node.parent` for every node under `root`, as `setParentNodes` would set it (there is no JSDoc to link). */
export function linkParents(root: ts.Node): void {
  let parent: ts.Node = root;
  const visit = (node: ts.Node): void => {
    (node as { parent: ts.Node }).parent = parent;
    const saved = parent;
    parent = node;
    forEachChild(node, visit);
    parent = saved;
  };
  forEachChild(root, visit);
}
