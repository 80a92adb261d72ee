import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MemloomError, type MemloomErrorCode } from '@memloom/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EXIT_CODES, exitCodeFor } from '../src/index.js';
import { json, run, storedIn, syntheticExport, tempFolder } from './helpers.js';

// Each option a command documents changes what it does: a test per option that fails if the option is dropped.

let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempFolder());
  writeFileSync(join(dir, 'memloom.config.json'), JSON.stringify({ store: 'sqlite:./memory.db' }));
});
afterEach(() => cleanup());

const cli = (...args: string[]) => run(dir, args);
const contents = (records: { content: string }[]) => records.map((record) => record.content);

describe('exit codes by error code', () => {
  it('maps every MemloomError code as the exit code table says, and any other to 1', () => {
    // Every code: the compiler asks for a new one here.
    const expected: Record<MemloomErrorCode, number> = {
      INVALID_OPTIONS: EXIT_CODES.USAGE,
      INVALID_INPUT: EXIT_CODES.USAGE,
      EMPTY_CONTENT: EXIT_CODES.USAGE,
      CONTENT_TOO_LONG: EXIT_CODES.USAGE,
      INVALID_SCOPE: EXIT_CODES.USAGE,
      NOT_FOUND: EXIT_CODES.NOT_FOUND,
      VERSION_NOT_FOUND: EXIT_CODES.NOT_FOUND,
      INVALID_CONFIG: EXIT_CODES.CONFIG,
      MISSING_RESOURCE: EXIT_CODES.CONFIG,
      EMBEDDER_MISMATCH: EXIT_CODES.CONFIG,
      DIMENSION_MISMATCH: EXIT_CODES.CONFIG,
      NOT_SUPPORTED: EXIT_CODES.CONFIG,
      SCHEMA_TOO_NEW: EXIT_CODES.CONFIG,
      CONFLICT: EXIT_CODES.CONFLICT,
      STORE_ERROR: EXIT_CODES.ERROR,
      STORE_CORRUPT: EXIT_CODES.ERROR,
      INVALID_EMBEDDING: EXIT_CODES.ERROR,
      EMBEDDER_ERROR: EXIT_CODES.ERROR,
      MODEL_ERROR: EXIT_CODES.ERROR,
      TIMEOUT: EXIT_CODES.ERROR,
      CLOSED: EXIT_CODES.ERROR,
    };
    for (const [code, exit] of Object.entries(expected)) {
      expect(exitCodeFor(new MemloomError({ code: code as MemloomErrorCode, message: 'x' })), code).toBe(exit);
    }
    expect(exitCodeFor(new Error('a bug'))).toBe(EXIT_CODES.ERROR);
  });
});

describe('list options', () => {
  beforeEach(async () => {
    // 60 memories, one a minute apart: index 0 is the oldest.
    writeFileSync(join(dir, 'sixty.jsonl'), syntheticExport(60).text);
    expect((await cli('import', 'sixty.jsonl', '--quiet')).code).toBe(0);
  }, 60_000);
  const note = (index: number) => new RegExp(`^Note number ${index} about`);

  it('shows 50 by default, newest first; --asc oldest first; --offset skips that many; --all shows every one', async () => {
    const first = json(await cli('list', '--json'));
    expect(first).toHaveLength(50);
    expect(first[0].content).toMatch(note(59));
    const oldest = json(await cli('list', '--asc', '--limit', '2', '--json'));
    expect(contents(oldest)).toEqual([expect.stringMatching(note(0)), expect.stringMatching(note(1))]);
    const rest = json(await cli('list', '--offset', '55', '--json'));
    expect(rest).toHaveLength(5);
    expect(rest[0].content).toMatch(note(4));
    expect(json(await cli('list', '--offset', '0', '--limit', '1', '--json'))[0].content).toMatch(note(59));
    expect(json(await cli('list', '--all', '--json'))).toHaveLength(60);
  });
});

describe('search options', () => {
  it('--min-score drops the results scoring below it; --category keeps only those categories', async () => {
    await cli('add', 'Alice plays jazz piano every evening', '--user', 'alice', '--category', 'episode');
    await cli('add', 'Alice likes jazz', '--user', 'alice');
    await cli('add', 'Alice keeps bees in the garden', '--user', 'alice');
    const all = json<{ score: number; memory: { category: string } }[]>(await cli('search', 'jazz', '--user', 'alice', '--json'));
    expect(all.length).toBeGreaterThan(1);
    const scores = all.map((result) => result.score);
    const threshold = (Math.max(...scores) + Math.min(...scores)) / 2;
    expect(Math.max(...scores)).toBeGreaterThan(Math.min(...scores));
    const above = json<{ score: number }[]>(await cli('search', 'jazz', '--user', 'alice', '--min-score', String(threshold), '--json'));
    expect(above.length).toBeGreaterThan(0);
    expect(above.length).toBeLessThan(all.length);
    for (const result of above) expect(result.score).toBeGreaterThanOrEqual(threshold);

    const episodes = json<{ memory: { category: string; content: string } }[]>(await cli('search', 'jazz', '--user', 'alice', '--category', 'episode', '--json'));
    expect(episodes.map((result) => result.memory.content)).toEqual(['Alice plays jazz piano every evening']);
  });
});

describe('add options', () => {
  it('--no-merge stores the same text again as a new memory; --verified is kept', async () => {
    // Said by the background AI, a memory is unverified unless --verified says otherwise (the user's own is verified).
    const first = json(await cli('add', 'I live in Lisbon', '--user', 'alice', '--source', 'background_ai', '--json'));
    const again = json(await cli('add', 'I live in Lisbon', '--user', 'alice', '--source', 'background_ai', '--no-merge', '--verified', '--json'));
    expect(again.decision.strategy).toBe('create_new');
    expect(again.memory.id).not.toBe(first.memory.id);
    expect(again.memory.verified).toBe(true);
    expect(first.memory.verified).toBe(false);
    expect(json(await cli('list', '--user', 'alice', '--json'))).toHaveLength(2);
  });
});

