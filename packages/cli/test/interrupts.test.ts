import type { WriteStream } from 'node:fs';
import { readdirSync, writeFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { join } from 'node:path';
import type { GenerateRequest, LanguageModel } from '@memloom/core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EXIT_CODES } from '../src/index.js';
import { StopSignal } from '../src/exit-codes.js';
import { json, run, storedIn, syntheticExport, tempFolder } from './helpers.js';

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

// A language model for the memories the CLI opens, when a test sets one (the CLI's configuration names none).
const configured = vi.hoisted(() => ({ model: undefined as LanguageModel | undefined }));
vi.mock('memloom', async (importOriginal) => {
  const actual = await importOriginal<typeof import('memloom')>();
  const createMemory: typeof actual.createMemory = (options = {}, resolved) =>
    actual.createMemory({ ...options, ...(configured.model ? { languageModel: configured.model } : {}) }, resolved);
  return { ...actual, createMemory };
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
  configured.model = undefined;
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
    expect(result.stderr).toContain(`memloom: cannot write ${join(dir, 'no-such-folder', 'out.jsonl')}: ENOENT: no such file or directory\n`);
  });

  it('an export that is not stopped is renamed into place whole', async () => {
    expect((await run(dir, ['import', '-', '--quiet'], { stdin: syntheticExport(1500).text })).code).toBe(0);
    const result = await run(dir, ['export', '-o', 'out.jsonl', '--quiet']);
    expect(result.code).toBe(0);
    expect(readdirSync(dir).filter((name) => name.startsWith('out.jsonl'))).toEqual(['out.jsonl']);
  });
});

/**
 * A model whose calls wait for the test. Ctrl-C comes during call number `stopAt` (0-based): the
 * calls before are answered with `answer`. A command that does not pass its interrupt signal on
 * leaves that call's own signal alone: the model then answers it, and every later call, as a real
 * one would, and the command goes on (so that the test fails instead of hanging).
 */
function modelStoppedAt(stopAt: number, stop: AbortController, answer: string) {
  const requests: GenerateRequest[] = [];
  const model: LanguageModel = {
    id: 'test/stopped-model',
    generate: (request) =>
      new Promise<string>((resolve) => {
        requests.push(request);
        if (requests.length - 1 < stopAt) return resolve(answer);
        if (requests.length - 1 === stopAt) stop.abort();
        if (!request.signal?.aborted) resolve(answer);
      }),
  };
  return { model, requests };
}

describe('Ctrl-C while a command waits for stdin', () => {
  it.each(['add', 'add-turns'])('%s - stops at the first Ctrl-C, storing nothing, even if stdin then brings text', async (command) => {
    const stdin = new PassThrough(); // a terminal nobody has typed in yet
    const stop = new AbortController();
    const running = run(dir, [command, '-', '--user', 'ana'], { stdin, signal: stop.signal });
    stop.abort();
    stdin.end('Ana adopted a puppy named Rex\n');
    const result = await running;
    expect(result.code).toBe(EXIT_CODES.INTERRUPTED);
    expect(result.stderr).toBe(`memloom: ${command} interrupted while reading stdin; nothing was stored\n`);
    expect(await storedIn(dir, 'memory.db')).toEqual([]);
  });
});

describe('Ctrl-C while import - waits for its first line', () => {
  // Without it the command waits on (a second Ctrl-C ends the process): the test then fails on its timeout.
  it('stops at the first Ctrl-C: exit 130, nothing imported', { timeout: 20_000 }, async () => {
    const stdin = new PassThrough(); // a terminal nobody has typed in yet, and never does
    const stop = new AbortController();
    const running = run(dir, ['import', '-'], { stdin, signal: stop.signal });
    stop.abort();
    const result = await running;
    expect(result.code).toBe(EXIT_CODES.INTERRUPTED);
    // Not "run the same command again to resume": there is nothing to resume.
    expect(result.stderr).toBe('memloom: import interrupted; nothing was imported\n');
    expect(await storedIn(dir, 'memory.db')).toEqual([]);
  });
});

