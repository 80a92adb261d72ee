import { lstat, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createMemory, MemloomError } from '@memloom/core';
import { createFakeClock, createTestEmbedder } from '@memloom/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createMarkdownStore, type MarkdownStore } from '../src/index.js';
import { removeStoreFiles, tempRoot } from './helpers.js';

const dimensions = { dimension: 16, embedderId: 'memloom/test-embedder' };

let store: MarkdownStore | undefined;
afterEach(async () => {
  if (!store) return;
  await store.close();
  await removeStoreFiles(store);
  store = undefined;
});

describe('a file that cannot be read', () => {
  it('is reported with path and line, left untouched, and the rest of the store keeps working', async () => {
    const embedder = createTestEmbedder({ dimension: 16 });
    const clock = createFakeClock('2024-03-02T09:00:00.000Z');
    const warnings: string[] = [];
    store = createMarkdownStore({ root: await tempRoot(), embedder, clock, logger: { warn: (message) => warnings.push(message) } });
    const memory = createMemory({ store, embedder, clock });
    const alice = { userId: 'alice' };
    const bob = { userId: 'bob' };
    const kept = await memory.add('Alice keeps bees.', { scope: alice });
    const damaged = await memory.add('Alice plays the cello.', { scope: alice });
    await memory.add('Bob sails on weekends.', { scope: bob });

    const file = path.join(store.directoryFor(alice), 'MEMORY.md');
    const text = await readFile(file, 'utf8');
    const broken = text.replace(`{"id":"${damaged.memory.id}"`, `{"id":"${damaged.memory.id}",,`);
    await writeFile(file, broken);
    const lineOfDamage = broken.split('\n').findIndex((line) => line.includes(',,')) + 1;

    const report = await store.sync();
    expect(report.problems).toEqual([
      { path: 'users/alice/memory/MEMORY.md', line: lineOfDamage, message: expect.stringMatching(/not valid JSON/u) },
    ]);
    expect(store.problems()).toEqual(report.problems);
    expect(warnings.some((warning) => warning.includes(`users/alice/memory/MEMORY.md:${lineOfDamage}`))).toBe(true);
    // Nothing was taken as deleted: the damaged block's memory is still there as it was.
    expect((await store.get(damaged.memory.id))?.content).toBe('Alice plays the cello.');
    expect((await store.get(kept.memory.id))?.content).toBe('Alice keeps bees.');
    expect(await store.history(damaged.memory.id)).toHaveLength(1);

    // Writes to another scope work; the broken file is never rewritten.
    await memory.add('Bob fixes old radios.', { scope: bob });
    expect(await store.count({ scope: bob })).toBe(2);
    const error = await memory.add('Alice moved to Porto.', { scope: alice }).catch((caught: unknown) => caught);
    expect(MemloomError.hasCode(error, 'STORE_CORRUPT')).toBe(true);
    expect((error as MemloomError).message).toContain(`users/alice/memory/MEMORY.md:${lineOfDamage}`);
    expect((error as MemloomError).backend).toBe('markdown');
    expect(await readFile(file, 'utf8')).toBe(broken);

    // Once a person fixes the line, everything works again.
    await writeFile(file, text);
    expect((await store.sync()).problems).toEqual([]);
    await memory.add('Alice moved to Porto.', { scope: alice });
    expect(await store.count({ scope: alice })).toBe(3);
  });

  it('reports bad field values and a block with no text, each with its line', async () => {
    store = createMarkdownStore({ root: await tempRoot() });
    const directory = store.directoryFor({});
    const { mkdir } = await import('node:fs/promises');
    await mkdir(directory, { recursive: true });
    const block = (id: string, extra: string) =>
      `## 2024-01-01\n<!-- memloom {"id":"${id}","revision":1,"category":"fact","type":"user","level":"full","weight":1,"importance":1,"source":"user","verified":true,"createdAt":"2024-01-01T00:00:00.000Z","updatedAt":"2024-01-01T00:00:00.000Z"${extra}} -->\n`;
    await writeFile(
      path.join(directory, 'MEMORY.md'),
      `# Memory\n\n${block('a', ',"category":"gossip"').replace('"category":"fact",', '')}text a\n\n${block('b', '')}\n${block('c', ',"weight":"heavy"').replace('"weight":1,', '')}text c\n`,
    );
    const report = await store.sync();
    expect(report.problems.map((problem) => [problem.line, problem.message.split(':')[0]])).toEqual([
      [4, 'memloom field category'],
      [7, 'memory b has no text; write its text under the heading or delete the whole block'],
      [11, 'memloom field weight'],
    ]);
  });
});

describe('a Markdown file that is a symbolic link', () => {
  it('is reported like a file that cannot be read: never written through, and nothing in it is deleted', async () => {
    const embedder = createTestEmbedder({ dimension: 16 });
    const root = await tempRoot();
    const first = createMarkdownStore({ root, embedder });
    const memory = createMemory({ store: first, embedder });
    const alice = { userId: 'alice' };
    const added = await memory.add('Alice keeps bees.', { scope: alice });
    await first.close();
    // A dotfile manager keeps the real file elsewhere and links it in.
    const directory = first.directoryFor(alice);
    const file = path.join(directory, 'MEMORY.md');
    const vault = await tempRoot('memloom-md-vault-');
    const target = path.join(vault, 'MEMORY.md');
    await rename(file, target);
    await symlink(target, file);
    const text = await readFile(target, 'utf8');

    store = createMarkdownStore({ root, embedder });
    await store.open(dimensions);
    const problem = { path: 'users/alice/memory/MEMORY.md', line: 1, message: expect.stringMatching(/symbolic link/u) };
    expect(store.problems()).toEqual([problem]);
    expect((await store.sync()).deleted).toEqual([]);
    const error = await createMemory({ store, embedder }).add('Alice moved to Porto.', { scope: alice }).catch((caught: unknown) => caught);
    expect(MemloomError.hasCode(error, 'STORE_CORRUPT')).toBe(true);
    expect((error as MemloomError).message).toContain('users/alice/memory/MEMORY.md:1');
    // The link is still a link to the file as it was, and the history is still there.
    expect((await lstat(file)).isSymbolicLink()).toBe(true);
    expect(await readFile(target, 'utf8')).toBe(text);
    expect(await readdir(path.join(directory, '.history'))).toHaveLength(1);

    // The file itself back in place: the memory is there again, with its history.
    await rm(file);
    await rename(target, file);
    expect((await store.sync()).problems).toEqual([]);
    expect((await store.get(added.memory.id))?.content).toBe('Alice keeps bees.');
    expect(await store.history(added.memory.id)).toHaveLength(1);
    await rm(vault, { recursive: true, force: true });
  });
});
