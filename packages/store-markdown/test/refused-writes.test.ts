import * as fs from 'node:fs';
import { promises as fsPromises } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { MemloomError, type MemoryChange, type MemoryRecord } from '@memloom/core';
import { createRecord } from '@memloom/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { writeError } from '../src/errors.js';
import { createMarkdownStore, type MarkdownStore } from '../src/index.js';
import { staleLock, tempRoot } from './helpers.js';

// Permissions do not bind root, who may run these tests: the folders a refusal names are made read-only
// through accessSync (passed through unless a test says otherwise), and refusals through spies on fs.promises.
const refusedFolders = new Set<string>();
vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>();
  const accessSync: typeof actual.accessSync = (target, mode) => {
    if (refusedFolders.has(String(target))) throw Object.assign(new Error(`EACCES: permission denied, access '${String(target)}'`), { code: 'EACCES' });
    actual.accessSync(target, mode);
  };
  return { ...actual, accessSync, default: { ...actual, accessSync } };
});

const roots: string[] = [];
const stores: MarkdownStore[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  refusedFolders.clear();
  for (const store of stores.splice(0)) await store.close();
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

/** A store holding m1 for user a. */
async function storeWithMemory(): Promise<{ store: MarkdownStore; memory: MemoryRecord; root: string; scopeFolder: string }> {
  const root = await tempRoot();
  roots.push(root);
  const store = createMarkdownStore({ root });
  stores.push(store);
  await store.open({ dimension: 4, embedderId: 'test/vectors' });
  const memory = createRecord({ id: 'm1', content: 'I like tea', scope: { userId: 'a' }, atIso: '2024-03-01T09:00:00.000Z' }, { importance: 1, category: 'fact', type: 'user' });
  const change: MemoryChange = {
    op: 'put',
    memory,
    vector: [1, 0, 0, 0],
    expectedRevision: 0,
    version: { memoryId: memory.id, version: 1, at: '2024-03-01T09:00:00.000Z', trigger: 'import', action: 'create', reason: 'test', before: null, after: memory },
  };
  await store.apply([change]);
  return { store, memory, root, scopeFolder: store.directoryFor({ userId: 'a' }) };
}

function refusal(code: string, syscall: string, target: string, dest?: string): NodeJS.ErrnoException {
  const shown = dest === undefined ? `'${target}'` : `'${target}' -> '${dest}'`;
  return Object.assign(new Error(`${code}: refused, ${syscall} ${shown}`), { code, syscall, path: target, ...(dest === undefined ? {} : { dest }) });
}

/** Make `fs.promises[method]` refuse `target` with `code` (as `syscall` on `reported`), and do the rest. */
function refuseOn(method: 'rm' | 'mkdir', target: string, code: string, syscall: string, reported = target): void {
  const methods = fsPromises as unknown as Record<typeof method, (at: unknown, ...rest: unknown[]) => Promise<unknown>>;
  const real = methods[method];
  // Both have the one signature of `methods`: the cast only narrows the key for the spy's types.
  vi.spyOn(methods, method as 'rm').mockImplementation(async (at, ...rest) => {
    if (String(at) === target) throw refusal(code, syscall, reported);
    return real(at, ...rest);
  });
}

async function rejection(promise: Promise<unknown>): Promise<MemloomError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(MemloomError.isInstance(error)).toBe(true);
  return error as MemloomError;
}

describe('writeError', () => {
  it('names, for a rename, the folder it may not write, not the file moved (memloom\'s own temp file)', async () => {
    const root = await tempRoot();
    roots.push(root);
    const folder = path.join(root, 'users', 'a', 'memory');
    const trash = path.join(root, '.memloom', 'trash');
    await mkdir(folder, { recursive: true });
    await mkdir(trash, { recursive: true });
    const temp = path.join(folder, '.MEMORY.md.tmp-1');
    await writeFile(temp, 'text');
    // No folder found read-only: the destination's.
    expect(writeError(refusal('EROFS', 'rename', temp, path.join(folder, 'MEMORY.md')), 'writing').details).toEqual({ path: folder, readonly: true });
    // A folder moved to the trash, out of a folder this process may not write.
    refusedFolders.add(path.dirname(folder));
    const error = writeError(refusal('EACCES', 'rename', folder, path.join(trash, 'x-0')), 'deleting');
    expect(error.details).toEqual({ path: path.dirname(folder), readonly: true });
    expect(error.message).toContain(`deleting: ${path.dirname(folder)} is read-only for this process`);
  });

  it('names the folder of a file it could not remove', async () => {
    const root = await tempRoot();
    roots.push(root);
    const file = path.join(root, 'owner.json');
    await writeFile(file, '{}');
    expect(writeError(refusal('EACCES', 'unlink', file), 'removing').details).toEqual({ path: path.dirname(file), readonly: true });
  });

  it('does not call EPERM read-only on Windows, where it also means a file another program holds open', () => {
    const file = path.join(os.tmpdir(), 'MEMORY.md');
    expect(writeError(refusal('EPERM', 'open', file), 'writing').details).toEqual({ path: path.dirname(file), readonly: true });
    const platform = Object.getOwnPropertyDescriptor(process, 'platform')!;
    Object.defineProperty(process, 'platform', { ...platform, value: 'win32' });
    try {
      const error = writeError(refusal('EPERM', 'open', file), 'writing');
      expect(error).toMatchObject({ code: 'STORE_ERROR', backend: 'markdown' });
      expect(error.details).toEqual({});
      expect(error.message).toBe(`[memloom] [markdown] writing: EPERM: refused, open '${file}'`);
    } finally {
      Object.defineProperty(process, 'platform', platform);
    }
  });
});

