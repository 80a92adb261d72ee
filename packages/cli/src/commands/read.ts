import { choiceOption, flag, numberOption, parseNumber, requirePositionals, type CommandSpec } from '../command.js';
import { UsageError } from '../exit-codes.js';
import { memoryDetails, memoryLine, oneLine, searchLine, versionLines } from '../format.js';
import { effectiveScope, FILTER_OPTIONS, filterFrom, LOOKUPS, READS, scopeOption, withMemory } from './shared.js';
import { isEmptyScope, MemloomError, scopeDescription } from '@memloom/core';

export const searchCommand: CommandSpec = {
  name: 'search',
  summary: 'find the memories most relevant to a query (meaning + keywords + weight + recency, + date when the query names a day or month)',
  usage: ['search <query...> [options]'],
  description: 'Ranks memories in the scope by memloom\'s hybrid retrieval and shows each score\'s parts and, for stale memories, the freshness warning when the configuration sets "freshness".',
  options: {
    limit: { type: 'string', short: 'n', value: 'n', description: "how many results (default: the configured retrieval limit, 10, or the retrieve_limit of the scope's policy_overrides.json in a Markdown store)" },
    'min-score': { type: 'string', value: 'score', description: 'drop results scoring below this (0..1)' },
    ...FILTER_OPTIONS,
  },
  examples: ['memloom search "where does alice live?" --user alice', 'memloom search coffee --limit 3 --category fact --json'],
  async run(context) {
    if (context.positionals.length === 0) throw new UsageError('missing <query>');
    const query = context.positionals.join(' ');
    const limit = numberOption(context.values, 'limit', { min: 1, integer: true });
    const minScore = numberOption(context.values, 'min-score', { min: 0, max: 1 });
    const filter = filterFrom(context.values);
    await withMemory(context, async ({ memory }) => {
      const results = await memory.search(query, {
        ...scopeOption(context),
        ...(limit !== undefined ? { limit } : {}),
        ...(minScore !== undefined ? { minScore } : {}),
        ...(filter ? { filter } : {}),
      });
      if (context.globals.json) return context.printJson(results);
      if (results.length === 0) return context.print('No memories match.');
      results.forEach((result, index) => searchLine(context, result, index + 1).forEach((line) => context.print(line)));
    }, READS);
  },
};

const ORDER = ['updated', 'created', 'id'] as const;

export const listCommand: CommandSpec = {
  name: 'list',
  summary: 'list memories, newest first',
  usage: ['list [options]'],
  description: 'Lists the memories in the scope (every scope when none is given or configured): id, level, category, day of the last update, scope and content.',
  options: {
    limit: { type: 'string', short: 'n', value: 'n', description: 'at most this many (default 50)' },
    all: { type: 'boolean', description: 'every memory, no limit' },
    offset: { type: 'string', value: 'n', description: 'skip this many first' },
    order: { type: 'string', value: 'field', description: `order by ${ORDER.join(', ')} (default updated)` },
    asc: { type: 'boolean', description: 'oldest first' },
    ...FILTER_OPTIONS,
  },
  examples: ['memloom list --user alice', 'memloom list --category episode --level summary,tag --all --json'],
  async run(context) {
    requirePositionals(context, []);
    const { values } = context;
    if (flag(values, 'all') && values.limit !== undefined) throw new UsageError('--all and --limit cannot be used together');
    const limit = flag(values, 'all') ? undefined : (numberOption(values, 'limit', { min: 1, integer: true }) ?? 50);
    const offset = numberOption(values, 'offset', { min: 0, integer: true });
    const order = choiceOption(values, 'order', ORDER) ?? 'updated';
    const filter = filterFrom(values);
    await withMemory(context, async ({ memory }) => {
      const query = { ...scopeOption(context), ...(filter ? { filter } : {}) };
      const memories = await memory.list({
        ...query,
        ...(limit !== undefined ? { limit } : {}),
        ...(offset !== undefined ? { offset } : {}),
        orderBy: order === 'updated' ? 'updatedAt' : order === 'created' ? 'createdAt' : 'id',
        direction: flag(values, 'asc') ? 'asc' : 'desc',
      });
      if (context.globals.json) return context.printJson(memories);
      if (memories.length === 0) return context.print('No memories.');
      for (const record of memories) context.print(memoryLine(context, record));
      const total = await memory.count(query);
      const shown = (offset ?? 0) + memories.length;
      if (shown < total) context.note(context.dim(`${memories.length} of ${total} shown; --all or --offset ${shown} for more`));
    }, READS);
  },
};

