import { CancelledError } from '../errors.js';
import type { CheckboxPrompt, ConfirmPrompt, InputPrompt, Prompter, SelectPrompt } from './prompter.js';

/** Answer with the prompt's own default (the pre-checked set for a checkbox). */
export const ACCEPT = Symbol('accept the default');
/** Behave as if the user pressed Ctrl-C at this prompt. */
export const CANCEL = Symbol('cancel');

export type ScriptedAnswer = string | boolean | readonly string[] | typeof ACCEPT | typeof CANCEL | { value: unknown };

export interface ScriptStep {
  id: string;
  answer: ScriptedAnswer;
}

export interface ScriptedPrompter extends Prompter {
  /** Every prompt seen, in order, with its id and message. */
  readonly asked: Array<{ id: string; message: string; help?: string }>;
  readonly notes: string[];
  /** Throws when script steps were left unused: the wizard skipped a question the test expected. */
  assertDone(): void;
}

/**
 * A prompter for tests that plays a fixed script in order and throws on any question the script did not expect,
 * so a test fails the moment the wizard asks something the code should have answered.
 */
export function createScriptedPrompter(script: readonly ScriptStep[]): ScriptedPrompter {
  const queue = [...script];
  const asked: ScriptedPrompter['asked'] = [];
  const notes: string[] = [];

  const next = (id: string, message: string, help?: string): ScriptedAnswer => {
    asked.push({ id, message, help });
    const step = queue.shift();
    if (!step) throw new Error(`Unexpected question "${id}" (${message}): the script has no more answers.`);
    if (step.id !== id) throw new Error(`Unexpected question "${id}" (${message}); the script expected "${step.id}".`);
    if (step.answer === CANCEL) throw new CancelledError();
    return step.answer;
  };

  return {
    asked,
    notes,
    async select<T>(prompt: SelectPrompt<T>): Promise<T> {
      const answer = next(prompt.id, prompt.message, prompt.help);
      if (answer === ACCEPT) {
        if (prompt.default === undefined) throw new Error(`"${prompt.id}" has no default to accept.`);
        return prompt.default;
      }
      const value = typeof answer === 'object' && answer !== null && 'value' in answer ? answer.value : answer;
      const choice = prompt.choices.find((c) => c.value === value);
      if (!choice) throw new Error(`"${prompt.id}": ${JSON.stringify(value)} is not one of the choices ${JSON.stringify(prompt.choices.map((c) => c.value))}.`);
      return choice.value;
    },
    async checkbox<T>(prompt: CheckboxPrompt<T>): Promise<T[]> {
      const answer = next(prompt.id, prompt.message, prompt.help);
      if (answer === ACCEPT) return prompt.choices.filter((c) => c.checked).map((c) => c.value);
      if (!Array.isArray(answer)) throw new Error(`"${prompt.id}" is a checkbox; script an array of values.`);
      return answer.map((value) => {
        const choice = prompt.choices.find((c) => c.value === value);
        if (!choice) throw new Error(`"${prompt.id}": ${JSON.stringify(value)} is not one of the choices.`);
        return choice.value;
      });
    },
    async input(prompt: InputPrompt): Promise<string> {
      const answer = next(prompt.id, prompt.message, prompt.help);
      const text = answer === ACCEPT ? (prompt.default ?? '') : answer;
      if (typeof text !== 'string') throw new Error(`"${prompt.id}" is a text prompt; script a string.`);
      const verdict = prompt.validate?.(text) ?? true;
      // A real terminal would keep asking; a script that gives an invalid answer is a broken test.
      if (verdict !== true) throw new Error(`"${prompt.id}": scripted answer ${JSON.stringify(text)} was rejected: ${verdict}`);
      return text;
    },
    async confirm(prompt: ConfirmPrompt): Promise<boolean> {
      const answer = next(prompt.id, prompt.message, prompt.help);
      const value = answer === ACCEPT ? (prompt.default ?? false) : answer;
      if (typeof value !== 'boolean') throw new Error(`"${prompt.id}" is a yes/no prompt; script a boolean.`);
      return value;
    },
    note(text: string): void {
      notes.push(text);
    },
    assertDone(): void {
      if (queue.length > 0) throw new Error(`The wizard never asked: ${queue.map((s) => s.id).join(', ')}.`);
    },
  };
}