describe('import options', () => {
  it('--batch-size above 10000 is exit 2 naming the limit; nothing is imported', async () => {
    writeFileSync(join(dir, 'two.jsonl'), syntheticExport(2).text);
    const refused = await cli('import', 'two.jsonl', '--batch-size', '10001');
    expect(refused.code).toBe(EXIT_CODES.USAGE);
    expect(refused.stderr).toContain('--batch-size must be an integer >= 1 <= 10000, got "10001"');
    expect(json(await cli('import', 'two.jsonl', '--batch-size', '10000', '--json'))).toMatchObject({ created: 2 });
  });

  it('--merge with --on-conflict is exit 2 (a merge never conflicts); nothing is imported', async () => {
    writeFileSync(join(dir, 'two.jsonl'), syntheticExport(2).text);
    const refused = await cli('import', 'two.jsonl', '--merge', '--on-conflict', 'skip');
    expect(refused.code).toBe(EXIT_CODES.USAGE);
    expect(refused.stderr).toContain('--on-conflict applies to copying; --merge never conflicts');
    expect(await storedIn(dir, 'memory.db')).toEqual([]);
  });

  it('a --merge import of a file cut short keeps its checkpoint, to resume when the whole file comes', async () => {
    const { header, lines } = syntheticExport(5);
    writeFileSync(join(dir, 'cut.jsonl'), `${[header, ...lines.slice(0, 2)].join('\n')}\n`);
    const cut = await cli('import', 'cut.jsonl', '--merge', '--quiet');
    expect(cut.code).toBe(EXIT_CODES.USAGE);
    const checkpoint = join(dir, 'cut.jsonl.import-checkpoint.json');
    expect(cut.stderr).toContain(`progress is kept in ${checkpoint}`);
    expect(JSON.parse(readFileSync(checkpoint, 'utf8'))).toMatchObject({ done: 2 });
  });

  it('refuses a --merge checkpoint of another file or another export (exit 2, naming it); nothing is imported', async () => {
    writeFileSync(join(dir, 'two.jsonl'), syntheticExport(2).text);
    const counts = { mode: 'merge', done: 1, created: 1, merged: 0, kept: 0, skipped: 0, replaced: 0, outOfScope: 0 };
    const checkpoint = join(dir, 'progress.json');
    writeFileSync(checkpoint, JSON.stringify({ source: join(dir, 'other.jsonl'), exportedAt: '2024-06-01T00:00:00.000Z', done: 1, counts }));
    const otherFile = await cli('import', 'two.jsonl', '--merge', '--checkpoint', 'progress.json');
    expect(otherFile.code).toBe(EXIT_CODES.USAGE);
    expect(otherFile.stderr).toContain(`${checkpoint} belongs to the import of ${join(dir, 'other.jsonl')}`);
    writeFileSync(checkpoint, JSON.stringify({ source: join(dir, 'two.jsonl'), exportedAt: '2023-01-01T00:00:00.000Z', done: 1, counts }));
    const otherExport = await cli('import', 'two.jsonl', '--merge', '--checkpoint', 'progress.json');
    expect(otherExport.code).toBe(EXIT_CODES.USAGE);
    expect(otherExport.stderr).toContain(`${checkpoint} belongs to another export (made 2023-01-01T00:00:00.000Z)`);
    expect(await storedIn(dir, 'memory.db')).toEqual([]);
  });
});

describe('import --merge', () => {
  it("keeps the memory's time: the memory it creates is dated as in the file, not now", async () => {
    writeFileSync(join(dir, 'one.jsonl'), syntheticExport(1).text);
    expect(json(await cli('import', 'one.jsonl', '--merge', '--json'))).toMatchObject({ created: 1 });
    const [record] = json(await cli('list', '--json'));
    expect(record).toMatchObject({ content: expect.stringMatching(/^Note number 0 /), updatedAt: '2024-01-01T00:00:00.000Z' });
  });
});

describe('export options', () => {
  it('--vectors writes each memory\'s vector (of the embedder\'s dimension) and says so in the header; without it, none', async () => {
    await cli('add', 'Alice likes jazz', '--user', 'alice');
    const lines = (result: { stdout: string }) => result.stdout.trim().split('\n').map((line) => JSON.parse(line));
    const [header, line] = lines(await cli('export', '--vectors'));
    expect(header.vectors).toBe(true);
    expect(line.vector).toHaveLength(header.embedder.dimension);
    const [plainHeader, plainLine] = lines(await cli('export'));
    expect(plainHeader.vectors).toBe(false);
    expect(plainLine).not.toHaveProperty('vector');
  });
});

describe('options that do not go together', () => {
  it('forget <id> --yes is exit 2 (--yes is for --scope): the memory stays', async () => {
    const { memory } = json(await cli('add', 'Alice likes jazz', '--user', 'alice', '--json'));
    const refused = await cli('forget', memory.id, '--yes');
    expect(refused.code).toBe(EXIT_CODES.USAGE);
    expect(refused.stderr).toContain('--yes goes with --scope');
    expect((await cli('show', memory.id)).code).toBe(0);
  });

  it('list --all with --limit is exit 2, not one of them silently', async () => {
    await cli('add', 'Alice likes jazz', '--user', 'alice');
    const refused = await cli('list', '--all', '--limit', '5');
    expect(refused.code).toBe(EXIT_CODES.USAGE);
    expect(refused.stderr).toContain('--all and --limit cannot be used together');
    expect(refused.stdout).toBe('');
  });
});
