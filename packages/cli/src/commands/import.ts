import { createReadStream, existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { addAbortSignal, type Readable } from 'node:stream';
import { MemloomError, timeOrderedId, type Memory } from '@memloom/core';
import { choiceOption, flag, numberOption, requirePositionals, stringOption, type CommandContext, type CommandSpec } from '../command.js';
import { InterruptedError, UsageError } from '../exit-codes.js';
import type { ExportHeader } from '../export-format.js';
import { memoriesText, oneLine } from '../format.js';
import { emptyCounts, type ImportCounts, type OnConflict } from '../import-exact.js';
import { yieldToSignals } from '../io.js';
import { importMemories } from '../transfer.js';
import { CHECKPOINT_HEAD, failpoint, IMPORTS, inputPath, openStore, refuseUnreadable, removeLeftovers, withMemory, writeCheckpoint } from './shared.js';

export const importCommand: CommandSpec = {
  name: 'import',
  summary: 'read an export into the configured store (resumable, with progress and counts)',
  usage: ['import <file> [options]', 'import - [options]          (the export on stdin)'],
  description: [
    'By default every memory is written as it was exported: same id, same fields, the whole history.',
    'A memory already in the store at the same revision is kept as it is (so running the import again',
    'after an interruption resumes it); one the store holds at an earlier revision of the same history is',
    'merged: the missing versions are appended. One that differs is a conflict: --on-conflict decides.',
    'Vectors in the file are used when they come from the configured embedder; otherwise the content is',
    'embedded again.',
    '',
    'With --merge, each memory\'s content is instead added through the strategy engine, as "memloom add"',
    'would: merged into a similar memory, kept beside a related one, or created. Progress is kept in a',
    'checkpoint file, so an interrupted --merge import resumes where it stopped. Once it is complete, running',
    'it again merges every memory of the file again (a new version, weight boosted, as saying it again would);',
    'a copy (without --merge) run again keeps what is there.',
    '',
    'Prints how many memories were created, merged and kept (and skipped or replaced on conflict). A',
    'file holding fewer memories than its header says (cut short) is imported as far as it goes, then',
    'the command says so and exits 2. A failure part-way says how many memories were imported before it.',
    'A memory twice in the file is imported once when both lines are the same; two different lines for it',
    'are exit 2, naming both (whichever batches they are in).',
  ].join('\n'),
  options: {
    'on-conflict': { type: 'string', value: 'what', description: 'error (default: stop, exit 5), skip (keep the store\'s), replace (take the file\'s)' },
    merge: { type: 'boolean', description: 'add each memory through the strategy engine instead of copying it' },
    checkpoint: { type: 'string', value: 'file', description: 'with --merge: where progress is kept (default <file>.import-checkpoint.json)' },
    'batch-size': { type: 'string', value: 'n', description: 'memories per store write (default 100)' },
  },
  examples: [
    'memloom import backup.jsonl',
    'memloom import backup.jsonl --store markdown:./memory',
    'memloom import team-notes.jsonl --merge --user alice',
    'memloom export --store sqlite:./old.db | memloom import - --store qdrant:http://localhost:6333',
  ],
  async run(context) {
    const [input] = requirePositionals(context, ['file']);
    const merge = flag(context.values, 'merge');
    const onConflict = choiceOption(context.values, 'on-conflict', ['error', 'skip', 'replace'] as const) ?? 'error';
    if (merge && context.values['on-conflict'] !== undefined) throw new UsageError('--on-conflict applies to copying; --merge never conflicts');
    if (!merge && context.values.checkpoint !== undefined) throw new UsageError('--checkpoint goes with --merge (a plain import resumes by itself)');
    const batchSize = numberOption(context.values, 'batch-size', { min: 1, max: 10_000, integer: true }) ?? 100;
    const path = inputPath(context, input!);
    const source = path ?? 'stdin';
    const given = stringOption(context.values, 'checkpoint');
    const checkpointPath = merge ? (given ? resolve(context.io.cwd, given) : path ? `${path}.import-checkpoint.json` : undefined) : undefined;
    if (merge && !checkpointPath) context.note('Reading stdin without --checkpoint: an interrupted --merge import cannot resume.');

    const scope = context.globals.scope;

    if (checkpointPath) await removeLeftovers(context, checkpointPath, 'tmp', 'an import', CHECKPOINT_HEAD);

    return withMemory(context, async (opened) => {
      const { memory } = opened;
      const progress = context.progress('import');
      // Memory lines of the file handled so far (after each batch, or each memory with --merge), to say how far an interruption got.
      let handled: number | undefined;
      let header: ExportHeader | undefined;
      const resumed = checkpointPath && existsSync(checkpointPath) ? await resumeFrom(checkpointPath, path, memory, context) : undefined;
      // The id the next memory a --merge creates gets, in the checkpoint before it is written (see resumeFrom).
      const ids = { next: timeOrderedId(memory.clock.now()) };
      const save = (position: number, read: ExportHeader, counts: ImportCounts) =>
        checkpointPath ? writeCheckpoint<Checkpoint>(checkpointPath, { source, exportedAt: read.exportedAt, done: position, counts, next: ids.next }) : undefined;
      // Created just before reading starts: readline drops lines emitted before it is iterated. Ctrl-C ends a wait
      // for stdin's next line at once (a file never keeps it waiting): one Ctrl-C stops `import -` left waiting at a terminal.
      const { signal } = context.io;
      const stream: Readable = path ? createReadStream(path) : signal ? addAbortSignal(signal, context.io.stdin) : context.io.stdin;
      const lines = createInterface({ input: stream, crlfDelay: Infinity });
      let result;
      // Memories of the file imported so far (after each batch), to say what stays in the store after a failure.
      let imported = 0;
      try {
        result = await importMemories(memory, {
          lines,
          source,
          mode: merge ? 'merge' : 'copy',
          onConflict: onConflict as OnConflict,
          scope,
          batchSize,
          ...(resumed ? { skip: resumed.done, counts: resumed.counts } : {}),
          ...(checkpointPath ? { generateId: () => ids.next } : {}),
          // Before the first write, not before the input is read: an import of a file that is not an export creates no
          // store. Then a --merge import's checkpoint names the id its first memory gets, unless onProgress wrote it already.
          onOpen: async () => {
            refuseUnreadable(context, opened, IMPORTS);
            if (handled === undefined) await save(resumed?.done ?? 0, header!, resumed?.counts ?? emptyCounts('merge'));
          },
          onHeader: async (read) => {
            header = read;
            if (resumed && resumed.exportedAt !== read.exportedAt) {
              throw new UsageError(`${checkpointPath} belongs to another export (made ${resumed.exportedAt}); delete it to start over`);
            }
          },
          onProgress: async (position, read, counts) => {
            imported = counts.done;
            handled = position;
            if (checkpointPath) {
              failpoint(context, 'import-merged', position);
              ids.next = timeOrderedId(memory.clock.now());
              await save(position, read, counts);
            }
            progress.update(position, read.count, countsText(counts));
          },
          ...(signal ? { signal } : {}),
        });
        // Ctrl-C on `memloom export | memloom import -` can end the export first: stdin then ends early because of the
        // interruption, not because the file is cut short. One turn of the event loop lets a pending Ctrl-C arrive.
        if (result.read < result.header.count && signal) {
          await yieldToSignals();
          signal.throwIfAborted();
        }
      } catch (error) {
        // The one place an interruption is answered: while reading or writing, or before a short read is taken for a cut file.
        if (signal?.aborted) throw interrupted(handled, header, { merge, checkpointPath, stdin: !path, resumed: resumed !== undefined });
        throw withImported(error, imported);
      } finally {
        progress.finish();
        lines.close();
      }
      const { counts, read } = result;
      const expected = result.header.count;
      const cutShort = read < expected;
      // A --merge import of a file cut short keeps its checkpoint: the complete file then resumes after what was added.
      const keepCheckpoint = cutShort && merge;
      if (checkpointPath && !keepCheckpoint) await rm(checkpointPath, { force: true });
      if (context.globals.json) context.printJson({ source, ...counts, ...(cutShort ? { read, expected } : {}) });
      else {
        context.print(`imported ${memoriesText(counts.done)} from ${oneLine(source)}: ${countsText(counts)}`);
        if (counts.outOfScope > 0) context.print(context.dim(`${memoriesText(counts.outOfScope)} outside the scope ${counts.outOfScope === 1 ? 'was' : 'were'} left out`));
        // Only memories written were embedded: none when every one was already there.
        const written = counts.mode === 'merge' ? counts.done : counts.created + counts.merged + counts.replaced;
        if (written > 0 && result.header.embedder.id !== memory.embedder.id) {
          context.print(context.dim(`embedded again with ${oneLine(memory.embedder.id)} (the export came from ${oneLine(result.header.embedder.id)})`));
        }
      }
      if (cutShort) {
        // Exit 2 (the input is wrong): what the file held is imported, but a script must not take it for the whole export.
        const resume = keepCheckpoint ? `; progress is kept in ${checkpointPath}: import the complete file with the same command to add the rest` : '';
        throw new MemloomError({
          code: 'INVALID_INPUT',
          backend: 'cli',
          message: `${source} holds ${memoriesText(read)}, but its header says ${expected}: the file looks cut short (or memories were deleted while it was exported); the ${read} it holds were imported${resume}`,
          details: { source, read, expected, imported: counts.done },
        });
      }
      return undefined;
    }, IMPORTS);
  },
};

export function countsText(counts: ImportCounts): string {
  const parts =
    counts.mode === 'merge'
      ? [`${counts.merged} merged`, `${counts.kept} kept beside a similar memory`, `${counts.created} created`]
      : [`${counts.created} created`, `${counts.merged} merged (newer history)`, `${counts.kept} kept (already there)`];
  if (counts.skipped > 0) parts.push(`${counts.skipped} skipped (conflict)`);
  if (counts.replaced > 0) parts.push(`${counts.replaced} replaced (conflict)`);
  return parts.join(', ');
}

interface Checkpoint {
  source: string;
  exportedAt: string;
  /** Memory lines of the file handled so far, in file order. */
  done: number;
  counts: ImportCounts;
  /** The id the memory of line `done + 1` gets if it is a new one: written before it is added. */
  next?: string;
}

/** The skip and counts of an interrupted --merge import of the same export. */
async function resumeFrom(path: string, source: string | undefined, memory: Memory, context: CommandContext): Promise<Checkpoint> {
  let checkpoint: Checkpoint;
  try {
    checkpoint = JSON.parse(await readFile(path, 'utf8')) as Checkpoint;
  } catch {
    throw new UsageError(`${path} is not an import checkpoint; delete it to start over`);
  }
  if (source && checkpoint.source !== source) throw new UsageError(`${path} belongs to the import of ${checkpoint.source}; delete it to start over`);
  // Killed after a memory was added but before the checkpoint said so: the memory it made has the id the checkpoint names.
  // (One merged into a memory the store held makes none: that one is merged again, a version more on the memory it went to.)
  if (checkpoint.next) {
    await openStore(memory);
    if (await memory.store.get(checkpoint.next)) {
      checkpoint.done++;
      checkpoint.counts.done++;
      checkpoint.counts.created++; // or kept beside a similar memory: the store does not say which
    }
  }
  context.note(`Resuming from ${oneLine(path)}: ${memoriesText(checkpoint.done)} of the file ${checkpoint.done === 1 ? 'was' : 'were'} handled before.`);
  return checkpoint;
}

/** A failure part-way says how many memories were imported before it (they stay in the store). */
function withImported(error: unknown, imported: number): unknown {
  if (imported === 0 || error instanceof UsageError) return error;
  const before = `; ${memoriesText(imported)} before it ${imported === 1 ? 'was' : 'were'} imported and stay in the store`;
  if (MemloomError.isInstance(error)) {
    return new MemloomError({
      code: error.code,
      backend: error.backend,
      message: `${error.reason}${before}`,
      details: { ...error.details, imported },
      cause: error,
    });
  }
  return new Error(`${error instanceof Error ? error.message : String(error)}${before}`, { cause: error });
}

/** What an interrupted import says: how far it got, and how to go on (from stdin, the same export is piped again). */
function interrupted(
  position: number | undefined,
  header: ExportHeader | undefined,
  run: { merge: boolean; checkpointPath: string | undefined; stdin: boolean; resumed: boolean },
): InterruptedError {
  // This run wrote nothing (no batch, no merge) and continues no checkpoint: there is nothing to resume.
  if (position === undefined && !run.resumed) return new InterruptedError('import interrupted; nothing was imported');
  const again = `run the same command again${run.stdin ? ' with the same export on stdin' : ''} to resume`;
  const how = run.merge
    ? run.checkpointPath
      ? `progress is in ${run.checkpointPath}: ${again}`
      : 'this --merge import read stdin without --checkpoint and cannot resume'
    : `${again} (memories already imported are kept)`;
  const where = position === undefined ? '' : ` after ${position}${header ? ` of ${header.count}` : ''} memories`;
  return new InterruptedError(`import interrupted${where}; ${how}`);
}
