import { existsSync, promises as fsPromises } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { MemloomError, type MemoryChange, type MemoryRecord } from '@memloom/core';
import { createRecord } from '@memloom/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
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

/** A put creating `memory` at revision 1, with a vector of the suite's 4 dimensions. */
function createChange(memory: MemoryRecord, vector = [1, 0, 0, 0]): MemoryChange {
  return {
    op: 'put',
    memory,
    vector,
    expectedRevision: 0,
    version: { memoryId: memory.id, version: 1, at: '2024-03-01T09:00:00.000Z', trigger: 'import', action: 'create', reason: 'test', before: null, after: memory },
  };
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

describe('mustExist', () => {
  it('makes a missing root MISSING_RESOURCE naming it, and creates nothing; an existing folder opens and reads', async () => {
    const parent = await root();
    const missing = path.join(parent, 'typo', 'notes');
    const store = createMarkdownStore({ root: missing, mustExist: true });
    const error = await store.open({ dimension: 4, embedderId: 'test/vectors' }).then(
      () => undefined,
      (caught: unknown) => caught as MemloomError,
    );
    expect(error).toMatchObject({ code: 'MISSING_RESOURCE', backend: 'markdown', details: { path: missing, mustExist: true } });
    expect(error?.message).toContain(`no store at ${missing}`);
    expect(error?.message).toContain('nothing was created');
    expect((await store.list({}).catch((caught: unknown) => caught)) as MemloomError).toMatchObject({ code: 'MISSING_RESOURCE' });
    await store.close();
    expect(existsSync(path.join(parent, 'typo'))).toBe(false);
    // A folder that exists is used as ever (a person may have written its Markdown by hand).
    const writer = createMarkdownStore({ root: parent });
    await writer.open({ dimension: 4, embedderId: 'test/vectors' });
    await writer.apply([createChange(createRecord({ id: 'm1', content: 'I like tea', scope: {}, atIso: '2024-03-01T09:00:00.000Z' }, { importance: 1, category: 'fact', type: 'user' }))]);
    await writer.close();
    const reader = createMarkdownStore({ root: parent, mustExist: true });
    await reader.open({ dimension: 4, embedderId: 'test/vectors' });
    expect((await reader.list({})).map((record) => record.content)).toEqual(['I like tea']);
    await reader.close();
  });

  it('refuses an existing folder that holds no store (a plain notes folder, an empty one) and writes nothing in it; Markdown without .memloom/ is read', async () => {
    const notes = await root();
    await writeFile(path.join(notes, 'todo.txt'), 'my notes');
    const empty = await root();
    for (const folder of [notes, empty]) {
      const before = await readdir(folder);
      const store = createMarkdownStore({ root: folder, mustExist: true });
      for (const attempt of [() => store.list({}), () => store.open({ dimension: 4, embedderId: 'test/vectors' })]) {
        const error = (await attempt().catch((caught: unknown) => caught)) as MemloomError;
        expect(error).toMatchObject({ code: 'MISSING_RESOURCE', backend: 'markdown', details: { path: folder, mustExist: true } });
        expect(error.message).toContain('holds no memloom store (neither .memloom/store.json nor a memory/ folder), and nothing was created');
      }
      await store.close();
      expect(await readdir(folder)).toEqual(before);
    }
    // A store kept in git without .memloom/ (or Markdown written by hand) is a store: it is read.
    const cloned = await root();
    await mkdir(path.join(cloned, 'memory'));
    await writeFile(path.join(cloned, 'memory', 'MEMORY.md'), '## 2024-03-01\nI like tea\n');
    const reader = createMarkdownStore({ root: cloned, mustExist: true });
    expect((await reader.list({})).map((record) => record.content)).toEqual(['I like tea']);
    await reader.close();
  });
});

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

describe('a store folder this process may not write', () => {
  it('is STORE_ERROR naming the folder read-only, as SQLite names a file (details: { path, readonly: true }), and the lock (taken to read too), with the system\'s reason', async () => {
    const folder = await root();
    const writer = createMarkdownStore({ root: folder });
    await writer.open({ dimension: 4, embedderId: 'test/vectors' });
    await writer.apply([createChange(createRecord({ id: 'm1', content: 'I like tea', scope: {}, atIso: '2024-03-01T09:00:00.000Z' }, { importance: 1, category: 'fact', type: 'user' }))]);
    await writer.close();
    // As a read-only folder answers (file permissions do not bind root, who may run this test).
    const lock = path.join(folder, '.memloom', 'lock');
    const realMkdir = fsPromises.mkdir;
    const mkdirCalls = vi.spyOn(fsPromises, 'mkdir').mockImplementation(async (target, options) => {
      if (String(target) === lock) throw Object.assign(new Error(`EACCES: permission denied, mkdir '${lock}'`), { code: 'EACCES', syscall: 'mkdir', path: lock });
      return realMkdir(target, options);
    });
    try {
      const reader = createMarkdownStore({ root: folder, mustExist: true });
      const error = (await reader.list({}).catch((caught: unknown) => caught)) as MemloomError;
      expect(MemloomError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ code: 'STORE_ERROR', backend: 'markdown', details: { lock, path: path.join(folder, '.memloom'), readonly: true } });
      expect(error.message).toContain(`[memloom] [markdown] cannot take the store lock ${lock}: ${path.join(folder, '.memloom')} is read-only for this process`);
      expect(error.message).toContain('EACCES: permission denied');
      expect(error.message).toContain('so that folder must be writable by this process');
      await reader.close();
    } finally {
      mkdirCalls.mockRestore();
    }
  });
});