export const showCommand: CommandSpec = {
  name: 'show',
  summary: 'show one memory with every field',
  usage: ['show <id> [options]'],
  description: 'Prints every field of one memory. With a scope (--user/--agent/--session over the configured default scope), a memory outside it is not found (exit 3), naming the scope looked in.',
  examples: ['memloom show 0b9e7c52-5f0e-4d7c-9a51-1f3a2b4c5d6e', 'memloom show 0b9e7c52-5f0e-4d7c-9a51-1f3a2b4c5d6e --json'],
  async run(context) {
    const [id] = requirePositionals(context, ['id']);
    await withMemory(context, async (opened) => {
      const { memory } = opened;
      const record = await memory.get(id!, scopeOption(context));
      // As core says it for history, restore and forget (naming the store asked): the scope looked in is the
      // configured default scope too, with --user/--agent/--session over it.
      if (!record) {
        const scope = effectiveScope(context, opened);
        const where = isEmptyScope(scope) ? '' : ` in the scope ${scopeDescription(scope)}`;
        throw new MemloomError({ code: 'NOT_FOUND', backend: memory.store.name, message: `no memory with id ${id}${where}`, details: { id, scope } });
      }
      if (context.globals.json) return context.printJson(record);
      for (const line of memoryDetails(context, record)) context.print(line);
    }, LOOKUPS);
  },
};

export const historyCommand: CommandSpec = {
  name: 'history',
  summary: "show a memory's versions: what changed, when, and why",
  usage: ['history <id> [options]'],
  description: 'Every version of one memory, oldest first: the trigger and action, the reason, what moved (level, weight, timestamp) and the text as it became. Restore any of them with "memloom restore".',
  examples: ['memloom history 0b9e7c52-5f0e-4d7c-9a51-1f3a2b4c5d6e', 'memloom history 0b9e7c52-5f0e-4d7c-9a51-1f3a2b4c5d6e --json'],
  async run(context) {
    const [id] = requirePositionals(context, ['id']);
    await withMemory(context, async ({ memory }) => {
      const versions = await memory.history(id!, scopeOption(context));
      if (context.globals.json) return context.printJson(versions);
      for (const version of versions) versionLines(context, version).forEach((line) => context.print(line));
    }, LOOKUPS);
  },
};

export const restoreCommand: CommandSpec = {
  name: 'restore',
  summary: 'bring back an earlier version of a memory (as a new version)',
  usage: ['restore <id> <version> [options]'],
  description: 'Makes the memory what it was at <version>; the restore is itself a new version, so it can be undone the same way.',
  options: { reason: { type: 'string', value: 'text', description: 'why, for the history (default "restored version N")' } },
  examples: ['memloom restore 0b9e7c52-5f0e-4d7c-9a51-1f3a2b4c5d6e 2', 'memloom restore 0b9e7c52-5f0e-4d7c-9a51-1f3a2b4c5d6e 1 --reason "the merge was wrong"'],
  async run(context) {
    const [id, versionText] = requirePositionals(context, ['id', 'version']);
    const version = parseNumber(versionText!, '<version>', { min: 1, integer: true });
    const reason = typeof context.values.reason === 'string' ? context.values.reason : undefined;
    await withMemory(context, async ({ memory }) => {
      const record = await memory.restore(id!, version, { ...scopeOption(context), ...(reason ? { reason } : {}) });
      if (context.globals.json) return context.printJson(record);
      context.print(`restored ${oneLine(record.id)} to version ${version} (now revision ${record.revision})`);
      context.print(`  ${memoryLine(context, record)}`);
    }, LOOKUPS);
  },
};
