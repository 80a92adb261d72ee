import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { json, run, runBin, storedIn, tempFolder } from './helpers.js';

// Killed (kill -9, at a point the test names with MEMLOOM_CLI_FAILPOINT), then run again: the store ends as one uninterrupted run leaves it.
let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempFolder('memloom-resume-'));
});
afterEach(() => cleanup());

const ENV = { MEMLOOM_EMBEDDER: 'lexical' };
// Two sessions (7 turns, then 5), each turn on its own subject in its own words.
const TURNS = [
  'Ana paddles a red kayak', 'Ben tunes old violins', 'Greenhouse tomatoes ripened early', 'Glaciers retreat every summer',
  'Chess openings need practice', 'Bees swarm near lavender', 'Night trains reach Vienna', '',
  'Origami cranes fold neatly', 'Volcanoes erupt without warning', 'Jazz clubs close late', 'Paper lanterns glow softly', 'Cacti survive drought',
];
const TRANSCRIPT = `${TURNS.join('\n')}\n`;
const ADD_TURNS = ['add-turns', 'chat.txt', '--user', 'ana', '--at', '2024-05-01T09:00:00Z', '--json'];

/** What a store holds, field by field (without the ids and the times of writing). */
async function contents(file: string) {
  const memories = await storedIn(dir, file);
  const rows = await Promise.all(
    memories.map(async (memory: { id: string; content: string; context?: string; revision: number; createdAt: string }) => {
      const history = json(await run(dir, ['history', memory.id, '--no-config', '--store', `sqlite:./${file}`, '--user', 'ana', '--json']));
      return [memory.content, memory.context, memory.revision, memory.createdAt, history.length];
    }),
  );
  return rows.sort((a, b) => String(a[0]).localeCompare(String(b[0])));
}

describe('add-turns killed part-way, then run again', () => {
  it.each([
    // After turn 9 (the 2nd turn of the 2nd session) and its checkpoint: the rerun resumes at turn 10, with turns 8 and 9 as its context.
    ['add-turns-saved:9', 9],
    // After turn 4 is stored, before the checkpoint says so: the rerun finds turn 4's memory by the id the checkpoint named.
    ['add-turns-stored:4', 4],
  ])('killed at %s: the rerun stores the rest once, as an uninterrupted run does', { timeout: 60_000 }, async (point, storedBeforeKill) => {
    writeFileSync(join(dir, 'chat.txt'), TRANSCRIPT);
    const whole = await runBin(dir, [...ADD_TURNS, '--store', 'sqlite:./whole.db'], ENV);
    expect(whole.code).toBe(0);
    expect(json(whole)).toMatchObject({ turns: 12, decisions: { create_new: 12 } });

    const killed = await runBin(dir, [...ADD_TURNS, '--store', 'sqlite:./resumed.db'], { ...ENV, MEMLOOM_CLI_FAILPOINT: point });
    expect(killed.code).not.toBe(0);
    expect(killed.stdout).toBe('');
    expect(await storedIn(dir, 'resumed.db')).toHaveLength(storedBeforeKill);
    expect(existsSync(join(dir, 'chat.txt.add-turns-checkpoint.json'))).toBe(true);

    const rerun = await runBin(dir, [...ADD_TURNS, '--store', 'sqlite:./resumed.db'], ENV);
    expect(rerun.code).toBe(0);
    expect(json(rerun)).toMatchObject({ turns: 12, resumed: storedBeforeKill, decisions: { create_new: 12 } });
    expect(json(rerun).memories).toHaveLength(12 - storedBeforeKill);
    expect(await contents('resumed.db')).toEqual(await contents('whole.db'));
    expect(existsSync(join(dir, 'chat.txt.add-turns-checkpoint.json'))).toBe(false);
  });

  it('Ctrl-C says how to resume; a checkpoint of other turns or other options is refused, naming it', async () => {
    writeFileSync(join(dir, 'chat.txt'), TRANSCRIPT);
    const stop = new AbortController();
    const stopped = await run(dir, ['add-turns', 'chat.txt', '--user', 'ana'], {
      signal: stop.signal,
      onStderr: (text) => {
        if (text.startsWith('add-turns 3/12')) stop.abort();
      },
    });
    const checkpoint = join(dir, 'chat.txt.add-turns-checkpoint.json');
    expect(stopped.stderr).toContain(`3 turns were stored in all and stay stored; run the same command again to resume after them (progress is in ${checkpoint})`);
    const otherUser = await run(dir, ['add-turns', 'chat.txt', '--user', 'ben']);
    expect(otherUser.code).toBe(2);
    expect(otherUser.stderr).toContain(`${checkpoint} belongs to a run with other options`);
    writeFileSync(join(dir, 'chat.txt'), `${TRANSCRIPT}Ana talked about kites\n`);
    const otherText = await run(dir, ['add-turns', 'chat.txt', '--user', 'ana']);
    expect(otherText.code).toBe(2);
    expect(otherText.stderr).toContain(`${checkpoint} belongs to other turns`);
    expect(readdirSync(dir).filter((name) => name.includes('.tmp'))).toEqual([]);
  });
});

