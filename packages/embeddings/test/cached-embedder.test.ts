import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createMemory, type Embedder } from '@memloom/core';
import { createInMemoryStore, createTestEmbedder } from '@memloom/core/testing';
import { testEmbedder } from '@memloom/testkit';
import { describe, expect, it } from 'vitest';
import { createCachedEmbedder, type PersistentEmbeddingCache } from '../src/index.js';

/**
 * A remote-style embedder: answers once `release()` is called, and stops
 * (rejects with the signal's reason) when its call's signal aborts first.
 */
function gatedEmbedder() {
  const inner = createTestEmbedder();
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const embedder: Embedder = {
    id: inner.id,
    dimension: inner.dimension,
    embed: (texts, options) =>
      new Promise((resolve, reject) => {
        options?.signal?.addEventListener('abort', () => reject(options.signal?.reason));
        void gate.then(() => {
          if (!options?.signal?.aborted) resolve(inner.embed(texts));
        });
      }),
  };
  return { embedder, inner, release };
}

testEmbedder({ name: 'cached (test embedder)', create: () => createCachedEmbedder(createTestEmbedder()), tolerance: 0 });

/** A persistent level that finds nothing and records the keys written to it, in order. */
function recordingCache(): { written: string[]; recording: PersistentEmbeddingCache } {
  const written: string[] = [];
  const recording: PersistentEmbeddingCache = {
    getMany: async () => new Map(),
    setMany: async (entries) => {
      written.push(...entries.keys());
    },
  };
  return { written, recording };
}

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
    const { written, recording } = recordingCache();
    const pinned = createTestEmbedder({ id: 'pinned', dimension: 4 });
    await createCachedEmbedder(pinned, { persistent: recording }).embed(['coffee 咖啡 🎉 café']);
    await createCachedEmbedder(pinned, { persistent: recording, sharePurposes: true }).embed(['coffee 咖啡 🎉 café']);
    expect(written).toEqual(['b86bvRwk533F4H17QCJAmiyEHZBuRv0FZBWwNQDG45c', 'qCuTWXbZkjKC4XWL9S-tnI-Vt3YdeW0YVTqjm6UMkiQ']);
  });

  it("keys a query with the embedder's queryReading and leaves documents' keys as they were", async () => {
    const { written, recording } = recordingCache();
    const pinned = createTestEmbedder({ id: 'pinned', dimension: 4 });
    const reading = (queryReading: string): Embedder => ({ id: pinned.id, dimension: pinned.dimension, queryReading, embed: (texts, options) => pinned.embed(texts, options) });
    for (const embedder of [pinned, reading('r1'), reading('r2')]) {
      const cached = createCachedEmbedder(embedder, { persistent: recording });
      await cached.embed(['coffee'], { purpose: 'document' });
      await cached.embed(['coffee'], { purpose: 'query' });
    }
    const [plainDocument, plainQuery, r1Document, r1Query, r2Document, r2Query] = written;
    // Documents: one key whatever the reading. Queries: one key per reading, none the plain one.
    expect([r1Document, r2Document]).toEqual([plainDocument, plainDocument]);
    expect(new Set([plainQuery, r1Query, r2Query, plainDocument]).size).toBe(4);
    // The cache names the reading too, so a cache around it keys alike.
    expect(createCachedEmbedder(reading('r1')).queryReading).toBe('r1');
    expect(createCachedEmbedder(pinned).queryReading).toBeUndefined();
  });

  it('refuses sharePurposes for an embedder that reads a query otherwise than a document, and a queryReading that is no name', () => {
    const inner = createTestEmbedder();
    const reading = (queryReading: unknown) => ({ id: inner.id, dimension: inner.dimension, queryReading, embed: inner.embed }) as Embedder;
    expect(() => createCachedEmbedder(reading('r1'), { sharePurposes: true })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS', backend: 'embeddings', message: expect.stringContaining('sharePurposes') }),
    );
    expect(createCachedEmbedder(reading('r1'), { sharePurposes: false }).id).toBe(inner.id);
    for (const queryReading of ['', 3, null]) {
      expect(() => createCachedEmbedder(reading(queryReading))).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining('queryReading') }));
    }
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

  it("never fails a caller with another caller's abort on the same text", async () => {
    const { embedder, inner, release } = gatedEmbedder();
    const cached = createCachedEmbedder(embedder);
    const controller = new AbortController();
    const aborting = cached.embed(['tea', 'coffee'], { signal: controller.signal });
    const waiting = cached.embed(['tea']);
    const ownAbort = new AbortController();
    const alsoAborting = cached.embed(['coffee'], { signal: ownAbort.signal });
    controller.abort();
    ownAbort.abort();
    await expect(aborting).rejects.toMatchObject({ name: 'AbortError' });
    // Its own signal aborted too: that abort is this caller's to see.
    await expect(alsoAborting).rejects.toMatchObject({ name: 'AbortError' });
    release();
    expect(await waiting).toEqual(await createTestEmbedder().embed(['tea']));
    // Embedded again for the waiting caller, without the aborted caller's signal.
    expect(inner.calls).toEqual([['tea']]);
    expect(await cached.embed(['tea'])).toEqual(await waiting);
    // Five lookups: 'tea' and 'coffee' missed, 'coffee' shared, 'tea' shared then missed again, 'tea' found.
    expect(cached.stats()).toMatchObject({ hits: 2, misses: 3 });
  });

  it('lets a waiting caller see a shared embedding fail while it still waits for its own texts, without an unhandled rejection', async () => {
    let failShared: (error: Error) => void = () => undefined;
    let releaseOwn: () => void = () => undefined;
    const inner = createTestEmbedder();
    const embedder: Embedder = {
      id: inner.id,
      dimension: inner.dimension,
      embed: (texts) =>
        new Promise((resolve, reject) => {
          if (texts.includes('tea')) failShared = reject;
          else releaseOwn = () => resolve(inner.embed(texts));
        }),
    };
    const cached = createCachedEmbedder(embedder);
    const starter = cached.embed(['tea']);
    const waiter = cached.embed(['coffee', 'tea']);
    await Promise.resolve();
    // The shared text fails while the waiter still waits for "coffee": nothing listens to that copy yet.
    failShared(new Error('request timed out'));
    await expect(starter).rejects.toThrow('request timed out');
    // A turn of the event loop: Node would flag an unhandled rejection here (vitest fails the run).
    await new Promise((resolve) => setImmediate(resolve));
    releaseOwn();
    await expect(waiter).rejects.toThrow('request timed out');
  });

  it("ends a waiting caller's wait on a shared embedding as soon as its own signal aborts", async () => {
    const { embedder, release } = gatedEmbedder();
    const cached = createCachedEmbedder(embedder);
    const starter = cached.embed(['tea']);
    const controller = new AbortController();
    const waiter = cached.embed(['tea'], { signal: controller.signal });
    controller.abort(new Error('the user left'));
    await expect(waiter).rejects.toThrow('the user left');
    release();
    expect(await starter).toEqual(await createTestEmbedder().embed(['tea']));
  });

  it('lets a memory add go on when another add of the same text is aborted', async () => {
    const { embedder, release } = gatedEmbedder();
    const cached = createCachedEmbedder(embedder);
    // Abort once both adds are waiting on the cache, so they share one embedding.
    let arrived = 0;
    let bothArrived: () => void = () => undefined;
    const both = new Promise<void>((resolve) => {
      bothArrived = resolve;
    });
    const counting: Embedder = {
      id: cached.id,
      dimension: cached.dimension,
      embed: (texts, options) => {
        if (++arrived === 2) bothArrived();
        return cached.embed(texts, options);
      },
    };
    const memory = createMemory({ store: createInMemoryStore(), embedder: counting });
    const controller = new AbortController();
    const alice = memory.add('I like tea', { scope: { userId: 'alice' }, signal: controller.signal });
    const bob = memory.add('I like tea', { scope: { userId: 'bob' } });
    await both;
    controller.abort();
    await expect(alice).rejects.toMatchObject({ name: 'AbortError' });
    release();
    await expect(bob).resolves.toBeDefined();
    expect(await memory.list({ scope: { userId: 'bob' } })).toHaveLength(1);
  });

  it('keys entries by a digest, so the texts of cached vectors are not kept in memory', async () => {
    setFlagsFromString('--expose-gc');
    const collect = runInNewContext('gc') as () => void;
    const cheap: Embedder = { id: 'cheap', dimension: 4, embed: async (texts) => texts.map(() => [1, 0, 0, 0]) };
    const cached = createCachedEmbedder(cheap);
    collect();
    const before = process.memoryUsage().heapUsed;
    // 20 texts of 2.5 MB: 50 MB if the entries held them.
    for (let index = 0; index < 20; index++) await cached.embed([`${index} ${'word '.repeat(500_000)}`]);
    collect();
    expect(cached.stats().entries).toBe(20);
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(10_000_000);
  });

  it('refuses a NaN or wrong-length vector from the inner embedder, and neither keeps nor stores it', async () => {
    const written: number[][] = [];
    const persistent: PersistentEmbeddingCache = {
      getMany: async () => new Map(),
      setMany: async (entries) => {
        written.push(...[...entries.values()].map((vector) => [...vector]));
      },
    };
    let answers = [[Number.NaN, 0], [1]];
    const calls: string[][] = [];
    const flaky: Embedder = {
      id: 'flaky',
      dimension: 2,
      embed: async (texts) => {
        calls.push([...texts]);
        return texts.map(() => answers.shift() ?? [1, 0]);
      },
    };
    const cached = createCachedEmbedder(flaky, { persistent });
    await expect(cached.embed(['x'])).rejects.toMatchObject({ code: 'INVALID_EMBEDDING', backend: 'embeddings', message: expect.stringMatching(/flaky returned a vector with a non-finite value \(NaN\)/) });
    await expect(cached.embed(['x'])).rejects.toMatchObject({ code: 'INVALID_EMBEDDING', message: expect.stringMatching(/flaky returned a vector of dimension 1; expected 2/) });
    expect(written).toEqual([]);
    answers = [];
    expect(await cached.embed(['x'])).toEqual([[1, 0]]);
    expect(await cached.embed(['x'])).toEqual([[1, 0]]);
    expect(calls).toEqual([['x'], ['x'], ['x']]);
    expect(written).toEqual([[1, 0]]);
  });

  it('refuses unknown options and a persistent level without getMany and setMany', () => {
    const invalid = (pattern: RegExp) => expect.objectContaining({ code: 'INVALID_OPTIONS', backend: 'embeddings', message: expect.stringMatching(pattern) });
    expect(() => createCachedEmbedder(createTestEmbedder(), { maxEntires: 1 } as never)).toThrow(invalid(/createCachedEmbedder: unknown option "maxEntires"/));
    for (const persistent of [5, {}, null, { getMany: async () => new Map() }]) {
      expect(() => createCachedEmbedder(createTestEmbedder(), { persistent } as never)).toThrow(invalid(/persistent must be an object with getMany and setMany/));
    }
    expect(() => createCachedEmbedder(createTestEmbedder(), { maxEntries: '5' } as never)).toThrow(invalid(/maxEntries .* got "5"/));
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
