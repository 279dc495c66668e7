/** One action's wiring, as the transforms see it: plain data from the design model, nothing from ts-morph. */
export interface WiringTarget {
  /** Action name as configured (for messages and the record). */
  action: string;
  /** The generated code's identifier for it: `idempotency.<codeName>`, `ACTIONS.<codeName>`. */
  codeName: string;
  trigger: 'http' | 'webhook' | 'consumer' | 'cron';
  /** How an HTTP action is reached when it is no route: a GraphQL mutation, a tRPC procedure, a Server Action. */
  transport?: 'graphql' | 'trpc' | 'server-action';
  /** Upper-case HTTP method and path template, for routes. */
  method?: string;
  path?: string;
  /** Project-relative POSIX path and 1-based line from the action's `source`. */
  file: string;
  line: number;
  provider?: string;
  /** Whose keys these are: 'global' needs no principal; any other scope answers 401 to a request without one. */
  scope?: string;
  /** 'client' when callers must send the key header; 'derived' when it comes from the request itself. */
  keySource?: string;
  /** The hidden form field a server-rendered form posts the key in, and the forms inspection found (view file:line). */
  keyField?: string;
  forms?: ReadonlyArray<{ file: string; line: number }>;
  /**
   * Which of the file's matching registrations (0-based, source order) the recorded line pointed at, found on the
   * untouched text before any edit: an import added at the top must not make the next action look moved.
   */
  occurrence?: number;
}

/** An edit the tool proposes, already applied to the text it returns. */
export interface Edit {
  action: string;
  file: string;
  /** One line a reviewer reads in the summary, e.g. "mounts idempotency.createPayment on POST /payments". */
  summary: string;
}

/** Something apply will not change itself, with why and what to do instead. */
export interface ManualStep {
  action: string;
  file?: string;
  line?: number;
  reason: string;
}

/** What a transform returns: the new text (same text when nothing was needed) plus what it did or left. */
export interface TransformResult {
  text: string;
  edits: Edit[];
  manual: ManualStep[];
}

/** How the file spells imports, so added ones look like the ones already there. */
export interface ImportStyle {
  quote: 'single' | 'double';
  /** False for semicolon-less code (standard style): what apply adds follows it. */
  semicolons: boolean;
  /** Module specifier for the generated module (relative with the project's extension style, or an alias). */
  specifier: (target: string) => string;
}
