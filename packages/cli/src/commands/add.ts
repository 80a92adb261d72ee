import { MEMORY_CATEGORIES, MEMORY_SOURCES, MEMORY_TYPES, type AddOptions } from 'memloom';
import { choiceOption, dateOption, flag, listOption, numberOption, stringOption, type CommandSpec } from '../command.js';
import { UsageError } from '../exit-codes.js';
import { readAll } from '../io.js';
import { memoryLine, oneLine } from '../format.js';
import { scopeOption, withMemory } from './shared.js';

export const addCommand: CommandSpec = {
  name: 'add',
  summary: 'remember something (merged, kept beside or new, as the strategy decides)',
  usage: ['add <content...> [options]', 'add - [options]          (content from stdin)'],
  description: [
    'Compares the content with the most similar memory in the same scope and layer: at similarity',
    '>= 0.85 it is merged into it (timestamp refreshed, weight boosted), from 0.60 a new memory is kept',
    'beside it, below that a new memory is created. Prints the decision and why.',
  ].join('\n'),
  options: {
    category: { type: 'string', value: 'name', description: `${MEMORY_CATEGORIES.join(', ')} (default fact)` },
    type: { type: 'string', value: 'name', description: `${MEMORY_TYPES.join(', ')} (default user)` },
    importance: { type: 'string', value: 'n', description: 'seed 002 importance, >= 0 (default 1; 3 or more never decays)' },
    source: { type: 'string', value: 'name', description: `${MEMORY_SOURCES.join(', ')} (default user)` },
    verified: { type: 'boolean', description: 'the user stated or confirmed it' },
    tag: { type: 'string', multiple: true, value: 'tag', description: 'a tag' },
    'source-id': { type: 'string', multiple: true, value: 'id', description: 'id of a message or turn it came from (provenance)' },
    at: { type: 'string', value: 'date', description: 'when it was said (default now; at most a day ahead)' },
    context: { type: 'string', value: 'text', description: 'what it was said after (e.g. the question it answers): kept with it, helps find it' },
    'no-merge': { type: 'boolean', description: 'store it as a new memory without comparing (verbatim records)' },
  },
  examples: [
    'memloom add "I moved to Lisbon last spring" --user alice',
    'memloom add "Deploys happen on Tuesdays" --agent ops --category core --tag process',
    'memloom add "Yes, since last spring" --context "Do you still live in Lisbon?" --user alice',
    'echo "Prefers short answers" | memloom add - --user alice --json',
  ],
  async run(context) {
    const { values, positionals } = context;
    if (positionals.length === 0) throw new UsageError('missing <content>: memloom add "what to remember" (or - to read stdin)');
    if (positionals[0] === '-' && positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}": - reads the content from stdin, and comes alone`);
    const content = positionals[0] === '-' ? await readAll(context.io.stdin, 'add', context.io.signal) : positionals.join(' ');
    const category = choiceOption(values, 'category', MEMORY_CATEGORIES);
    const type = choiceOption(values, 'type', MEMORY_TYPES);
    const source = choiceOption(values, 'source', MEMORY_SOURCES);
    const importance = numberOption(values, 'importance', { min: 0 });
    const at = dateOption(values, 'at');
    const tags = listOption(values, 'tag');
    const sources = listOption(values, 'source-id');
    const contextText = stringOption(values, 'context');
    const options: AddOptions = {
      ...scopeOption(context),
      ...(category ? { category } : {}),
      ...(type ? { type } : {}),
      ...(source ? { source } : {}),
      ...(importance !== undefined ? { importance } : {}),
      ...(at ? { at } : {}),
      ...(tags.length > 0 ? { tags } : {}),
      ...(sources.length > 0 ? { sources } : {}),
      ...(contextText !== undefined ? { context: contextText } : {}),
      ...(flag(values, 'verified') ? { verified: true } : {}),
      ...(flag(values, 'no-merge') ? { merge: false } : {}),
    };
    await withMemory(context, async ({ memory }) => {
      const result = await memory.add(content, options);
      if (context.globals.json) return context.printJson(result);
      const { decision } = result;
      const verb = { merge_update: 'merged into', keep_both: 'kept beside the nearest memory as', create_new: 'created' }[decision.strategy];
      context.print(`${context.bold(decision.strategy)} (similarity ${decision.similarity.toFixed(3)}): ${verb} ${oneLine(result.memory.id)}`);
      context.print(context.dim(`  ${oneLine(decision.reason)}`));
      context.print(`  ${memoryLine(context, result.memory)}`);
      if (result.boosted) context.print(context.dim(`  nearest memory ${oneLine(result.boosted.id)}: weight now ${result.boosted.weight.toFixed(3)} (content, level and timestamp unchanged)`));
    });
  },
};