describe('add-turns checkpoints that hold nothing to resume, or the same options said otherwise', () => {
  it('a run that stored no turn does not block the corrected command', async () => {
    writeFileSync(join(dir, 'chat.txt'), TRANSCRIPT);
    const checkpoint = join(dir, 'chat.txt.add-turns-checkpoint.json');
    // As a run that failed before its first turn leaves it: done 0, options of another user.
    writeFileSync(checkpoint, JSON.stringify({ source: 'chat.txt', digest: 'other', options: '{"scope":{"userId":"anna"}}', done: 0, decisions: { create_new: 0, keep_both: 0, merge_update: 0 } }));
    const result = await run(dir, ['add-turns', 'chat.txt', '--user', 'ana']);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('is from a run that stored no turn: starting over.');
    expect(existsSync(checkpoint)).toBe(false);
  });

  it('--context-turns 2 resumes a run made without it (the default)', { timeout: 60_000 }, async () => {
    writeFileSync(join(dir, 'chat.txt'), TRANSCRIPT);
    const killed = await runBin(dir, [...ADD_TURNS, '--store', 'sqlite:./resumed.db'], { ...ENV, MEMLOOM_CLI_FAILPOINT: 'add-turns-saved:3' });
    expect(killed.code).not.toBe(0);
    const rerun = await runBin(dir, [...ADD_TURNS, '--context-turns', '2', '--store', 'sqlite:./resumed.db'], ENV);
    expect(rerun.code).toBe(0);
    expect(json(rerun)).toMatchObject({ turns: 12, resumed: 3 });
  });
});

describe('import --merge killed part-way, then run again', () => {
  it('killed after a memory is added, before the checkpoint says so: the rerun adds each memory once', { timeout: 60_000 }, async () => {
    const notes = ['Ana paddles a red kayak', 'Ben tunes old violins', 'Greenhouse tomatoes ripened early', 'Glaciers retreat every summer'];
    for (const note of notes) expect((await runBin(dir, ['add', note, '--user', 'ana', '--store', 'sqlite:./source.db'], ENV)).code).toBe(0);
    expect((await runBin(dir, ['export', '-o', 'notes.jsonl', '--store', 'sqlite:./source.db'], ENV)).code).toBe(0);
    const killed = await runBin(dir, ['import', 'notes.jsonl', '--merge', '--store', 'sqlite:./merged.db'], { ...ENV, MEMLOOM_CLI_FAILPOINT: 'import-merged:2' });
    expect(killed.code).not.toBe(0);
    expect(await storedIn(dir, 'merged.db')).toHaveLength(2);
    const rerun = await runBin(dir, ['import', 'notes.jsonl', '--merge', '--store', 'sqlite:./merged.db', '--json'], ENV);
    expect(rerun.code).toBe(0);
    expect(json(rerun)).toMatchObject({ done: 4, created: 4 });
    // Each once, at its first revision: none added twice (a duplicate, or a merge into itself).
    expect((await storedIn(dir, 'merged.db')).map((memory: { content: string; revision: number }) => [memory.content, memory.revision]).sort()).toEqual(
      [...notes].sort().map((note) => [note, 1]),
    );
  });

  it('removes the checkpoint temporaries of processes gone, saying so, and leaves those of running ones', async () => {
    expect((await run(dir, ['add', 'Ana paddles a red kayak', '--user', 'ana'])).code).toBe(0);
    expect((await run(dir, ['export', '-o', 'notes.jsonl'])).code).toBe(0);
    const gone = spawnSync(process.execPath, ['-e', '']).pid; // a process that has ended
    const stale = `notes.jsonl.import-checkpoint.json.${gone}.tmp`;
    const running = `notes.jsonl.import-checkpoint.json.${process.ppid}.tmp`;
    for (const name of [stale, running]) writeFileSync(join(dir, name), '{"source":"notes.jsonl","exp');
    // The user's own files of the same shape, a pid of another form or a text that is no checkpoint's, are left alone.
    const theirs = [`notes.jsonl.import-checkpoint.json.${gone}0.tmp`, `notes.jsonl.import-checkpoint.json.1e5.tmp`, `notes.jsonl.import-checkpoint.json. 99.tmp`];
    writeFileSync(join(dir, theirs[0]!), 'my notes');
    for (const name of theirs.slice(1)) writeFileSync(join(dir, name), '{"source":"x"}');
    const result = await run(dir, ['import', 'notes.jsonl', '--merge', '--store', 'sqlite:./merged.db']);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`removed ${stale}, left by an import that was stopped (process ${gone} is gone)`);
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp')).sort()).toEqual([running, ...theirs].sort());
  });
});

describe('export -o after an export was killed', () => {
  it('removes the partial files of processes gone for that target, saying so', async () => {
    expect((await run(dir, ['add', 'Ana paddles a red kayak', '--user', 'ana'])).code).toBe(0);
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    const names = [`out.jsonl.${gone}.partial`, `out.jsonl.${process.ppid}.partial`, `other.jsonl.${gone}.partial`];
    for (const name of names) writeFileSync(join(dir, name), '{"memloom":"export"');
    // A file of the user's with such a name but another text is left alone.
    const theirs = `out.jsonl.${gone}1.partial`;
    writeFileSync(join(dir, theirs), 'draft');
    const result = await run(dir, ['export', '-o', 'out.jsonl']);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`removed out.jsonl.${gone}.partial, left by an export that was stopped (process ${gone} is gone)`);
    // A running export's file, and another target's, are left alone.
    expect(readdirSync(dir).filter((name) => name.endsWith('.partial')).sort()).toEqual([names[2], names[1], theirs].sort());
    expect(existsSync(join(dir, 'out.jsonl'))).toBe(true);
  });
});
