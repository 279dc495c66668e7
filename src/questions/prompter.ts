/**
 * The prompt seam. Questions talk to this interface only; the terminal implementation lives in inquirerPrompter.ts
 * (the one module importing @inquirer/prompts) and tests inject scriptedPrompter.ts. Every prompt carries the
 * question `id`, so a script can say which question it expects and fail loudly on any other.
 */

export interface PromptChoice<T> {
  value: T;
  name: string;
  description?: string;
  /** What the finished prompt echoes back (a long label would wrap over several lines). */
  short?: string;
  /** Pre-checked in a checkbox list. */
  checked?: boolean;
  /** Choices with the same group are shown together under this heading, in first-seen order. */
  group?: string;
}

interface PromptBase {
  id: string;
  message: string;
  /** One or two lines shown before the prompt: why we ask, with concrete examples. */
  help?: string;
}

export interface SelectPrompt<T> extends PromptBase {
  choices: ReadonlyArray<PromptChoice<T>>;
  default?: T;
}

export interface CheckboxPrompt<T> extends PromptBase {
  choices: ReadonlyArray<PromptChoice<T>>;
}

export interface InputPrompt extends PromptBase {
  default?: string;
  /** true, or the message explaining what is wrong. */
  validate?: (value: string) => true | string;
}

export interface ConfirmPrompt extends PromptBase {
  default?: boolean;
}

export interface Prompter {
  select<T>(prompt: SelectPrompt<T>): Promise<T>;
  checkbox<T>(prompt: CheckboxPrompt<T>): Promise<T[]>;
  input(prompt: InputPrompt): Promise<string>;
  confirm(prompt: ConfirmPrompt): Promise<boolean>;
  /** Plain output between prompts (what inspection found, the plan). */
  note(text: string): void;
}
