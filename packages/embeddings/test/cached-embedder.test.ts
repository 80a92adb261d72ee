import { createMemory, type Embedder } from '@memloom/core';
import { createInMemoryStore, createTestEmbedder } from '@memloom/core/testing';
import { testEmbedder } from '@memloom/testkit';
import { describe, expect, it } from 'vitest';
import { createCachedEmbedder, type PersistentEmbeddingCache } from '../src/index.js';

testEmbedder({ name: 'cached (test embedder)', create: () => createCachedEmbedder(createTestEmbedder()), tolerance: 0 });

describe('cached embedder', () => {
  it('embeds a text once, however often it is asked for', async () => {
    const inner = createTestEmbedder();
    const cached = createCachedEmbedder(inner);
    const first = await cached.embed(['alpha', 'beta']);
    const second = await cached.embed(['beta', 'alpha', 'alpha']);
    expect(inner.calls).toEqual([['alpha', 'beta']]);
    expect(second).toEqual([first[1], first[0], first[0]]);
    expect(cached.stats()).toMatchObject({ hits: 3, misses: 2, entries: 2 });
  });

  it('asks the inner embedder only for the texts it lacks, once each', async () => {
    const inner = createTestEmbedder();
    const cached = createCachedEmbedder(inner);
    await cached.embed(['alpha']);
    await cached.embed(['alpha', 'gamma', 'gamma', 'delta']);
    expect(inner.calls).toEqual([['alpha'], ['gamma', 'delta']]);
  });

  it('keeps the same id and dimension, so stores see the same vector space', () => {
    const inner = createTestEmbedder({ dimension: 12, id: 'inner-id' });
    const cached = createCachedEmbedder(inner);
    expect(cached.id).toBe('inner-id');
    expect(cached.dimension).toBe(12);
  });

  it('keys by purpose unless purposes are shared', async () => {
    const separate = createTestEmbedder();
    const sharing = createTestEmbedder();
    const bySeparate = createCachedEmbedder(separate);
    const bySharing = createCachedEmbedder(sharing, { sharePurposes: true });
    for (const cached of [bySeparate, bySharing]) {
      await cached.embed(['alpha'], { purpose: 'document' });
      await cached.embed(['alpha'], { purpose: 'query' });
    }
    expect(separate.calls).toHaveLength(2);
    expect(sharing.calls).toHaveLength(1);
  });

  it('never mixes the vectors of two embedders that share a persistent level', async () => {
    const stored = new Map<string, number[]>();
    const persistent: PersistentEmbeddingCache = {
      getMany: async (keys) => new Map(keys.flatMap((key) => (stored.has(key) ? [[key, stored.get(key) as number[]] as const] : []))),
      setMany: async (entries) => {
        for (const [key, vector] of entries) stored.set(key, [...vector]);
      },
    };
    const one = createTestEmbedder({ id: 'one', vectors: { text: [1, 0, 0, 0] }, dimension: 4 });
    const two = createTestEmbedder({ id: 'two', vectors: { text: [0, 1, 0, 0] }, dimension: 4 });
    const [a] = await createCachedEmbedder(one, { persistent }).embed(['text']);
    const [b] = await createCachedEmbedder(two, { persistent }).embed(['text']);
    expect(a).toEqual([1, 0, 0, 0]);
    expect(b).toEqual([0, 1, 0, 0]);
    expect(stored.size).toBe(2);
  });

  it('reads the persistent level before embedding, so a new process does not re-embed', async () => {
    const stored = new Map<string, number[]>();
    const persistent: PersistentEmbeddingCache = {
      getMany: async (keys) => new Map(keys.flatMap((key) => (stored.has(key) ? [[key, stored.get(key) as number[]] as const] : []))),
      setMany: async (entries) => {
        for (const [key, vector] of entries) stored.set(key, [...vector]);
      },
    };
    const before = createTestEmbedder();
    const vectors = await createCachedEmbedder(before, { persistent }).embed(['alpha', 'beta']);
    const after = createTestEmbedder();
    const restarted = createCachedEmbedder(after, { persistent });
    expect(await restarted.embed(['beta', 'alpha', 'gamma'])).toEqual([vectors[1], vectors[0], (await before.embed(['gamma']))[0]]);
    expect(after.calls).toEqual([['gamma']]);
    expect(restarted.stats().persistentHits).toBe(2);
    // Keys have a fixed length whatever the text, so a store can index them.
    expect(new Set([...stored.keys()].map((key) => key.length)).size).toBe(1);
  });

  it('treats a failing or corrupt persistent level as empty, never as an error', async () => {
    const broken: PersistentEmbeddingCache = {
      getMany: async () => {
        throw new Error('disk gone');
      },
      setMany: async () => {
        throw new Error('disk full');
      },
    };
    const inner = createTestEmbedder();
    const cached = createCachedEmbedder(inner, { persistent: broken });
    expect(await cached.embed(['alpha'])).toEqual(await inner.embed(['alpha']));
    expect(cached.stats().persistentErrors).toBe(2);

    const corrupt: PersistentEmbeddingCache = {
      getMany: async (keys) => new Map(keys.map((key) => [key, [Number.NaN, 0, 0]])),
      setMany: async () => undefined,
    };
    const fresh = createTestEmbedder();
    const [vector] = await createCachedEmbedder(fresh, { persistent: corrupt }).embed(['beta']);
    expect(vector).toEqual((await fresh.embed(['beta']))[0]);
    expect(fresh.calls[0]).toEqual(['beta']);
  });

  it('treats a persistent level that throws synchronously, or answers with a non-Map, as a miss', async () => {
    const levels: Record<string, PersistentEmbeddingCache> = {
      getManyThrows: {
        getMany: () => {
          throw new Error('database is closed');
        },
        setMany: async () => undefined,
      },
      getManyPlainObject: {
        getMany: async (keys) => Object.fromEntries(keys.map((key) => [key, [1, 0, 0]])) as never,
        setMany: async () => undefined,
      },
      getManyUndefined: { getMany: async () => undefined as never, setMany: async () => undefined },
      setManyThrows: {
        getMany: async () => new Map(),
        setMany: () => {
          throw new Error('disk full');
        },
      },
    };
    for (const [name, persistent] of Object.entries(levels)) {
      const inner = createTestEmbedder();
      const cached = createCachedEmbedder(inner, { persistent });
      const result = await cached.embed(['alpha', 'beta']).catch((error: unknown) => error);
      expect(result, name).toEqual(await inner.embed(['alpha', 'beta']));
      expect(cached.stats().persistentErrors, name).toBe(1);
      expect(inner.calls[0], name).toEqual(['alpha', 'beta']);
    }
  });

  it('keys text with a lone surrogate apart from the same text with U+FFFD, and keeps every other key', async () => {
    const stored = new Map<string, number[]>();
    const persistent: PersistentEmbeddingCache = {
      getMany: async (keys) => new Map(keys.flatMap((key) => (stored.has(key) ? [[key, stored.get(key) as number[]] as const] : []))),
      setMany: async (entries) => {
        for (const [key, vector] of entries) stored.set(key, [...vector]);
      },
    };
    const lone = createTestEmbedder({ id: 'pinned', dimension: 4, vectors: { 'x\uD800': [1, 0, 0, 0], '\uDC00': [0, 0, 1, 0] } });
    await createCachedEmbedder(lone, { persistent }).embed(['x\uD800', '\uDC00']);
    // A new process asks for other texts that UTF-8 would turn into the same bytes.
    const other = createTestEmbedder({ id: 'pinned', dimension: 4, vectors: { 'x\uFFFD': [0, 1, 0, 0], '\uFFFD': [0, 0, 0, 1] } });
    const restarted = createCachedEmbedder(other, { persistent });
    expect(await restarted.embed(['x\uFFFD', '\uFFFD'])).toEqual([
      [0, 1, 0, 0],
      [0, 0, 0, 1],
    ]);
    expect(restarted.stats().persistentHits).toBe(0);
    expect(other.calls).toEqual([['x\uFFFD', '\uFFFD']]);
    expect(stored.size).toBe(4);
    // And the lone-surrogate texts still hit their own entries.
    const again = createCachedEmbedder(createTestEmbedder({ id: 'pinned', dimension: 4 }), { persistent });
    expect(await again.embed(['x\uD800', '\uDC00'])).toEqual([
      [1, 0, 0, 0],
      [0, 0, 1, 0],
    ]);
    expect(again.stats().persistentHits).toBe(2);

    // Well-formed text keeps the key earlier versions gave it (SHA-256 of the UTF-8 key), so existing caches keep hitting.
    const written: string[] = [];
    const recording: PersistentEmbeddingCache = {
      getMany: async () => new Map(),
      setMany: async (entries) => {
        written.push(...entries.keys());
      },
    };
    const pinned = createTestEmbedder({ id: 'pinned', dimension: 4 });
    await createCachedEmbedder(pinned, { persistent: recording }).embed(['coffee 咖啡 🎉 café']);
    await createCachedEmbedder(pinned, { persistent: recording, sharePurposes: true }).embed(['coffee 咖啡 🎉 café']);
    expect(written).toEqual(['b86bvRwk533F4H17QCJAmiyEHZBuRv0FZBWwNQDG45c', 'qCuTWXbZkjKC4XWL9S-tnI-Vt3YdeW0YVTqjm6UMkiQ']);
  });

  it('evicts the least recently used entry past maxEntries', async () => {
    const inner = createTestEmbedder();
    const cached = createCachedEmbedder(inner, { maxEntries: 2 });
    await cached.embed(['a1']);
    await cached.embed(['b2']);
    await cached.embed(['a1']); // a1 is now the most recent
    await cached.embed(['c3']); // evicts b2
    await cached.embed(['a1', 'b2']);
    expect(inner.calls).toEqual([['a1'], ['b2'], ['c3'], ['b2']]);
    expect(cached.stats().entries).toBe(2);
  });

  it('shares one embedding between concurrent calls for the same text', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const inner = createTestEmbedder();
    const slow: Embedder = {
      id: inner.id,
      dimension: inner.dimension,
      embed: async (texts, options) => {
        await gate;
        return inner.embed(texts, options);
      },
    };
    const cached = createCachedEmbedder(slow);
    const pending = [cached.embed(['same']), cached.embed(['same']), cached.embed(['same', 'other'])];
    release();
    const [first, second, third] = await Promise.all(pending);
    expect(inner.calls).toEqual([['same'], ['other']]);
    expect(second).toEqual(first);
    expect(third?.[0]).toEqual(first?.[0]);
  });

  it('does not cache a failure', async () => {
    let fail = true;
    const inner = createTestEmbedder();
    const flaky: Embedder = {
      id: 'flaky',
      dimension: inner.dimension,
      embed: async (texts) => {
        if (fail) throw new Error('model crashed');
        return inner.embed(texts);
      },
    };
    const cached = createCachedEmbedder(flaky);
    await expect(Promise.all([cached.embed(['x']), cached.embed(['x'])])).rejects.toThrow('model crashed');
    fail = false;
    expect(await cached.embed(['x'])).toHaveLength(1);
  });

  it('hands out copies, so a caller cannot corrupt the cache', async () => {
    const cached = createCachedEmbedder(createTestEmbedder());
    const [first] = await cached.embed(['alpha']);
    const original = [...(first as number[])];
    (first as number[])[0] = 42;
    expect((await cached.embed(['alpha']))[0]).toEqual(original);
  });

  it('rejects a wrong answer from the inner embedder', async () => {
    const short: Embedder = { id: 'short', dimension: 4, embed: async () => [] };
    await expect(createCachedEmbedder(short).embed(['a'])).rejects.toMatchObject({ code: 'INVALID_EMBEDDING' });
  });

  it('validates its options', () => {
    expect(() => createCachedEmbedder(createTestEmbedder(), { maxEntries: -1 })).toThrow(/maxEntries/);
    for (const sharePurposes of ['no', 1]) {
      expect(() => createCachedEmbedder(createTestEmbedder(), { sharePurposes } as never)).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining('sharePurposes') }));
    }
    expect(() => createCachedEmbedder(undefined as never)).toThrow(/needs an embedder/);
    for (const options of [null, 'fast', 3]) {
      expect(() => createCachedEmbedder(createTestEmbedder(), options as never)).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
    }
    expect(createCachedEmbedder(createTestEmbedder(), undefined).id).toBe('memloom/test-embedder');
  });

  it('spares re-embedding when memloom searches the same query again', async () => {
    const inner = createTestEmbedder();
    const memory = createMemory({ store: createInMemoryStore(), embedder: createCachedEmbedder(inner) });
    await memory.add('The user drinks black coffee');
    await memory.search('coffee');
    await memory.search('coffee');
    expect(inner.calls.flat()).toEqual(['The user drinks black coffee', 'coffee']);
  });
});
