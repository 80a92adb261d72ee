import { reindex } from '@memloom/core';
import { describe, expect, it } from 'vitest';
import { createSqliteStore } from '../src/index.js';
import { createChange, DIMENSION, EMBEDDER_ID, newRecord, vectorFor } from './fixtures/records.mjs';
import { inspect, runFixture, tempFolders } from './helpers.js';

const folder = tempFolders();

describe('several processes on one file', () => {
  it('loses no write when two processes add and update concurrently, and never leaks "database is locked"', async () => {
    const path = folder().file();
    const store = createSqliteStore({ path });
    await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    await store.apply([createChange(newRecord('counter', 'shared counter', 'shared'), vectorFor(0))]);
    await store.close();

    const perProcess = 150;
    const results = await Promise.all(['left', 'right'].map((name) => runFixture('writer.mjs', [path, name, String(perProcess)])));
    for (const result of results) {
      expect(result.stderr).not.toMatch(/locked|busy/i);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
    }

    const reopened = createSqliteStore({ path });
    await reopened.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    expect(await reopened.count({ scope: { userId: 'left' } })).toBe(perProcess);
    expect(await reopened.count({ scope: { userId: 'right' } })).toBe(perProcess);
    const counter = await reopened.get('counter');
    // Every increment of the shared memory survived: none overwrote another.
    expect(counter?.revision).toBe(1 + 2 * perProcess);
    expect(new Set(counter?.sources).size).toBe(2 * perProcess);
    expect(await reopened.history('counter')).toHaveLength(1 + 2 * perProcess);
    await reopened.close();
    expect(inspect(path)).toMatchObject({ memories: 1 + 2 * perProcess, incomplete: 0, orphans: 0, integrity: 'ok' });
  });
});

describe('a process killed with SIGKILL', () => {
  it('inside a transaction leaves only the batches committed before it, each memory whole', async () => {
    const path = folder().file();
    // The child kills itself after the 235th version row: 4 batches of 50 committed, the fifth half written.
    const result = await runFixture('bulk-add.mjs', [path, '50', '235']);
    expect(result.signal).toBe('SIGKILL');
    expect(result.stdout.trim().split('\n').at(-1)).toBe('200');

    const store = createSqliteStore({ path });
    await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    expect(await store.count({})).toBe(200);
    expect(await store.get('bulk-199')).toBeDefined();
    expect(await store.get('bulk-200')).toBeUndefined();
    expect(await store.textSearch({ text: '咖啡', limit: 500 })).toHaveLength(200);
    expect(await store.vectorSearch({ vector: vectorFor(3), limit: 500 })).toHaveLength(200);
    await store.close();
    expect(inspect(path)).toEqual({ memories: 200, vectors: 200, textRows: 200, incomplete: 0, orphans: 0, integrity: 'ok' });
  });

  it('at a moment of the parent\'s choosing leaves a database that opens and holds only whole memories', async () => {
    const path = folder().file();
    let lastSeen = 0;
    const result = await runFixture('bulk-add.mjs', [path, '25'], (stdout, kill) => {
      lastSeen = Number(stdout.trim().split('\n').at(-1));
      if (lastSeen >= 500) kill();
    });
    expect(result.signal).toBe('SIGKILL');

    const store = createSqliteStore({ path });
    await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    const count = await store.count({});
    expect(count).toBeGreaterThanOrEqual(lastSeen);
    expect(count % 25).toBe(0);
    // The store goes on working after the crash.
    await store.apply([createChange(newRecord('after-crash', 'written after the crash', 'user-0'), vectorFor(1))]);
    await store.close();
    expect(inspect(path)).toMatchObject({ memories: count + 1, vectors: count + 1, textRows: count + 1, incomplete: 0, orphans: 0, integrity: 'ok' });
  });

  it('in the middle of a re-index: the old vectors still serve, and a second run resumes', async () => {
    const path = folder().file();
    const store = createSqliteStore({ path });
    await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    await store.apply(Array.from({ length: 60 }, (_, index) => createChange(newRecord(`m-${index}`, `memory ${index}`, 'alice'), vectorFor(index))));
    await store.close();

    const crashed = await runFixture('reindex-crash.mjs', [path, '30']);
    expect(crashed.signal).toBe('SIGKILL');
    expect(crashed.stdout).toContain('30/60');

    const reopened = createSqliteStore({ path });
    await reopened.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    expect(await reopened.vectorSearch({ vector: vectorFor(5), limit: 1 })).toHaveLength(1);
    const embedder = { id: 'memloom/next-vectors', dimension: 4, embed: async (texts: readonly string[]) => texts.map(() => [0, 1, 0, 0]) };
    const progress: number[] = [];
    const report = await reindex({ store: reopened, embedder, batchSize: 10, onProgress: (step) => progress.push(step.done) });
    expect(report).toMatchObject({ total: 60, resumed: 30, embedded: 30 });
    expect(progress).toEqual([30, 40, 50, 60]);
    await reopened.open({ dimension: 4, embedderId: 'memloom/next-vectors' });
    expect(await reopened.vectorSearch({ vector: [0, 1, 0, 0], limit: 100 })).toHaveLength(60);
    await reopened.close();
    expect(inspect(path, 'memory_vectors_2')).toMatchObject({ memories: 60, vectors: 60, incomplete: 0, orphans: 0, integrity: 'ok' });
  });
});
