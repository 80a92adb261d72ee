import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { MemloomError, validateScope, type MemoryRecord } from '@memloom/core';
import { afterEach, describe, expect, it } from 'vitest';
import { assertSafeScope, createMarkdownStore, decodeSegment, encodeSegment, scopeFolder, type MarkdownStore } from '../src/index.js';
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

const REFUSED = ['../bob', '..', '.', 'a/../../b', '/etc/passwd', '\\\\server\\share', 'C:\\Windows', 'c:evil', 'a\u0000b', 'tab\there',
  'con', 'CON', 'nul', 'Nul.txt', 'aux', 'prn', 'com1', 'COM9', 'lpt1', 'lpt3.log', 'con ', ''];

describe('scope values as folder names', () => {
  it.each(REFUSED)('refuses %j with INVALID_SCOPE and writes nothing', async (userId) => {
    store = createMarkdownStore({ root: await tempRoot() });
    await store.open({ dimension: 4, embedderId: 'test' });
    const error = await store.apply([put(record('x', userId))]).catch((caught: unknown) => caught);
    expect(MemloomError.hasCode(error, 'INVALID_SCOPE'), String(error)).toBe(true);
    expect((error as MemloomError).backend).toBe('markdown');
    expect(await walk(store.root)).not.toContain('users');
    expect(() => store!.directoryFor({ userId })).toThrow(MemloomError);
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