describe('Ctrl-C inside a session or a page, with a language model', () => {
  it('add-turns stops during a turn\'s model call: exit 130 saying how many turns of the session were stored', async () => {
    const stop = new AbortController();
    const { model, requests } = modelStoppedAt(0, stop, 'Ana adopted a puppy named Rex.');
    configured.model = model;
    // The second turn restates the first: its merge asks the model, and Ctrl-C comes while it answers.
    const turns = ['Ana adopted a puppy named Rex', 'Ana adopted a puppy named Rex', 'Ana keeps bees in the garden', '', 'Ben plays the cello'].join('\n');
    const result = await run(dir, ['add-turns', '-', '--user', 'ana'], { stdin: turns, signal: stop.signal });
    expect(result.code).toBe(EXIT_CODES.INTERRUPTED);
    expect(result.stderr).toContain('add-turns interrupted in session 1 of 2 (lines 1-3) after 1 of its 3 turns; 1 turn was stored in all and stays stored');
    // The merge's model call was told to stop.
    expect(requests).toHaveLength(1);
    expect(requests[0]?.signal?.aborted).toBe(true);
    configured.model = undefined;
    const stored = json(await run(dir, ['list', '--user', 'ana', '--json']));
    expect(stored.map((memory: { content: string; revision: number }) => [memory.content, memory.revision])).toEqual([['Ana adopted a puppy named Rex', 1]]);
  });

  it('add-turns stops between the turns of a session (no model): exit 130, the turns before stay stored', async () => {
    const stop = new AbortController();
    const turns = Array.from({ length: 10 }, (_, index) => `Turn ${index} about subject ${index}`).join('\n');
    const result = await run(dir, ['add-turns', '-', '--user', 'ana'], {
      stdin: turns,
      signal: stop.signal,
      onStderr: (text) => {
        if (text.startsWith('add-turns 3/10')) stop.abort();
      },
    });
    expect(result.code).toBe(EXIT_CODES.INTERRUPTED);
    expect(result.stderr).toContain('add-turns interrupted in session 1 of 1 (lines 1-10) after 3 of its 10 turns; 3 turns were stored in all and stay stored');
    expect(json(await run(dir, ['list', '--user', 'ana', '--json']))).toHaveLength(3);
  });

  it('stopped by SIGTERM, the JSON error says exit 143, as the process exits', async () => {
    // --json shows no progress to stop at: the signal has come before the command starts (it stops reading stdin).
    const turns = Array.from({ length: 10 }, (_, index) => `Turn ${index} about subject ${index}`).join('\n');
    const result = await run(dir, ['add-turns', '-', '--user', 'ana', '--json'], { stdin: turns, signal: AbortSignal.abort(new StopSignal('SIGTERM')) });
    expect(result.code).toBe(EXIT_CODES.TERMINATED);
    expect(JSON.parse(result.stderr.trim().split('\n').at(-1)!).error).toMatchObject({ code: 'INTERRUPTED', exitCode: EXIT_CODES.TERMINATED });
  });

  it('import --merge stops during a merge\'s model call: that memory is not merged, and running it again starts with it', async () => {
    const { lines, text } = syntheticExport(3);
    writeFileSync(join(dir, 'notes.jsonl'), text);
    // The first memory of the file is already stored: adding it again merges, and the merge asks the model.
    const first = JSON.parse(lines[0]!).memory;
    expect((await run(dir, ['add', first.content, '--user', 'alice'])).code).toBe(0);
    const stop = new AbortController();
    const { model, requests } = modelStoppedAt(0, stop, `${first.content}, merged`);
    configured.model = model;
    const result = await run(dir, ['import', 'notes.jsonl', '--merge'], { signal: stop.signal });
    expect(result.code).toBe(EXIT_CODES.INTERRUPTED);
    expect(result.stderr).toContain('import interrupted');
    expect(requests[0]?.signal?.aborted).toBe(true);
    configured.model = undefined;
    const stored = json(await run(dir, ['list', '--user', 'alice', '--json']));
    expect(stored.map((memory: { content: string; revision: number }) => [memory.content, memory.revision])).toEqual([[first.content, 1]]);
    expect(json(await run(dir, ['import', 'notes.jsonl', '--merge', '--json', '--quiet']))).toMatchObject({ done: 3, merged: 1 });
  });

  it('maintain stops inside a page, during a compression: exit 130; the memories done before are written, the rest are left', async () => {
    expect((await run(dir, ['import', '-', '--quiet'], { stdin: syntheticExport(4).text })).code).toBe(0);
    const planned = json(await run(dir, ['maintain', '--now', '2024-03-01', '--dry-run', '--json']));
    expect(planned.changes.map((change: { toLevel?: string }) => change.toLevel)).toEqual(['tag', 'tag', 'tag', 'tag']);
    const stop = new AbortController();
    const { model, requests } = modelStoppedAt(1, stop, '#note');
    configured.model = model;
    const result = await run(dir, ['maintain', '--now', '2024-03-01'], { signal: stop.signal });
    expect(result.code).toBe(EXIT_CODES.INTERRUPTED);
    expect(result.stderr).toContain('maintain interrupted after 1 memory of 4 (their changes were written); run it again to maintain the rest');
    expect(requests).toHaveLength(2);
    expect(requests[1]?.signal?.aborted).toBe(true);
    configured.model = undefined;
    const levels = json(await run(dir, ['list', '--all', '--json'])).map((memory: { level: string }) => memory.level);
    expect(levels.sort()).toEqual(['full', 'full', 'full', 'tag']);
  });
});

describe('Ctrl-C on export | import -', () => {
  it('a stdin cut short by Ctrl-C (the export died first) is exit 130, not a file cut short', { timeout: 20_000 }, async () => {
    const { header, lines } = syntheticExport(5);
    const stop = new AbortController();
    // The export stopped after 3 of its 5 memories; Ctrl-C reaches the import once it has imported them.
    const result = await run(dir, ['import', '-', '--batch-size', '1'], {
      stdin: `${[header, ...lines.slice(0, 3)].join('\n')}\n`,
      signal: stop.signal,
      onStderr: (text) => {
        if (text.startsWith('import 3/5')) stop.abort();
      },
    });
    expect(stop.signal.aborted).toBe(true);
    expect(result.code).toBe(EXIT_CODES.INTERRUPTED);
    expect(result.stderr).toContain('memloom: import interrupted after 3 of 5 memories; run the same command again with the same export on stdin to resume');
    expect(result.stderr).not.toContain('cut short');
  });
});