describe('a read that writes (taking in an edit made by hand)', () => {
  it('names what is read-only when the system refuses the write, as a write does', async () => {
    const { store, memory, scopeFolder } = await storeWithMemory();
    const file = path.join(scopeFolder, 'MEMORY.md');
    await writeFile(file, (await readFile(file, 'utf8')).replace(memory.content, 'I like green tea'));
    const realOpen = fsPromises.open;
    vi.spyOn(fsPromises, 'open').mockImplementation(async (target, flags, ...rest) => {
      if (flags === 'w' && String(target).startsWith(scopeFolder)) throw refusal('EACCES', 'open', String(target));
      return realOpen(target, flags, ...rest);
    });
    const error = await rejection(store.list({}));
    // Before: "cannot read the memory files: EACCES …", details {}.
    expect(error).toMatchObject({ code: 'STORE_ERROR', backend: 'markdown', details: { path: scopeFolder, readonly: true } });
    expect(error.message).toContain(`cannot record the changes made to the memory files: ${scopeFolder} is read-only for this process`);
    vi.restoreAllMocks();
    expect((await store.get(memory.id))?.content).toBe('I like green tea');
  });
});

describe('a write refused after its commit point', () => {
  it('leaves its journal, and every call says what is read-only and that a process that may write it must open the store; one that may finishes it', async () => {
    const { store, root, scopeFolder } = await storeWithMemory();
    const journal = path.join(root, '.memloom', 'journal.json');
    const realRename = fsPromises.rename;
    vi.spyOn(fsPromises, 'rename').mockImplementation(async (from, to) => {
      if (String(from) === scopeFolder) throw refusal('EACCES', 'rename', String(from), String(to));
      return realRename(from, to);
    });
    // The scope's folder of another user: moving its memory/ folder away is refused.
    refusedFolders.add(path.dirname(scopeFolder));
    const expected = {
      code: 'STORE_ERROR',
      backend: 'markdown',
      details: { journal, path: path.dirname(scopeFolder), readonly: true },
    };
    const refused = await rejection(store.deleteByScope({ userId: 'a' }));
    expect(refused).toMatchObject(expected);
    // Before: "cannot finish a write left unfinished past its commit point …", as if found after a crash, and no word of the delete.
    expect(refused.message).toContain(`[memloom] [markdown] cannot delete the scope: the write is left unfinished past its commit point (${journal}): ${path.dirname(scopeFolder)} is read-only for this process`);
    expect(refused.message).toContain('Every call of the store fails until a process that may write that folder does it (opening the store does)');
    expect(JSON.parse(await readFile(journal, 'utf8'))).toMatchObject({ state: 'commit' });
    for (const call of [() => store.count({}), () => createMarkdownStore({ root }).open({ dimension: 4, embedderId: 'test/vectors' })]) {
      const error = await rejection(call());
      // Before: "cannot read the memory files: EACCES …" (details {}), for every call.
      expect(error).toMatchObject(expected);
      expect(error.message).toContain(`cannot finish a write left unfinished past its commit point (${journal}): ${path.dirname(scopeFolder)} is read-only for this process`);
      expect(error.message).toContain('Every call of the store fails until a process that may write that folder does it (opening the store does)');
    }
    vi.restoreAllMocks();
    refusedFolders.clear();
    expect(await store.count({})).toBe(0);
    expect(fs.existsSync(journal)).toBe(false);
    expect(fs.existsSync(scopeFolder)).toBe(false);
  });
});

