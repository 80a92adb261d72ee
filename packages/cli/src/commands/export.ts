import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { flag, requirePositionals, stringOption, type CommandSpec } from '../command.js';
import { InterruptedError } from '../exit-codes.js';
import { memoriesText } from '../format.js';
import type { OutputStream } from '../io.js';
import { exportMemories } from '../transfer.js';
import { withMemory } from './shared.js';

export const exportCommand: CommandSpec = {
  name: 'export',
  summary: 'write every memory with its whole history as JSON Lines',
  usage: ['export [--output <file>] [--vectors] [options]'],
  description: [
    'Writes a header line (store, embedder, scope, count) and then one line per memory: the record',
    'and every version of its history, oldest first; with --vectors also its vector, so that an import',
    'into a store with the same embedder needs no embedding. Without --output it writes to stdout.',
    'With a scope, only that scope is exported. "memloom import" reads the file into any store.',
  ].join('\n'),
  options: {
    output: { type: 'string', short: 'o', value: 'file', description: 'write here (atomically: the file appears when the export is complete)' },
    vectors: { type: 'boolean', description: 'include each memory\'s vector' },
  },
  examples: ['memloom export -o backup.jsonl', 'memloom export --user alice --vectors > alice.jsonl', 'memloom export --store markdown:./notes | memloom import - --store sqlite:./memory.db'],
  async run(context) {
    requirePositionals(context, []);
    const output = stringOption(context.values, 'output');
    const withVectors = flag(context.values, 'vectors');
    await withMemory(context, async ({ memory }) => {
      const path = output ? resolve(context.io.cwd, output) : undefined;
      const temporary = path ? `${path}.${process.pid}.partial` : undefined;
      const file = temporary ? createWriteStream(temporary) : undefined;
      const sink: OutputStream = file ?? context.io.stdout;
      const progress = context.progress('export');
      let exported: number;
      try {
        ({ exported } = await exportMemories(memory, {
          scope: context.globals.scope,
          vectors: withVectors,
          write: (text) => write(sink, text),
          onProgress: (done, total) => progress.update(done, total),
          ...(context.io.signal ? { signal: context.io.signal } : {}),
        }));
        if (file) {
          file.end();
          await once(file, 'finish');
          await rename(temporary!, path!);
        }
      } catch (error) {
        if (file) {
          file.destroy();
          await rm(temporary!, { force: true });
        }
        if (context.io.signal?.aborted) throw new InterruptedError(`export interrupted${path ? `; ${path} was not written` : ''}`);
        throw error;
      } finally {
        progress.finish();
      }
      if (path) {
        if (context.globals.json) context.printJson({ exported, file: path, vectors: withVectors });
        else context.print(`exported ${memoriesText(exported)} to ${path}`);
      } else {
        context.note(`exported ${memoriesText(exported)}`);
      }
    });
  },
};

/** Write, waiting when a real stream asks us to (a pipe to a slow reader). */
async function write(sink: OutputStream, text: string): Promise<void> {
  if (sink.write(text) === false && typeof (sink as Writable).once === 'function') await once(sink as Writable, 'drain');
}
