import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EXIT_CODES } from '../src/index.js';
import { BIN, json, run, storedIn, syntheticExport, tempFolder } from './helpers.js';

let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempFolder('memloom-import-checks-'));
});
afterEach(() => cleanup());

/** A one-memory export whose memory (and its version's `after`) is changed by `change`. */
function exportWith(change: (record: Record<string, unknown>) => Record<string, unknown>, changeVersionOnly = false): string {
  const { header, lines } = syntheticExport(1);
  const line = JSON.parse(lines[0]!);
  const changed = change({ ...line.memory });
  if (!changeVersionOnly) line.memory = changed;
  line.versions[0].after = changed;
  return `${header}\n${JSON.stringify(line)}\n`;
}

/** Memories in the SQLite store `sqlite:./<file>` of the test folder (none when it was never made). */
async function storedCount(store: string): Promise<number> {
  return (await storedIn(dir, store.replace(/^sqlite:\.\//, ''))).length;
}

describe('import checks each memory as core would', () => {
  it('refuses blank content, weight 7, importance -1, a 5,000-character userId and empty tags: exit 2 naming the line and fields, nothing stored', async () => {
    writeFileSync(
      join(dir, 'bad.jsonl'),
      exportWith((record) => ({ ...record, content: '', weight: 7, importance: -1, scope: { userId: 'x'.repeat(5000) }, tags: ['', 'y'.repeat(2000)] })),
    );
    const result = await run(dir, ['import', 'bad.jsonl', '--store', 'sqlite:./b.db']);
    expect(result.code).toBe(EXIT_CODES.USAGE);
    expect(result.stderr).toContain('line 2');
    for (const field of ['memory.content: is empty', 'memory.weight', 'memory.importance', 'memory.scope', 'memory.tags.0', 'memory.tags.1']) expect(result.stderr).toContain(field);
    expect(result.stderr).toContain('the limit is 256');
    expect(await storedCount('sqlite:./b.db')).toBe(0);
  });

  it('takes a memory with more tags than limits.maxTags, or an importance above 100, which a store may hold from earlier versions', async () => {
    const tags = Array.from({ length: 80 }, (_, index) => `tag-${index}`);
    writeFileSync(join(dir, 'tags.jsonl'), exportWith((record) => ({ ...record, tags, importance: 150 })));
    expect((await run(dir, ['import', 'tags.jsonl', '--store', 'sqlite:./t.db'])).code).toBe(0);
    expect(await storedCount('sqlite:./t.db')).toBe(1);
  });

  it("checks each version's record too, and content against the configured limits.maxContentLength", async () => {
    writeFileSync(join(dir, 'version.jsonl'), exportWith((record) => ({ ...record, content: '   ' }), true));
    const version = await run(dir, ['import', 'version.jsonl', '--store', 'sqlite:./v.db']);
    expect(version.code).toBe(EXIT_CODES.USAGE);
    expect(version.stderr).toContain('versions.0.after.content: is empty');

    writeFileSync(join(dir, 'memloom.config.json'), JSON.stringify({ store: 'sqlite:./l.db', limits: { maxContentLength: 20 } }));
    writeFileSync(join(dir, 'long.jsonl'), exportWith((record) => record));
    const long = await run(dir, ['import', 'long.jsonl']);
    expect(long.code).toBe(EXIT_CODES.USAGE);
    expect(long.stderr).toContain('the limit is 20 (limits.maxContentLength)');
    expect(await storedCount('sqlite:./l.db')).toBe(0);
  });

  it('--merge keeps each memory in its own scope: the configured default scope is not merged in', async () => {
    writeFileSync(join(dir, 'memloom.config.json'), JSON.stringify({ store: 'sqlite:./memory.db', scope: { userId: 'alice' } }));
    writeFileSync(join(dir, 'ops.jsonl'), syntheticExport(1, { agentId: 'ops' }).text);
    const imported = await run(dir, ['import', 'ops.jsonl', '--merge', '--json']);
    expect(imported.code).toBe(0);
    const [stored] = json(await run(dir, ['list', '--no-config', '--store', 'sqlite:./memory.db', '--json']));
    expect(stored.scope).toEqual({ agentId: 'ops' });
  });

  it('a file cut mid-line imports every complete memory before the cut, says how many, and exits 2', async () => {
    const { header, lines } = syntheticExport(150);
    const last = lines[149]!;
    writeFileSync(join(dir, 'cut.jsonl'), `${[header, ...lines.slice(0, 149), last.slice(0, last.length / 2)].join('\n')}`);
    const result = await run(dir, ['import', 'cut.jsonl', '--store', 'sqlite:./c.db']);
    expect(result.code).toBe(EXIT_CODES.USAGE);
    expect(result.stderr).toContain('line 151');
    expect(result.stderr).toContain('149 memories before it were imported');
    expect(await storedCount('sqlite:./c.db')).toBe(149);
  });
});

describe('--json', () => {
  it('keeps stderr pure JSON: no notes or progress, only the error', async () => {
    const { text } = syntheticExport(300);
    const note = await run(dir, ['import', '-', '--merge', '--store', 'sqlite:./n.db', '--json'], { stdin: text });
    expect(note.code).toBe(0);
    expect(note.stderr).toBe('');

    writeFileSync(join(dir, 'bad.jsonl'), `${text}{"memory":{"id":"x"}}\n`);
    const failed = await run(dir, ['import', 'bad.jsonl', '--store', 'sqlite:./x.db', '--json']);
    expect(failed.code).toBe(EXIT_CODES.USAGE);
    expect(JSON.parse(failed.stderr)).toMatchObject({ error: { code: 'INVALID_INPUT', exitCode: EXIT_CODES.USAGE } });
  });
});

describe('Ctrl-C in add-turns and maintain', () => {
  it('add-turns stops between sessions: exit 130 saying how many turns were stored', async () => {
    const stop = new AbortController();
    stop.abort();
    // From a file: read from stdin, the transcript would be interrupted while being read, before any session.
    writeFileSync(join(dir, 'chat.txt'), 'one turn about tea\n\nanother about jazz\n');
    const result = await run(dir, ['add-turns', 'chat.txt', '--user', 'x', '--store', 'sqlite:./t.db'], { signal: stop.signal });
    expect(result.code).toBe(EXIT_CODES.INTERRUPTED);
    expect(result.stderr).toContain('add-turns interrupted after 0 of 2 sessions');
    expect(await storedCount('sqlite:./t.db')).toBe(0);
  });

  it('maintain interrupted before it starts changes nothing: exit 130, run again to maintain', async () => {
    writeFileSync(join(dir, 'some.jsonl'), syntheticExport(3).text);
    expect((await run(dir, ['import', 'some.jsonl', '--store', 'sqlite:./m.db'])).code).toBe(0);
    const stop = new AbortController();
    stop.abort();
    const result = await run(dir, ['maintain', '--now', '2024-03-01', '--store', 'sqlite:./m.db'], { signal: stop.signal });
    expect(result.code).toBe(EXIT_CODES.INTERRUPTED);
    expect(result.stderr).toContain('maintain interrupted before any memory was maintained; run it again to maintain them');
    const levels = JSON.parse((await run(dir, ['list', '--all', '--json', '--store', 'sqlite:./m.db'])).stdout).map((memory: { level: string }) => memory.level);
    expect(levels).toEqual(['full', 'full', 'full']);
  });
});

describe('SIGTERM', () => {
  it('stops the binary as Ctrl-C does, between steps, with exit 143 (not killed outright)', async () => {
    const child = spawn(process.execPath, [BIN, 'add-turns', '-', '--user', 'x', '--store', 'sqlite:./term.db'], {
      cwd: dir,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, MEMLOOM_EMBEDDER: 'lexical' },
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
    const exited = once(child, 'exit');
    // add-turns reads the whole of stdin first: the signal arrives while it waits, and stops the wait.
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 1500));
    child.kill('SIGTERM');
    const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null];
    child.stdin.destroy();
    expect({ code, signal }).toEqual({ code: 143, signal: null });
    expect(stderr).toBe('memloom: add-turns interrupted while reading stdin; nothing was stored\n');
  }, 20_000);

  it('ends a command that never reaches a step where it stops (waiting on a store server) after a grace period, with exit 143', async () => {
    // A Qdrant server that takes the connection and never answers: list waits on it (the client's timeout is 30 s).
    const server = createServer(() => undefined);
    await new Promise<void>((resolvePromise) => server.listen(0, '127.0.0.1', resolvePromise));
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      const child = spawn(process.execPath, [BIN, 'list', '--no-config', '--store', `qdrant:${url}`], {
        cwd: dir,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, MEMLOOM_EMBEDDER: 'lexical' },
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
      const exited = once(child, 'exit');
      await once(server, 'connection');
      child.kill('SIGTERM');
      const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null];
      expect({ code, signal }).toEqual({ code: 143, signal: null });
      // Ended by the grace period, not by the command stopping (which says it was interrupted).
      expect(stderr).toBe('');
    } finally {
      server.close();
    }
  }, 20_000);
});
