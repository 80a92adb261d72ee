import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { flag, requirePositionals, stringOption, type CommandSpec } from '../command.js';
import { InterruptedError, UsageError } from '../exit-codes.js';
import { memoriesText, oneLine } from '../format.js';
import type { OutputStream } from '../io.js';
import { exportMemories } from '../transfer.js';
import { EXPORTS, withMemory, effectiveScope, removeLeftovers } from './shared.js';

/** How an export's file starts (its header line): a partial file left by a killed export starts so too. */
const EXPORT_HEAD = '{"memloom":"export"';

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
    const path = output ? resolve(context.io.cwd, output) : undefined;
    // Opened before the store: a target that cannot be written (no such folder, no permission) fails at once, not after the export.
    if (path) await removeLeftovers(context, path, 'partial', 'an export', EXPORT_HEAD);
    const file = path ? await PartialFile.open(path, output!) : undefined;
    const progress = context.progress('export');
    let exported: number;
    try {
      exported = await withMemory(
        context,
        async (opened) =>
          (
            await exportMemories(opened.memory, {
              // The configured default scope fills the fields not given, as the listing does: the header says what was exported.
              scope: effectiveScope(context, opened),
              vectors: withVectors,
              write: file ? (text) => file.write(text) : (text) => write(context.io.stdout, text),
              onProgress: (done, total) => progress.update(done, total),
              ...(context.io.signal ? { signal: context.io.signal } : {}),
            })
          ).exported,
        EXPORTS,
      );
      if (file) await file.commit();
    } catch (error) {
      // Wait until the file is closed (its pending writes settled) and gone before saying so.
      if (file) await file.discard();
      if (context.io.signal?.aborted) throw new InterruptedError(`export interrupted${path ? `; ${path} was not written` : ''}`);
      throw error;
    } finally {
      progress.finish();
    }
    if (path) {
      if (context.globals.json) context.printJson({ exported, file: path, vectors: withVectors });
      else context.print(`exported ${memoriesText(exported)} to ${oneLine(path)}`);
    } else {
      context.note(`exported ${memoriesText(exported)}`);
    }
  },
};

/** Write, waiting when a real stream asks us to (a pipe to a slow reader). */
async function write(sink: OutputStream, text: string): Promise<void> {
  if (sink.write(text) === false && typeof (sink as Writable).once === 'function') await once(sink as Writable, 'drain');
}

/**
 * The file an export writes before it is renamed into place. A write stream destroyed while a
 * write is still in flight reports ERR_STREAM_DESTROYED as an 'error' event: every error is caught
 * here (the first one is what a write or the commit throws), and a discard waits for the stream to
 * close before the file is removed, so that Ctrl-C leaves neither a crash nor a partial file.
 * Its failures are said of the target (`aboutTarget`).
 */
class PartialFile {
  private readonly path: string;
  private readonly stream: WriteStream;
  private error: Error | undefined;

  /**
   * A temporary file beside `target`, opened (so that a folder that does not exist, or may not be
   * written, fails here), which `commit` moves there. `given` names the target as the user wrote it.
   */
  static async open(target: string, given: string): Promise<PartialFile> {
    if ((await stat(target).catch(() => undefined))?.isDirectory()) throw new UsageError(`${given} is a folder; give a file to write`);
    const file = new PartialFile(target);
    try {
      // Rejects with the stream's 'error' when the file cannot be made; nothing is left behind then.
      await once(file.stream, 'open');
    } catch (error) {
      throw aboutTarget(error, target);
    }
    return file;
  }

  private constructor(readonly target: string) {
    this.path = `${target}.${process.pid}.partial`;
    this.stream = createWriteStream(this.path);
    this.stream.on('error', (error) => {
      this.error ??= error;
    });
  }

  async write(text: string): Promise<void> {
    this.throwIfFailed();
    if (this.stream.write(text)) return;
    // Wait for the buffer to drain, or for the failure that means it never will.
    await new Promise<void>((resolvePromise, reject) => {
      const done = () => {
        this.stream.off('drain', done);
        this.stream.off('close', done);
        this.stream.off('error', done);
        if (this.error) reject(aboutTarget(this.error, this.target));
        else resolvePromise();
      };
      this.stream.on('drain', done).on('close', done).on('error', done);
    });
  }

  /** Flush, close and move the file to `target`. */
  async commit(): Promise<void> {
    this.throwIfFailed();
    try {
      this.stream.end();
      await finished(this.stream); // rejects with the stream's error
      if (!this.stream.closed) await once(this.stream, 'close');
      if (this.error) throw this.error;
      await rename(this.path, this.target);
    } catch (error) {
      throw aboutTarget(error, this.target);
    }
  }

  /** Stop writing, wait for the stream to close, and remove the file. Never throws for the stream. */
  async discard(): Promise<void> {
    if (!this.stream.closed) {
      // Not events.once(): it would reject on the 'error' a destroy causes while a write is in flight.
      const closed = new Promise<void>((resolvePromise) => this.stream.once('close', () => resolvePromise()));
      this.stream.destroy();
      await closed;
    }
    await rm(this.path, { force: true });
  }

  private throwIfFailed(): void {
    if (this.error) throw aboutTarget(this.error, this.target);
    if (this.stream.destroyed) throw new Error(`${this.target} was closed before the export was written`);
  }
}

/**
 * A failure of the file (opening, writing or renaming the temporary beside it), said of the file asked
 * for, with the system's reason: "cannot write /backups/out.jsonl: ENOENT: no such file or directory".
 * The temporary is gone by then, and only a way to write the target whole. Code and syscall are kept.
 */
function aboutTarget(error: unknown, target: string): unknown {
  const { code, syscall } = error as NodeJS.ErrnoException;
  if (!(error instanceof Error) || typeof syscall !== 'string') return error;
  // A system error's message ends with its call and paths: ", open '/backups/out.jsonl.123.partial'".
  const reason = error.message.replace(new RegExp(`, ${syscall}( '.*)?$`, 'u'), '');
  return Object.assign(new Error(`cannot write ${target}: ${reason}`, { cause: error }), { code, syscall, path: target });
}
