import type { FileFacts } from '../detectors/detectorTypes.js';
import type { FunctionFacts, ImportBinding, ReExport } from '../parse/indexSource.js';

/** What survives of one parsed file once its AST is dropped: plain data for the cross-file phase. */
export interface FileRecord {
  rel: string;
  text: string;
  pkgDir: string;
  imports: Map<string, ImportBinding>;
  exports: Map<string, string>;
  reExports: ReExport[];
  functions: Map<string, FunctionFacts>;
  shapes: Map<string, string[]>;
  /** Variables initialised with a string literal (`const PREFIX = 'payment'`), for paths assembled across files. */
  stringConsts: Map<string, string>;
  facts: FileFacts;
}

export interface ProjectRecords {
  files: Map<string, FileRecord>;
  /** Workspace package dir → package name, for bare-specifier imports between packages. */
  packagesByName: Map<string, string>;
  /** The root tsconfig's `paths` folder aliases (`@org/lib/*` → libs/lib/src), relative to the root. */
  aliases?: ReadonlyArray<{ readonly prefix: string; readonly dir: string }>;
}
