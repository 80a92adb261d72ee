import { describe, expect, it } from 'vitest';
import { assertPutNumbering, assertQueryInput, byScoreThenId, createMemory, DEFAULT_RECALL_FILTER, FlatVectorIndex, MemloomError, missingStoreError, readOnlyStoreError, reindex, scoreThenId } from '../src/index.js';
import { createInMemoryStore, createTestEmbedder } from '../src/testing/index.js';

describe('missingStoreError', () => {
  it('builds MISSING_RESOURCE in the one wording every store uses, with mustExist in its details', () => {
    const cause = new Error('ENOENT');
    const error = missingStoreError({ backend: 'sqlite', where: 'at /data/m.db', what: 'the file does not exist', check: 'the path', details: { path: '/data/m.db' }, cause });
    expect(MemloomError.hasCode(error, 'MISSING_RESOURCE')).toBe(true);
    expect(error.backend).toBe('sqlite');
    expect(error.message).toBe(
      '[memloom] [sqlite] no store at /data/m.db: the file does not exist, and nothing was created (mustExist). Check the path, or create the store by opening it without mustExist',
    );
    expect(error.details).toEqual({ path: '/data/m.db', mustExist: true });
    expect(error.cause).toBe(cause);
  });
});

describe('readOnlyStoreError', () => {
  it('builds STORE_ERROR in the one wording the file stores use, with readonly: true in its details', () => {
    const cause = new Error('EACCES');
    const error = readOnlyStoreError({ backend: 'sqlite', doing: 'applying changes', what: '/data/m.db', why: ' (its permissions, or a read-only disk)', details: { path: '/data/m.db' }, cause });
    expect(MemloomError.hasCode(error, 'STORE_ERROR')).toBe(true);
    expect(error.backend).toBe('sqlite');
    expect(error.message).toBe('[memloom] [sqlite] applying changes: /data/m.db is read-only for this process (its permissions, or a read-only disk)');
    expect(error.details).toEqual({ path: '/data/m.db', readonly: true });
    expect(error.cause).toBe(cause);
    // The flag wins over details that say otherwise: it is what callers test.
    expect(readOnlyStoreError({ backend: 'qdrant', doing: 'upsert', what: 'collection "m"', why: ': this API key may only read', details: { readonly: false } }).details).toEqual({ readonly: true });
  });
});

describe('shared values and orders', () => {
  it('DEFAULT_RECALL_FILTER is frozen, its category list too: one adapter cannot change what the others recall', () => {
    expect(Object.isFrozen(DEFAULT_RECALL_FILTER)).toBe(true);
    expect(Object.isFrozen(DEFAULT_RECALL_FILTER.category)).toBe(true);
    expect(() => (DEFAULT_RECALL_FILTER.category as string[]).push('system')).toThrow(TypeError);
    expect(DEFAULT_RECALL_FILTER).toEqual({ category: ['core', 'fact', 'episode'] });
  });

  it('byScoreThenId and scoreThenId: the higher score first, ties by id in code unit order', () => {
    const hits = [
      { memory: { id: 'b' }, score: 0.5 },
      { memory: { id: 'c' }, score: 0.9 },
      { memory: { id: 'a' }, score: 0.5 },
      { memory: { id: 'B' }, score: 0.5 },
    ];
    expect(hits.sort(byScoreThenId).map((hit) => hit.memory.id)).toEqual(['c', 'B', 'a', 'b']);
    expect(scoreThenId(1, 'x', 1, 'x')).toBe(0);
    expect(scoreThenId(0.2, 'a', 0.3, 'b')).toBeGreaterThan(0);
  });
});

describe('messages show a value of the wrong type as given (describeValue)', () => {
  const messageOf = async (work: () => unknown): Promise<string> => {
    try {
      await work();
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error('expected an error');
  };

  it('quote a string where a number belongs, and name an object instead of printing [object Object]', async () => {
    const embedder = createTestEmbedder({ dimension: 4 });
    expect(await messageOf(() => reindex({ store: createInMemoryStore(), embedder, batchSize: '2' as never }))).toContain('got "2"');
    expect(await messageOf(() => reindex({ store: createInMemoryStore(), embedder, contextWeight: {} as never }))).toContain('got an object');
    expect(await messageOf(() => createMemory({ store: createInMemoryStore(), embedder: { ...embedder, embed: embedder.embed, dimension: '4' as never } }))).toContain('got "4"');
    expect(await messageOf(() => new FlatVectorIndex('8' as never))).toContain('got "8"');
    expect(await messageOf(() => new FlatVectorIndex(8, { maxBytes: '1' as never }))).toContain('got "1"');
    expect(await messageOf(() => assertQueryInput({ limit: '3' }, 'vectorSearch', 'memory'))).toContain('got "3"');
    const memory = { id: 'm1', revision: 1 };
    expect(await messageOf(() => assertPutNumbering({ memory, expectedRevision: '0' as never, version: { version: 1 } }, 'sqlite'))).toContain('got "0"');
  });
});