describe('a write the system refuses for want of permission (a folder or file of another user, a read-only disk)', () => {
  /** A store holding m1 for user a (accessed once), and a spy that refuses opening files in `mode` under that scope's folder as `code` would. */
  async function refusing(mode: 'w' | 'a', code: 'EACCES' | 'EROFS') {
    const folder = await root();
    const store = createMarkdownStore({ root: folder });
    await store.open({ dimension: 4, embedderId: 'test/vectors' });
    const memory = createRecord({ id: 'm1', content: 'I like tea', scope: { userId: 'a' }, atIso: '2024-03-01T09:00:00.000Z' }, { importance: 1, category: 'fact', type: 'user' });
    await store.apply([createChange(memory)]);
    // Its access log exists from here on: a refused append names that file.
    await store.touch([memory.id], '2025-01-01T00:00:00.000Z');
    const scopeFolder = store.directoryFor({ userId: 'a' });
    const realOpen = fsPromises.open;
    const spy = vi.spyOn(fsPromises, 'open').mockImplementation(async (target, flags, ...rest) => {
      if (flags === mode && String(target).startsWith(scopeFolder)) {
        throw Object.assign(new Error(`${code}: refused, open '${String(target)}'`), { code, syscall: 'open', path: String(target) });
      }
      return realOpen(target, flags, ...rest);
    });
    return { store, memory, scopeFolder, spy };
  }

  it('names, read-only, the folder of a file it could not make (as SQLite names a file): STORE_ERROR, details: { path, readonly: true }', async () => {
    const { store, memory, scopeFolder, spy } = await refusing('w', 'EACCES');
    try {
      const error = (await store.apply([{ ...createChange({ ...memory, id: 'm2' }) }]).catch((caught: unknown) => caught)) as MemloomError;
      expect(MemloomError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ code: 'STORE_ERROR', backend: 'markdown', details: { path: scopeFolder, readonly: true } });
      expect(error.message).toContain(`[memloom] [markdown] cannot write the changes: ${scopeFolder} is read-only for this process`);
    } finally {
      spy.mockRestore();
      await store.close();
    }
  });

  it('names, read-only, a file it could not append to (a read-only disk), recording an access time', async () => {
    const { store, memory, scopeFolder, spy } = await refusing('a', 'EROFS');
    try {
      const error = (await store.touch([memory.id], '2025-05-05T05:05:05.000Z').catch((caught: unknown) => caught)) as MemloomError;
      const log = path.join(scopeFolder, '.index', 'accessed.log');
      expect(error).toMatchObject({ code: 'STORE_ERROR', backend: 'markdown', details: { path: log, readonly: true } });
      expect(error.message).toContain(`[memloom] [markdown] cannot record the access time: ${log} is read-only for this process`);
      expect(error.message).toContain('EROFS');
    } finally {
      spy.mockRestore();
      await store.close();
    }
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

describe('records with times the files cannot hold', () => {
  it('refuses a put whose createdAt is not an ISO time with INVALID_INPUT, and the folder stays readable', async () => {
    const folder = await root();
    const store = createMarkdownStore({ root: folder });
    await store.open({ dimension: 4, embedderId: 'test/vectors' });
    const good = createRecord({ id: 'ok', content: 'a fine memory', scope: {}, atIso: '2024-03-01T09:00:00.000Z' }, { importance: 1, category: 'fact', type: 'user' });
    for (const createdAt of ['yesterday', '2024-03-01', '']) {
      const bad = { ...good, id: 'bad', createdAt };
      const error = await store.apply([createChange(good), createChange(bad)]).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error, createdAt).toMatchObject({ code: 'INVALID_INPUT', backend: 'markdown' });
      expect((error as MemloomError).message).toContain('createdAt');
    }
    await store.apply([createChange(good)]);
    await store.close();
    const reopened = createMarkdownStore({ root: folder });
    await reopened.open({ dimension: 4, embedderId: 'test/vectors' });
    expect((await reopened.get('ok'))?.content).toBe('a fine memory');
    expect(reopened.problems()).toEqual([]);
    await reopened.close();
  });

  it('refuses a put whose times fall on a day the calendar does not have, or at hour 24, with INVALID_INPUT naming the field', async () => {
    const folder = await root();
    const store = createMarkdownStore({ root: folder });
    await store.open({ dimension: 4, embedderId: 'test/vectors' });
    const good = createRecord({ id: 'ok', content: 'a fine memory', scope: {}, atIso: '2024-02-29T09:00:00.000Z' }, { importance: 1, category: 'fact', type: 'user' });
    const bad = [['createdAt', '2024-02-30T09:00:00.000Z'], ['updatedAt', '2023-02-29T09:00:00.000Z'], ['lastAccessedAt', '2024-03-01T24:00:00.000Z']] as const;
    for (const [field, value] of bad) {
      const error = await store.apply([createChange(good), createChange({ ...good, id: 'bad', [field]: value })]).catch((caught: unknown) => caught);
      expect(error, value).toMatchObject({ code: 'INVALID_INPUT', backend: 'markdown' });
      expect((error as MemloomError).message).toContain(`${field} must be`);
    }
    expect(await store.count({})).toBe(0);
    // 2024 has a 29 February.
    await store.apply([createChange(good)]);
    expect((await store.get('ok'))?.createdAt).toBe('2024-02-29T09:00:00.000Z');
    await store.close();
  });
});

describe('records with fields the files cannot hold', () => {
  it('refuses a put the reader would refuse (a weight above 1, an empty tag, NaN, …) with INVALID_INPUT naming the field, before anything is written', async () => {
    const folder = await root();
    const store = createMarkdownStore({ root: folder });
    await store.open({ dimension: 4, embedderId: 'test/vectors' });
    const good = createRecord({ id: 'ok', content: 'a fine memory', scope: { userId: 'alice' }, atIso: '2024-03-01T09:00:00.000Z' }, { importance: 1, category: 'fact', type: 'user' });
    await store.apply([createChange(good)]);
    const bad: Array<[string, Partial<MemoryRecord>]> = [
      ['tags.0', { tags: [''] }],
      ['weight', { weight: 1.5 }],
      ['importance', { importance: -1 }],
      ['category', { category: 'bogus' as MemoryRecord['category'] }],
      ['weight', { weight: Number.NaN }],
      ['importance', { importance: Number.POSITIVE_INFINITY }],
      ['baseWeight', { baseWeight: -0.5 }],
      ['sources', { sources: undefined as unknown as string[] }],
    ];
    for (const [field, patch] of bad) {
      const error = await store.apply([createChange({ ...good, id: 'bad', ...patch })]).catch((caught: unknown) => caught);
      expect(error, field).toMatchObject({ code: 'INVALID_INPUT', backend: 'markdown' });
      expect((error as MemloomError).message, field).toContain(`memory bad: ${field}:`);
    }
    // Nothing was written: the file still reads, and takes further writes.
    await store.close();
    const reopened = createMarkdownStore({ root: folder });
    await reopened.open({ dimension: 4, embedderId: 'test/vectors' });
    expect(reopened.problems()).toEqual([]);
    expect((await reopened.list({})).map((record) => record.id)).toEqual(['ok']);
    await reopened.apply([createChange({ ...good, id: 'later' })]);
    expect(await reopened.count({})).toBe(2);
    await reopened.close();
  });
});

describe('a store that was not opened', () => {
  it('refuses a put with a vector (INVALID_INPUT: call open() first) instead of guessing its embedder', async () => {
    const folder = await root();
    const store = createMarkdownStore({ root: folder });
    const memory = createRecord({ id: 'early', content: 'put before open', scope: {}, atIso: '2024-03-01T09:00:00.000Z' }, { importance: 1, category: 'fact', type: 'user' });
    const error = await store.apply([createChange(memory)]).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'INVALID_INPUT', backend: 'markdown' });
    expect((error as MemloomError).message).toContain('call open() first');
    // Opened afterwards, the store takes the put.
    await store.open({ dimension: 4, embedderId: 'test/vectors' });
    await store.apply([createChange(memory)]);
    await store.close();

    // Another store over the same folder knows the embedder from store.json without open(), and checks the dimension.
    const other = createMarkdownStore({ root: folder });
    const wrong = await other.apply([createChange({ ...memory, id: 'second' }, [1, 0, 0])]).catch((caught: unknown) => caught);
    expect(wrong).toMatchObject({ code: 'DIMENSION_MISMATCH', backend: 'markdown' });
    await other.apply([createChange({ ...memory, id: 'second' })]);
    expect(await other.getVector('second')).toEqual([1, 0, 0, 0]);
    await other.close();
  });
});