describe('an apply refused after its commit point', () => {
  it('names what was asked for (writing the changes), not a write found unfinished', async () => {
    const { store, memory, root, scopeFolder } = await storeWithMemory();
    const journal = path.join(root, '.memloom', 'journal.json');
    const file = path.join(scopeFolder, 'MEMORY.md');
    const realRename = fsPromises.rename;
    vi.spyOn(fsPromises, 'rename').mockImplementation(async (from, to) => {
      if (String(to) === file) throw refusal('EACCES', 'rename', String(from), String(to));
      return realRename(from, to);
    });
    refusedFolders.add(scopeFolder);
    const after = { ...memory, content: 'I like green tea', revision: 2 };
    const error = await rejection(
      store.apply([{ op: 'put', memory: after, expectedRevision: 1, version: { memoryId: memory.id, version: 2, at: '2024-03-02T09:00:00.000Z', trigger: 'manual_edit', action: 'edit', reason: 'test', before: memory, after } }]),
    );
    expect(error).toMatchObject({ code: 'STORE_ERROR', backend: 'markdown', details: { journal, path: scopeFolder, readonly: true } });
    expect(error.message).toContain(`[memloom] [markdown] cannot write the changes: the write is left unfinished past its commit point (${journal}): ${scopeFolder} is read-only for this process`);
  });
});

describe('a stale lock this process may not remove (test/other-user.test.ts makes one of another user, as root)', () => {
  it("is named itself, with who left it and the advice to remove it; this process's user's is not called another user's", async () => {
    const { store, root } = await storeWithMemory();
    // A process of this host that is gone: the lock is stale, and is broken by removing it.
    const { lock, gone } = await staleLock(root);
    refuseOn('rm', lock, 'EACCES', 'unlink', path.join(lock, 'owner.json'));
    const error = await rejection(store.sync());
    const uid = fs.statSync(lock).uid;
    // Before: details.path was …/lock/owner.json, a file.
    expect(error).toMatchObject({ code: 'STORE_ERROR', backend: 'markdown', details: { lock, path: lock, readonly: true, owner: { uid, ...gone } } });
    expect(error.message).toContain(`cannot take the store lock ${lock}: ${lock} is read-only for this process`);
    // Before: "(a process of another user left it): remove it", of this process's user's lock.
    expect(error.message).toContain(
      `No process holds it any more (its own is gone, or stopped refreshing it), but this one may not remove it (owned by user id ${uid} (this process's), made by process ${gone.pid} on ${gone.host}): remove it`,
    );
    expect(error.message).not.toContain('another user');
    expect(error.message).not.toContain('as that user or root');
  });

  it('names no user where the platform has no process uid (Windows, whose stat gives uid 0)', async () => {
    const { store, root } = await storeWithMemory();
    const { lock, gone } = await staleLock(root);
    refuseOn('rm', lock, 'EACCES', 'unlink', path.join(lock, 'owner.json'));
    vi.spyOn(process as { getuid: () => number | undefined }, 'getuid').mockReturnValue(undefined);
    const error = await rejection(store.sync());
    expect(error).toMatchObject({ code: 'STORE_ERROR', details: { lock, path: lock, owner: gone } });
    expect((error.details.owner as Record<string, unknown>).uid).toBeUndefined();
    // Before: "a process of another user left it: owned by user id …", and "as that user or root".
    expect(error.message).toContain(`(made by process ${gone.pid} on ${gone.host}): remove it`);
    expect(error.message).not.toContain('another user');
    expect(error.message).not.toContain('owned by user id');
  });

  it('on a read-only disk, is the folder\'s to fix: no user may remove it', async () => {
    const { store, root } = await storeWithMemory();
    const { lock, breaker } = await staleLock(root);
    // On a read-only disk the first write of breaking a stale lock, making lock.break, fails: the lock is never touched.
    refuseOn('mkdir', breaker, 'EROFS', 'mkdir');
    const error = await rejection(store.sync());
    expect(error).toMatchObject({ code: 'STORE_ERROR', backend: 'markdown', details: { lock, path: path.join(root, '.memloom'), readonly: true } });
    // Before: "… but this one may not remove it (a process of another user left it): remove it".
    expect(error.message).toContain('The store takes it to read too (a read takes in edits made by hand, and may write), so that folder must be writable by this process');
    expect(error.message).not.toContain('another user');
    expect(error.message).not.toContain('No process holds it');
  });
});

