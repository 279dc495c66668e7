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

export function parseSource(file: string, text: string): ParsedSource {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, scriptKindOf(file));
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
