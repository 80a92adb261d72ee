import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { createMemory } from '@memloom/core';
import { createFakeClock, createTestEmbedder } from '@memloom/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createMarkdownStore, type MarkdownStore } from '../src/index.js';
import { removeStoreFiles, tempRoot } from './helpers.js';

const scope = { userId: 'alice' };
let store: MarkdownStore | undefined;

afterEach(async () => {
  if (!store) return;
  await store.close();
  await removeStoreFiles(store);
  store = undefined;
});

async function rig(backupRetention?: number) {
  const embedder = createTestEmbedder({ dimension: 16 });
  const clock = createFakeClock('2024-03-02T09:00:00.000Z');
  store = createMarkdownStore({ root: await tempRoot(), embedder, clock, ...(backupRetention ? { backupRetention } : {}) });
  const memory = createMemory({ store, embedder, clock });
  const directory = store.directoryFor(scope);
  return { store, memory, clock, directory, file: path.join(directory, 'MEMORY.md') };
}

describe('backups', () => {
  it('copies MEMORY.md to backups/YYYYMMDD_HHMMSS_MEMORY.md before every overwrite, holding the file as it was', async () => {
    const { memory, clock, directory, file } = await rig();
    await memory.add('first fact about tea', { scope });
    // Creating the file overwrote nothing, so nothing was backed up.
    expect(await readdir(path.join(directory, 'backups')).catch(() => [])).toEqual([]);
    const afterFirst = await readFile(file, 'utf8');
    clock.advance(1_000);
    await memory.add('second fact about trains', { scope });
    const afterSecond = await readFile(file, 'utf8');
    clock.advance(1_000);
    await memory.add('third fact about lakes', { scope });

    const names = (await readdir(path.join(directory, 'backups'))).sort();
    expect(names).toEqual(['20240302_090001_MEMORY.md', '20240302_090002_MEMORY.md']);
    expect(await readFile(path.join(directory, 'backups', names[0] as string), 'utf8')).toBe(afterFirst);
    expect(await readFile(path.join(directory, 'backups', names[1] as string), 'utf8')).toBe(afterSecond);
  });

  it('names backups made in the same second apart and keeps only the newest `backupRetention` per file', async () => {
    const { memory, directory } = await rig(3);
    for (const [index, topic] of ['apples', 'boats', 'clouds', 'dunes', 'eels', 'ferns'].entries()) {
      await memory.add(`fact ${index} about ${topic}`, { scope });
    }
    const names = (await readdir(path.join(directory, 'backups'))).sort();
    // Five overwrites in the same (fake) second; the oldest two were pruned.
    expect(names).toEqual(['20240302_090000-3_MEMORY.md', '20240302_090000-4_MEMORY.md', '20240302_090000-5_MEMORY.md']);
    const newest = await readFile(path.join(directory, 'backups', '20240302_090000-5_MEMORY.md'), 'utf8');
    expect(newest).toContain('fact 4 about eels');
    expect(newest).not.toContain('fact 5 about ferns');
  });

  it('backs up a daily note before it is overwritten, under its own name', async () => {
    const { memory, directory } = await rig();
    await memory.add('morning stand-up about the release', { scope, category: 'episode' });
    await memory.add('lunch with the design team', { scope, category: 'episode' });
    expect(await readdir(path.join(directory, 'backups'))).toEqual(['20240302_090000_20240302.md']);
  });

  it('refuses a retention below 1: nothing is overwritten without a backup', async () => {
    expect(() => createMarkdownStore({ root: '/tmp/never-created', backupRetention: 0 })).toThrow(/backupRetention/u);
  });
});
