import { Separator, checkbox, confirm, input, select } from '@inquirer/prompts';
import { CancelledError } from '../errors.js';
import type { CheckboxPrompt, ConfirmPrompt, InputPrompt, PromptChoice, Prompter, SelectPrompt } from './prompter.js';

/** The terminal prompter: the only module that imports @inquirer/prompts. */
export function createInquirerPrompter(options: { color?: boolean } = {}): Prompter {
  const dim = (text: string) => (options.color === false ? text : `\u001b[2m${text}\u001b[0m`);
  const showHelp = (help?: string) => {
    if (help) process.stdout.write(`${help.split('\n').map((line) => dim(`  ${line}`)).join('\n')}\n`);
  };
  return {
    async select<T>(prompt: SelectPrompt<T>): Promise<T> {
      showHelp(prompt.help);
      return cancellable(() =>
        select<T>({ message: prompt.message, choices: grouped(prompt.choices), default: prompt.default, pageSize: 12 }),
      );
    },
    async checkbox<T>(prompt: CheckboxPrompt<T>): Promise<T[]> {
      showHelp(prompt.help);
      return cancellable(() => checkbox<T>({ message: prompt.message, choices: grouped(prompt.choices), pageSize: 15 }));
    },
    async input(prompt: InputPrompt): Promise<string> {
      showHelp(prompt.help);
      return cancellable(() => input({ message: prompt.message, default: prompt.default, validate: prompt.validate }));
    },
    async confirm(prompt: ConfirmPrompt): Promise<boolean> {
      showHelp(prompt.help);
      return cancellable(() => confirm({ message: prompt.message, default: prompt.default }));
    },
    note(text: string): void {
      process.stdout.write(`${text}\n`);
    },
  };
}

type InquirerChoice<T> = { value: T; name: string; description?: string; short?: string; checked?: boolean } | Separator;

/** Inquirer has no notion of groups: a separator heading goes before each group's first choice. */
function grouped<T>(choices: ReadonlyArray<PromptChoice<T>>): Array<InquirerChoice<T>> {
  const order: string[] = [];
  const byGroup = new Map<string, Array<PromptChoice<T>>>();
  for (const choice of choices) {
    const group = choice.group ?? '';
    if (!byGroup.has(group)) {
      order.push(group);
      byGroup.set(group, []);
    }
    byGroup.get(group)?.push(choice);
  }
  const out: Array<InquirerChoice<T>> = [];
  for (const group of order) {
    if (group !== '') out.push(new Separator(`── ${group}`));
    for (const { value, name, description, short, checked } of byGroup.get(group) ?? []) out.push({ value, name, description, short, checked });
  }
  return out;
}

/** Ctrl-C makes inquirer reject with ExitPromptError; the CLI turns CancelledError into exit 130. */
async function cancellable<T>(ask: () => Promise<T>): Promise<T> {
  try {
    return await ask();
  } catch (error) {
    if (error instanceof Error && (error.name === 'ExitPromptError' || error.name === 'AbortPromptError')) throw new CancelledError();
    throw error;
  }
}
