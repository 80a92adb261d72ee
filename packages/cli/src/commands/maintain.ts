import { yieldToSignals } from '../io.js';
import type { MemoryRecord } from 'memloom';
import { dateOption, flag, requirePositionals, type CommandSpec } from '../command.js';
import { InterruptedError } from '../exit-codes.js';
import { memoriesText, oneLine } from '../format.js';
import { EXISTING_STORE, scopeOption, withMemory } from './shared.js';

/** How many changes are listed without --all. */
const LISTED = 50;

export const maintainCommand: CommandSpec = {
  name: 'maintain',
  summary: 'compress, decay and delete by age (or, with --dry-run, say what would happen and why)',
  usage: ['maintain [--now <date>] [--dry-run] [options]'],
  description: [
    'Passive maintenance (seeds 004 and 002): by age since the last update, full text is compressed',
    'to summary (7 days), tag (30), trace (90) and archive (180); weight decays as w0 / (1 + 0.01 days);',
    'episodes lose importance and go after 14 days, facts fade below 0.3 and go. Timestamps are never',
    'refreshed, and the full text stays in the history. --dry-run writes nothing. Ctrl-C (or SIGTERM)',
    'stops inside a page, during a compression too: the changes decided for the memories done by then',
    'are written, and running it again maintains the rest.',
  ].join('\n'),
  options: {
    now: { type: 'string', value: 'date', description: 'maintain as if it were this date (default now)' },
    'dry-run': { type: 'boolean', description: 'report what would be compressed, decayed or deleted and why; change nothing' },
    all: { type: 'boolean', description: `list every change with the memory's text (default: the first ${LISTED}, with the text when the scope holds at most ${LISTED} memories)` },
  },
  examples: ['memloom maintain --dry-run', 'memloom maintain --now 2025-01-01 --user alice', 'memloom maintain --dry-run --all', 'memloom maintain --json'],
  async run(context) {
    requirePositionals(context, []);
    const now = dateOption(context.values, 'now');
    const dryRun = flag(context.values, 'dry-run');
    const all = flag(context.values, 'all');
    const scoped = scopeOption(context);
    await withMemory(context, async ({ memory }) => {
      // The memories' text is read first (the report names ids, and deleted memories are gone
      // afterwards), but only when every change will be listed: a large store is not read whole.
      const withText = !context.globals.json && (all || (await memory.count(scoped)) <= LISTED);
      const before = withText ? new Map((await memory.list(scoped)).map((record) => [record.id, record])) : new Map<string, MemoryRecord>();
      const progress = context.progress('maintain');
      const { signal } = context.io;
      let done: { memories: number; total: number } | undefined;
      let report;
      try {
        report = await memory.maintain({
          ...scoped,
          ...(now ? { now } : {}),
          dryRun,
          // The report holds only what will be printed: one entry per change adds up in a large store.
          ...(all || context.globals.json ? {} : { changesLimit: LISTED }),
          // Ctrl-C stops inside a page, even during a compression's model call; what was decided for the memories
          // done by then is written. Maintenance is idempotent: running it again finishes the rest.
          ...(signal ? { signal } : {}),
          onProgress: async (memories, total) => {
            done = { memories, total };
            progress.update(memories, total);
            await yieldToSignals();
          },
          // Progress inside a page (up to 10,000 memories), shown as often as Progress shows it (not counted in `done`: not written yet).
          onScan: async (memories, total) => {
            progress.update(memories, total);
            await yieldToSignals();
          },
        });
      } catch (error) {
        if (signal?.aborted) throw new InterruptedError(interruptedText(done, dryRun));
        throw error;
      } finally {
        progress.finish();
      }
      if (context.globals.json) return context.printJson(report);
      const verb = dryRun ? 'would be' : 'were';
      context.print(
        `${context.bold(dryRun ? 'Dry run' : 'Maintained')} at ${report.now}: ${memoriesText(report.scanned)} scanned; ${report.compressed} ${verb} compressed, ${report.decayed} decayed, ${report.deleted} deleted; ${report.unchanged} unchanged.`,
      );
      if (report.conflicts > 0) context.print(`${report.conflicts} changed meanwhile and were left for the next pass.`);
      if (report.modelFallbacks > 0) context.print(`${report.modelFallbacks} compressions used the deterministic text (the model failed).`);
      for (const change of report.changes) {
        const record = before.get(change.id);
        const what = [
          change.fromLevel ? `${change.fromLevel} -> ${change.toLevel}` : '',
          change.weight ? `weight ${change.weight.from.toFixed(3)} -> ${change.weight.to.toFixed(3)}` : '',
          change.importance ? `importance ${change.importance.from.toFixed(2)} -> ${change.importance.to.toFixed(2)}` : '',
        ]
          .filter(Boolean)
          .join(', ');
        context.print(`${context.bold(change.action.padEnd(8))} ${oneLine(change.id)}${what ? `  ${what}` : ''}`);
        if (record) context.print(`    ${oneLine(record.content)}`);
        if (change.content) context.print(context.dim(`    now: ${oneLine(change.content)}`));
        context.print(context.dim(`    why: ${oneLine(change.reasons.join('; '))}`));
      }
      if (report.changesOmitted > 0) {
        context.print(context.dim(`${report.changesOmitted} more changes not listed: --all lists every one with its text, --json gives the whole report.`));
      }
      // Memories in a file the store cannot read are left as they are (it is never written): said after the report, exit 1.
    }, { ...(dryRun ? EXISTING_STORE : {}), unreadable: 'fail' });
  },
};

/** What an interrupted pass did, and what to do next. */
function interruptedText(done: { memories: number; total: number } | undefined, dryRun: boolean): string {
  if (!done || done.memories === 0) return 'maintain interrupted before any memory was maintained; run it again to maintain them';
  return `maintain interrupted after ${memoriesText(done.memories)} of ${done.total}${dryRun ? '' : ' (their changes were written)'}; run it again to maintain the rest`;
}