describe('options and the store file', () => {
  it('refuses a blank root (INVALID_OPTIONS)', () => {
    for (const blank of ['', '   ', '\t']) {
      expect(() => createMarkdownStore({ root: blank }), JSON.stringify(blank)).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', backend: 'markdown' }));
    }
  });

  it('refuses negative or non-numeric times and counts (INVALID_OPTIONS naming the option)', () => {
    const bad: Array<[string, object]> = [
      ['checkIntervalMs', { checkIntervalMs: -1 }],
      ['checkIntervalMs', { checkIntervalMs: '0' }],
      ['lockTimeoutMs', { lockTimeoutMs: -1 }],
      ['contextWeight', { contextWeight: -0.1 }],
    ];
    for (const [name, option] of bad) {
      expect(() => createMarkdownStore({ root: '/tmp/never-created', ...option }), name).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTIONS', backend: 'markdown', message: expect.stringContaining(name) }),
      );
    }
  });

  it('refuses a store.json of a newer format with SCHEMA_TOO_NEW and leaves the store untouched', async () => {
    const folder = await root();
    const store = createMarkdownStore({ root: folder });
    await store.open({ dimension: 4, embedderId: 'test/vectors' });
    await store.apply([createChange(createRecord({ id: 'ok', content: 'a memory', scope: {}, atIso: '2024-03-01T09:00:00.000Z' }, { importance: 1, category: 'fact', type: 'user' }))]);
    await store.close();
    const file = path.join(folder, '.memloom', 'store.json');
    const newer = JSON.stringify({ format: 2, embedderId: 'test/vectors', dimension: 4, more: 'things' });
    await writeFile(file, newer);
    const markdown = await readFile(path.join(folder, 'memory', 'MEMORY.md'), 'utf8');

    const reopened = createMarkdownStore({ root: folder });
    const error = await reopened.open({ dimension: 4, embedderId: 'test/vectors' }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'SCHEMA_TOO_NEW', backend: 'markdown' });
    expect((error as MemloomError).message).toMatch(/\.memloom\/store\.json was written by a newer @memloom\/store-markdown \(format 2; this one knows up to 1\)/u);
    await expect(reopened.list({})).rejects.toMatchObject({ code: 'SCHEMA_TOO_NEW' });
    expect(await readFile(file, 'utf8')).toBe(newer);
    expect(await readFile(path.join(folder, 'memory', 'MEMORY.md'), 'utf8')).toBe(markdown);
    // The format this package writes, or none (older files), opens.
    await writeFile(file, JSON.stringify({ embedderId: 'test/vectors', dimension: 4 }));
    const older = createMarkdownStore({ root: folder });
    await older.open({ dimension: 4, embedderId: 'test/vectors' });
    expect(await older.count({})).toBe(1);
    await older.close();
  });

  it('reads a store.json and a history saved with a UTF-8 byte order mark as without one', async () => {
    const folder = await root();
    const store = createMarkdownStore({ root: folder });
    await store.open({ dimension: 4, embedderId: 'test/vectors' });
    await store.apply([createChange(createRecord({ id: 'ok', content: 'a memory', scope: {}, atIso: '2024-03-01T09:00:00.000Z' }, { importance: 1, category: 'fact', type: 'user' }))]);
    await store.close();
    for (const file of [path.join(folder, '.memloom', 'store.json'), path.join(folder, 'memory', '.history', 'ok.jsonl')]) {
      await writeFile(file, `\uFEFF${await readFile(file, 'utf8')}`);
    }
    const reopened = createMarkdownStore({ root: folder });
    expect(await reopened.count({})).toBe(1);
    await reopened.open({ dimension: 4, embedderId: 'test/vectors' });
    expect((await reopened.history('ok')).map((version) => version.version)).toEqual([1]);
    await reopened.close();
  });
});

describe('ids and scope values holding a lone surrogate', () => {
  it('are refused (INVALID_INPUT, INVALID_SCOPE): they name files and folders, where two of them would become one', async () => {
    const store = createMarkdownStore({ root: await root() });
    await store.open({ dimension: 4, embedderId: 'test/vectors' });
    const memory = (id: string, userId: string) =>
      createRecord({ id, content: 'a memory', scope: { userId }, atIso: '2024-03-01T09:00:00.000Z' }, { importance: 1, category: 'fact', type: 'user' });
    await expect(store.apply([createChange(memory('id-\uD800', 'alice'))])).rejects.toMatchObject({ code: 'INVALID_INPUT', backend: 'markdown' });
    await expect(store.apply([createChange(memory('m1', 'u\uDBFF'))])).rejects.toMatchObject({ code: 'INVALID_SCOPE', backend: 'markdown' });
    expect(() => store.directoryFor({ userId: 'u\uD800' })).toThrow(/lone surrogate/u);
    // A whole pair is text like any other.
    await store.apply([createChange(memory('id-😀', 'u😀'))]);
    expect((await store.get('id-😀'))?.scope).toEqual({ userId: 'u😀' });
    await store.close();
  });
});
