import type { WriteStream } from 'node:fs';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EXIT_CODES } from '../src/index.js';
import { run, syntheticExport, tempFolder } from './helpers.js';

// The file streams `memloom export -o` opens, so that a test can wait for them to close.
const opened = vi.hoisted(() => [] as WriteStream[]);
vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>();
  const createWriteStream = ((...args: Parameters<typeof actual.createWriteStream>) => {
    const stream = actual.createWriteStream(...args);
    opened.push(stream);
    return stream;
  }) as typeof actual.createWriteStream;
  return { ...actual, default: { ...actual, createWriteStream }, createWriteStream };
});

let dir: string;
let cleanup: () => void;
const uncaught: unknown[] = [];
const onUncaught = (error: unknown) => void uncaught.push(error);
beforeEach(() => {
  ({ dir, cleanup } = tempFolder('memloom-interrupt-'));
  writeFileSync(join(dir, 'memloom.config.json'), JSON.stringify({ store: 'sqlite:./memory.db' }));
  opened.length = 0;
  uncaught.length = 0;
  process.on('uncaughtException', onUncaught);
});
afterEach(() => {
  process.off('uncaughtException', onUncaught);
  cleanup();
});

/** Resolves when the stream has closed (not events.once: that rejects on an 'error' event first). */
function closed(stream: WriteStream): Promise<void> {
  return stream.closed ? Promise.resolve() : new Promise((resolvePromise) => stream.once('close', () => resolvePromise()));
}

describe('export -o, stopped or failing part-way', () => {
  it('Ctrl-C between pages, with writes still in flight: exit 130, the stream closed, no partial file, no stray error', async () => {
    expect((await run(dir, ['import', '-', '--quiet'], { stdin: syntheticExport(1500).text })).code).toBe(0);
    const stop = new AbortController();
    // Ctrl-C right after the first page of 1,000 is written: the file's last writes are still under way.
    const result = await run(dir, ['export', '-o', 'out.jsonl'], {
      signal: stop.signal,
      onStderr: (text) => {
        if (text.startsWith('export 1000/1500')) stop.abort();
      },
    });
    expect(opened).toHaveLength(1);
    const closedWhenDone = opened[0]!.closed;
    await closed(opened[0]!);
    expect(uncaught).toEqual([]); // before: "Unhandled 'error' event … ERR_STREAM_DESTROYED" crashed the process
    expect(result.code).toBe(EXIT_CODES.INTERRUPTED);
    expect(result.stderr).toContain(`export interrupted; ${join(dir, 'out.jsonl')} was not written`);
    expect(closedWhenDone).toBe(true);
    expect(readdirSync(dir).filter((name) => name.startsWith('out.jsonl'))).toEqual([]);
  });

  it('a file that cannot be written is exit 1 naming it, not a crash', async () => {
    await run(dir, ['add', 'Bob keeps bees', '--user', 'bob']);
    const result = await run(dir, ['export', '-o', join('no-such-folder', 'out.jsonl')]);
    await Promise.all(opened.map(closed));
    expect(uncaught).toEqual([]);
    expect(result.code).toBe(EXIT_CODES.ERROR);
    expect(result.stderr).toContain(`ENOENT: no such file or directory, open '${join(dir, 'no-such-folder', 'out.jsonl')}`);
  });

  it('an export that is not stopped is renamed into place whole', async () => {
    expect((await run(dir, ['import', '-', '--quiet'], { stdin: syntheticExport(1500).text })).code).toBe(0);
    const result = await run(dir, ['export', '-o', 'out.jsonl', '--quiet']);
    expect(result.code).toBe(0);
    expect(readdirSync(dir).filter((name) => name.startsWith('out.jsonl'))).toEqual(['out.jsonl']);
  });
});
