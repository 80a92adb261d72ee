import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { createMemory, inScope, MemloomError, validateScope, type MemoryRecord, type Scope } from '@memloom/core';
import { createFakeClock, createTestEmbedder } from '@memloom/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { assertSafeScope, createMarkdownStore, decodeSegment, encodeSegment, scopeFolder, type MarkdownStore } from '../src/index.js';
import { decodeScopeSegment, scopeSegment } from '../src/scope-path.js';
import { removeStoreFiles, tempRoot } from './helpers.js';

let store: MarkdownStore | undefined;
afterEach(async () => {
  if (!store) return;
  await store.close();
  await removeStoreFiles(store);
  store = undefined;
});

function record(id: string, userId: string): MemoryRecord {
  const at = '2024-01-01T00:00:00.000Z';
  return {
    id, content: `memory of ${JSON.stringify(userId)}`, level: 'full', weight: 1, baseWeight: 1, importance: 1, baseImportance: 1,
    category: 'fact', type: 'user', scope: { userId }, createdAt: at, updatedAt: at, lastAccessedAt: at, source: 'user',
    verified: true, sources: [], tags: [], metadata: {}, revision: 1,
  };
}

function put(memory: MemoryRecord) {
  return {
    op: 'put' as const, memory, vector: [1, 0, 0, 0], expectedRevision: 0,
    version: { memoryId: memory.id, version: 1, at: memory.createdAt, trigger: 'import' as const, action: 'create' as const, reason: 'test', before: null, after: memory },
  };
}

