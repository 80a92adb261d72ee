import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { MemloomError } from '@memloom/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createMarkdownStore } from '../src/index.js';
import { tempRoot } from './helpers.js';

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

async function root(): Promise<string> {
  const made = await tempRoot();
  roots.push(made);
  return made;
}

/** The error a promise rejects with, checked to be the store's own STORE_ERROR naming what failed. */
async function storeErrorOf(promise: Promise<unknown>, names: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(MemloomError.isInstance(error)).toBe(true);
  expect(error).toMatchObject({ code: 'STORE_ERROR', backend: 'markdown' });
  expect((error as MemloomError).message).toContain(names);
}

describe('errors from the filesystem', () => {
  it('are MemloomErrors naming the file when the root is a file', async () => {
    const file = path.join(await root(), 'file');
    await writeFile(file, 'x');
    const store = createMarkdownStore({ root: file });
    await storeErrorOf(store.open({ dimension: 4, embedderId: 'test/vectors' }), file);
  });

  it('are MemloomErrors naming the file when .memloom/store.json is a folder', async () => {
    const folder = await root();
    await mkdir(path.join(folder, '.memloom', 'store.json'), { recursive: true });
    const store = createMarkdownStore({ root: folder });
    await storeErrorOf(store.open({ dimension: 4, embedderId: 'test/vectors' }), '.memloom/store.json');
  });

  it('are MemloomErrors naming the file when the policy files are folders', async () => {
    const store = createMarkdownStore({ root: await root() });
    const policy = store.policyStorage({ userId: 'a' });
    await mkdir(path.join(store.directoryFor({ userId: 'a' }), 'policy_overrides.json'), { recursive: true });
    await storeErrorOf(policy.readOverrides(), 'users/a/memory/policy_overrides.json');
    await storeErrorOf(policy.writeOverrides({}, new Date()), 'users/a/memory/policy_overrides.json');
    await mkdir(path.join(store.directoryFor({ userId: 'a' }), '.last_longterm_compress'), { recursive: true });
    await storeErrorOf(policy.readLastCompression!({ userId: 'a' }), 'users/a/memory/.last_longterm_compress');
    await storeErrorOf(policy.writeLastCompression!({ userId: 'a' }, new Date()), 'users/a/memory/.last_longterm_compress');
  });
});

describe('the time of the last compression', () => {
  it('must be a valid Date (INVALID_INPUT), and nothing is written otherwise', async () => {
    const store = createMarkdownStore({ root: await root() });
    const policy = store.policyStorage();
    const error = await policy.writeLastCompression!({ userId: 'a' }, new Date('x')).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'INVALID_INPUT', backend: 'markdown' });
    expect(await policy.readLastCompression!({ userId: 'a' })).toBeUndefined();
  });
});