describe('a leftover lock.break this process may not remove (test/other-user.test.ts makes one of another user, as root)', () => {
  it('is named itself, with who left it and the advice to remove it', async () => {
    const { store, root } = await storeWithMemory();
    // A stale lock, and the breaker of a process that stopped while breaking it: both of processes of this host that are gone.
    const { lock, breaker, gone } = await staleLock(root);
    await mkdir(breaker);
    await writeFile(path.join(breaker, 'owner.json'), JSON.stringify({ ...gone, token: 'breaker' }));
    refuseOn('rm', breaker, 'EACCES', 'unlink', path.join(breaker, 'owner.json'));
    const error = await rejection(store.sync());
    const uid = fs.statSync(breaker).uid;
    expect(error).toMatchObject({ code: 'STORE_ERROR', backend: 'markdown', details: { lock, breaker, path: breaker, readonly: true, owner: { uid, ...gone } } });
    // Before: "… so that folder must be writable by this process", of a folder it may write.
    expect(error.message).toContain(`cannot take the store lock ${lock}: ${breaker} is read-only for this process`);
    expect(error.message).toContain(`${breaker} is left over from a process that broke a stale lock and stopped before removing it (owned by user id ${uid}`);
    expect(error.message).toContain(`made by process ${gone.pid} on ${gone.host}), and this one may not remove it`);
    expect(error.message).not.toContain('must be writable by this process');
    // It is this process's user's: no other user to remove it as. Before: "remove it (as that user or root)".
    expect(error.message).toContain("(this process's)");
    expect(error.message).toContain('no process uses it any more; remove it, and the store can be opened again');
    expect(error.message).not.toContain('as that user or root');
  });

  it('names the folder, not a breaker, when lock.break cannot be made or removed for want of writing .memloom, or the disk is read-only', async () => {
    const { store, root } = await storeWithMemory();
    const { state, lock, breaker, gone } = await staleLock(root);
    const folderAdvice = 'The store takes it to read too (a read takes in edits made by hand, and may write), so that folder must be writable by this process';

    // No lock.break: making it is refused, .memloom being read-only.
    refuseOn('mkdir', breaker, 'EACCES', 'mkdir');
    let error = await rejection(store.sync());
    // Before: ". …/lock.break is left over from a process that broke a stale lock … remove it (as that user or root)", of a folder that is not there.
    expect(error).toMatchObject({ code: 'STORE_ERROR', backend: 'markdown', details: { lock, path: state, readonly: true } });
    expect(error.details).not.toHaveProperty('breaker');
    expect(error.message).toContain(`cannot take the store lock ${lock}: ${state} is read-only for this process`);
    expect(error.message).toContain(folderAdvice);
    expect(error.message).not.toContain('left over');
    vi.restoreAllMocks();

    // This user's own lock.break, left over: removing it from .memloom is refused.
    await mkdir(breaker);
    await writeFile(path.join(breaker, 'owner.json'), JSON.stringify({ ...gone, token: 'breaker' }));
    refuseOn('rm', breaker, 'EACCES', 'rmdir');
    error = await rejection(store.sync());
    expect(error).toMatchObject({ code: 'STORE_ERROR', backend: 'markdown', details: { lock, path: state, readonly: true } });
    expect(error.message).toContain(folderAdvice);
    expect(error.message).not.toContain('left over');
    vi.restoreAllMocks();

    // A read-only disk: no user may remove it, root neither.
    refuseOn('rm', breaker, 'EROFS', 'unlink', path.join(breaker, 'owner.json'));
    error = await rejection(store.sync());
    expect(error).toMatchObject({ code: 'STORE_ERROR', backend: 'markdown', details: { lock, path: breaker, readonly: true } });
    expect(error.message).toContain(folderAdvice);
    expect(error.message).not.toContain('as that user or root');
  });

  it('names no process when its owner.json is damaged (null), and still says whose it is', async () => {
    const { store, root } = await storeWithMemory();
    const { lock, breaker } = await staleLock(root);
    await mkdir(breaker);
    await writeFile(path.join(breaker, 'owner.json'), 'null');
    // Stale by age: its owner.json names no process.
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(breaker, old, old);
    refuseOn('rm', breaker, 'EACCES', 'unlink', path.join(breaker, 'owner.json'));
    const error = await rejection(store.sync());
    const uid = fs.statSync(breaker).uid;
    // Before: a TypeError, "Cannot read properties of null (reading 'pid')".
    expect(error).toMatchObject({ code: 'STORE_ERROR', backend: 'markdown', details: { lock, breaker, path: breaker, readonly: true } });
    expect(error.details?.owner).toEqual({ uid });
    expect(error.message).toContain(`stopped before removing it (owned by user id ${uid} (this process's)), and this one may not remove it`);
  });
});