/** Every file and folder under `directory`, relative. */
async function walk(directory: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(directory, { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    out.push(rel);
    if (entry.isDirectory()) out.push(...(await walk(path.join(directory, entry.name), rel)));
  }
  return out;
}

/** Refused as core's validateScope refuses them (blank, control characters); a lone surrogate is in errors.test.ts. */
const REFUSED = ['a\u0000b', 'tab\there', '', '   '];

/**
 * Values core's validateScope takes that this store refused before (as path traversal, absolute
 * paths or device names), though it encodes every byte that could make them so. The first four are
 * the ones a user audit found.
 */
const ONCE_REFUSED = ['Con', 'u:42', 'aux.team', 'nul', '../bob', '..', '.', 'a/../../b', '/etc/passwd', '\\\\server\\share', 'C:\\Windows',
  'c:evil', 'c:', 'con', 'CON', 'Nul.txt', 'aux', 'prn', 'com1', 'COM9', 'lpt0', 'lpt3.log', 'con ', 'nul.', 'com\u00b9', 'CONIN$', 'clock$', 'com0.tar.gz'];

/** Windows device names, whatever their case and extension (the list Windows checks, not the store's). */
const DEVICE = /^(con|prn|aux|nul|com[0-9\u00b9\u00b2\u00b3]|lpt[0-9\u00b9\u00b2\u00b3]|conin\$|conout\$|clock\$)(\.|$)/iu;

/** Whether a file or folder name can be made, and found as itself, on Windows, macOS and Linux alike. */
function portable(name: string): boolean {
  return name.length <= 255 && /^[\x21-\x7e]+$/u.test(name) && !/[<>:"/\\|?*]/u.test(name) && !/[. ]$/u.test(name) && !DEVICE.test(name);
}

describe('scope values as folder names', () => {
  it.each(REFUSED)('refuses %j with INVALID_SCOPE and writes nothing', async (userId) => {
    store = createMarkdownStore({ root: await tempRoot() });
    await store.open({ dimension: 4, embedderId: 'test' });
    const error = await store.apply([put(record('x', userId))]).catch((caught: unknown) => caught);
    expect(MemloomError.hasCode(error, 'INVALID_SCOPE'), String(error)).toBe(true);
    expect((error as MemloomError).backend).toBe('markdown');
    expect(() => validateScope({ userId })).toThrow(MemloomError);
    expect(await walk(store.root)).not.toContain('users');
    expect(() => store!.directoryFor({ userId })).toThrow(MemloomError);
  });

  it("stores every value core's validateScope takes: add, list by scope, get, reopen, in portable folder names", { timeout: 30_000 }, async () => {
    const root = await tempRoot();
    const embedder = createTestEmbedder({ dimension: 16 });
    const clock = createFakeClock('2024-03-01T09:00:00.000Z');
    const scopes: Scope[] = [
      ...ONCE_REFUSED.map((userId) => ({ userId })),
      { userId: 'nul', agentId: 'Con', sessionId: 'u:42' },
      { agentId: 'aux.team', sessionId: '..' },
    ];
    for (const scope of scopes) expect(validateScope(scope)).toEqual(scope);
    store = createMarkdownStore({ root, embedder, clock });
    let memory = createMemory({ store, embedder, clock });
    const ids: string[] = [];
    for (const scope of scopes) {
      const added = await memory.add(`a memory of ${JSON.stringify(scope)}`, { scope });
      ids.push(added.memory.id);
      expect(path.relative(root, store.directoryFor(scope)).startsWith('..')).toBe(false);
    }
    const check = async () => {
      for (const [index, scope] of scopes.entries()) {
        const inside = ids.filter((_, other) => inScope(scopes[other]!, scope));
        expect(inside).toContain(ids[index]);
        expect((await memory.list({ scope })).map((found) => found.id).sort(), JSON.stringify(scope)).toEqual(inside.sort());
        expect((await memory.get(ids[index]!))?.scope).toEqual(scope);
      }
    };
    await check();
    await memory.close();
    store = createMarkdownStore({ root, embedder, clock });
    memory = createMemory({ store, embedder, clock });
    await check();

    // Every name under the root, folders and files, could be copied to Windows or macOS as it is.
    const names = await walk(root);
    for (const name of names) expect(portable(path.basename(name)), name).toBe(true);
    const byFolder = new Map<string, string[]>();
    for (const name of names) byFolder.set(path.dirname(name), [...(byFolder.get(path.dirname(name)) ?? []), path.basename(name)]);
    for (const [folder, entries] of byFolder) expect(new Set(entries.map((entry) => entry.toLowerCase())).size, folder).toBe(entries.length);
  });

  it('names the folder of every value accepted before as before, so stores written by earlier versions are found', () => {
    // Folder names the previous release wrote (its encodeSegment), copied from its output.
    const before: Record<string, string> = {
      alice: 'alice', Alice: '%41lice', 'a/b': 'a%2Fb', 'NUL-not-reserved': '%4E%55%4C-not-reserved', 'nul-x': 'nul-x', 'con-1': 'con-1',
      auxiliary: 'auxiliary', com10: 'com10', lpt: 'lpt', 'x.con': 'x.con', conx: 'conx', con_: 'con_', ' spaced ': '%20spaced%20', '..a': '%2E.a',
      'a..': 'a.%2E', 用户甲: '%E7%94%A8%E6%88%B7%E7%94%B2', '~root': '%7Eroot', $HOME: '%24%48%4F%4D%45', 'a.b.c': 'a.b.c',
      ['長'.repeat(200)]: '~%E9%95%B7%E9%95%B7%E9%95%B7%E9%95%B7%E9%95%B7%E9~9024518045a5a6695a7f87e3',
      [`nul${'x'.repeat(120)}`]: '~nulxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx~a92ac22186b033be417e41f5',
    };
    for (const [value, folder] of Object.entries(before)) {
      expect(scopeSegment(value), value).toBe(folder);
      expect(scopeFolder({ userId: value })).toBe(`users/${folder}`);
      if (!folder.startsWith('~')) expect(decodeScopeSegment(folder)).toBe(value);
    }
    // The values refused before get names of their own, which no other value has.
    expect(ONCE_REFUSED.slice(0, 4).map(scopeSegment)).toEqual(['%43on', 'u%3A42', '%61ux.team', '%6Eul']);
    for (const value of ONCE_REFUSED) expect(decodeScopeSegment(scopeSegment(value)), value).toBe(value);
    // A folder a person named "nul" by hand is no scope: "nul" lives in %6Eul.
    expect(decodeScopeSegment('nul')).toBeUndefined();
  });

  it("takes a scope's shape as core's validateScope does: null is the empty scope, null values and unknown keys are INVALID_SCOPE", async () => {
    const outcome = (check: () => unknown) => {
      try {
        return { scope: check() };
      } catch (error) {
        return { code: MemloomError.isInstance(error) ? error.code : String(error), field: MemloomError.isInstance(error) ? error.details.field : undefined };
      }
    };
    const scopes: unknown[] = [undefined, null, {}, { userId: 'alice', agentId: undefined }, { userId: null }, { sessionId: null, userId: 'alice' }, { tenant: undefined }, { userId: 'a', tenant: 'x' }, 'alice', ['alice'], { userId: 5 }];
    for (const scope of scopes) expect(outcome(() => assertSafeScope(scope)), JSON.stringify(scope)).toEqual(outcome(() => validateScope(scope)));
    expect(outcome(() => assertSafeScope({ userId: null }))).toEqual({ code: 'INVALID_SCOPE', field: 'userId' });
    store = createMarkdownStore({ root: await tempRoot() });
    await store.open({ dimension: 4, embedderId: 'test' });
    expect(store.directoryFor(null as never)).toBe(store.directoryFor({}));
    const error = await store.apply([put({ ...record('x', 'alice'), scope: { userId: null } as never })]).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'INVALID_SCOPE', backend: 'markdown', details: { field: 'userId' } });
    expect(await store.count({})).toBe(0);
  });

  it('keeps values apart that differ only in case, even on a case-insensitive filesystem', () => {
    const values = ['alice', 'Alice', 'ALICE', 'aLiCe', 'alice%41', 'alice.', '.alice', 'a/b', 'a%2Fb', 'a_b', 'a b', '用户甲', '~x'];
    const folders = values.map(encodeSegment);
    expect(new Set(folders.map((name) => name.toLowerCase())).size).toBe(values.length);
    for (const [index, name] of folders.entries()) {
      expect(name).not.toMatch(/[/\\\u0000]/u);
      expect(name.startsWith('.')).toBe(false);
      expect(decodeSegment(name)).toBe(values[index]);
    }
    expect(encodeSegment('alice')).toBe('alice');
    expect(scopeFolder({ userId: 'alice', sessionId: 's1' })).toBe('users/alice/sessions/s1');
  });

  it('gives long values a hashed folder and finds them again after a reopen', async () => {
    const root = await tempRoot();
    store = createMarkdownStore({ root });
    await store.open({ dimension: 4, embedderId: 'test' });
    const long = '長'.repeat(200);
    const longer = `${long}!`;
    expect(encodeSegment(long).length).toBeLessThan(120);
    expect(encodeSegment(long)).not.toBe(encodeSegment(longer));
    await store.apply([put(record('long-1', long)), put(record('long-2', longer))]);
    await store.close();
    store = createMarkdownStore({ root });
    expect((await store.list({ scope: { userId: long } })).map((memory) => memory.id)).toEqual(['long-1']);
    expect((await store.get('long-2'))?.scope).toEqual({ userId: longer });
    // A long value that starts with U+FEFF keeps it: in the folder's value file it is no byte order mark.
    const marked = `\uFEFF${'x'.repeat(150)}`;
    await store.apply([put(record('marked-1', marked))]);
    await store.close();
    store = createMarkdownStore({ root });
    expect((await store.list({ scope: { userId: marked } })).map((memory) => memory.id)).toEqual(['marked-1']);
  });

  it('writes every scope inside the root, whatever the value', async () => {
    store = createMarkdownStore({ root: await tempRoot() });
    await store.open({ dimension: 4, embedderId: 'test' });
    const values = ['a/b', 'x\\y', '%2e%2e', '..a', 'a..', 'NUL-not-reserved', ' spaced ', '$HOME', '~root'];
    await store.apply(values.map((value, index) => put(record(`m${index}`, value))));
    for (const value of values) {
      const directory = store.directoryFor({ userId: value });
      expect(path.relative(store.root, directory).startsWith('..')).toBe(false);
      expect(path.dirname(path.dirname(path.dirname(directory)))).toBe(store.root);
    }
    const reopened = createMarkdownStore({ root: store.root });
    for (const [index, value] of values.entries()) {
      expect((await reopened.list({ scope: { userId: value } })).map((memory) => memory.id)).toEqual([`m${index}`]);
    }
    await reopened.close();
    expect(assertSafeScope({ userId: 'a/b' })).toEqual({ userId: 'a/b' });
  });
});
