import { createTestEmbedder } from '@memloom/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { run, tempFolder } from './helpers.js';

/** When set, the next memory the CLI opens gets a test embedder of this id (an embedder's id is whatever its maker says). */
let embedderId: string | undefined;
vi.mock('memloom', async (importOriginal) => {
  const actual = await importOriginal<typeof import('memloom')>();
  const createMemory: typeof actual.createMemory = (options, resolved) =>
    actual.createMemory(embedderId === undefined ? options : { ...options, embedder: createTestEmbedder({ dimension: 8, id: embedderId }) }, resolved);
  return { ...actual, createMemory };
});

const folders: Array<{ cleanup: () => void }> = [];
afterEach(() => {
  embedderId = undefined;
  for (const folder of folders.splice(0)) folder.cleanup();
});

describe('reindex progress and summary', () => {
  it('shows the embedder id as text: no escape sequence or bidi control reaches the terminal', { timeout: 30_000 }, async () => {
    const folder = tempFolder();
    folders.push(folder);
    expect((await run(folder.dir, ['add', 'Bob keeps bees', '--store', 'sqlite:./memory.db'])).code).toBe(0);
    embedderId = 'evil\u001b]0;new title\u0007\u202Eid';
    const reindexed = await run(folder.dir, ['reindex', 'lexical', '--store', 'sqlite:./memory.db']);
    expect(reindexed.code).toBe(0);
    // Before: the label held the id raw, retitling the terminal and reversing what followed it.
    expect(reindexed.stderr).toContain('reindex evilid');
    expect(reindexed.stderr).not.toMatch(/[\u0007\u202e]|\u001b\]/u);
    // The summary names it the same way.
    expect(reindexed.stdout).toContain('re-indexed 1 memory with evilid (8 dimensions)');
    expect(reindexed.stdout).not.toMatch(/[\u0007\u202e]|\u001b\]/u);
  });
});
