import type { Scope } from 'memloom';
import { describeScope, flag, requirePositionals, type CommandSpec } from '../command.js';
import { EXIT_CODES, UsageError } from '../exit-codes.js';
import { memoriesText, oneLine } from '../format.js';
import { LOOKUPS, SCOPE_DELETIONS, scopeOption, withMemory, effectiveScope } from './shared.js';

export const forgetCommand: CommandSpec = {
  name: 'forget',
  summary: 'delete one memory, or every memory of a scope',
  usage: ['forget <id> [options]', 'forget --scope --user <id> [--agent <id>] [--session <id>] --yes'],
  description: [
    'Deletes the memory with its vector, keyword entry and history. With --scope, deletes every',
    'memory whose scope matches --user/--agent/--session (at least one is needed), within the configured',
    'default scope ("scope" in memloom.config.json) for the fields not given; without --yes it only says',
    'how many would go and exits 2. With --yes it deletes exactly the memories it counts without.',
  ].join('\n'),
  options: {
    scope: { type: 'boolean', description: 'delete every memory in the scope given by --user/--agent/--session' },
    yes: { type: 'boolean', short: 'y', description: 'really delete the whole scope' },
  },
  examples: ['memloom forget 0b9e7c52-5f0e-4d7c-9a51-1f3a2b4c5d6e', 'memloom forget --scope --user alice', 'memloom forget --scope --user alice --session s1 --yes --json'],
  async run(context) {
    if (!flag(context.values, 'scope')) {
      if (flag(context.values, 'yes')) throw new UsageError('--yes goes with --scope');
      const [id] = requirePositionals(context, ['id']);
      await withMemory(context, async ({ memory }) => {
        await memory.delete(id!, scopeOption(context));
        if (context.globals.json) return context.printJson({ deleted: 1, id });
        context.print(`forgot ${oneLine(id!)}`);
      }, LOOKUPS);
      return;
    }
    requirePositionals(context, []);
    if (Object.keys(context.globals.scope).length === 0) throw new UsageError('--scope needs --user, --agent or --session: which memories to forget');
    return withMemory(context, async (opened) => {
      const { memory } = opened;
      // count() fills the scope from the configured default scope, deleteAll() does not: merge it
      // here once, so that the preview and the deletion name the very same memories.
      const scope = effectiveScope(context, opened);
      const count = await memory.count({ scope });
      // Shown as text, as every scope the CLI prints (core has refused control and bidi characters in it).
      const shown = oneLine(describeScope(scope));
      if (!flag(context.values, 'yes')) {
        if (context.globals.json) context.printJson({ deleted: 0, wouldDelete: count, scope });
        else if (count === 0) context.print(`no memories in scope ${shown}: nothing to forget.`);
        else context.print(`${memoriesText(count)} in scope ${shown} would be forgotten: run again with --yes to delete them.`);
        return count === 0 ? undefined : EXIT_CODES.USAGE;
      }
      const deleted = await memory.deleteAll(scope);
      if (context.globals.json) return context.printJson({ deleted, scope });
      context.print(`forgot ${memoriesText(deleted)} in scope ${shown}`);
      return undefined;
    }, SCOPE_DELETIONS);
  },
};

