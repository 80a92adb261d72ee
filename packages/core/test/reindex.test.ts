import { describe, expect, it } from 'vitest';
import { MemloomError, reindex, type MemoryStore } from '../src/index.js';
import { createInMemoryStore, createTestEmbedder } from '../src/testing/index.js';
import { createMemory } from '../src/memory.js';
import { MAX_REPEATED_PAGES } from '../src/store-reads.js';

async function seededStore(count: number): Promise<MemoryStore> {
  const store = createInMemoryStore();
  const memory = createMemory({ store, embedder: createTestEmbedder({ dimension: 8, id: 'old' }) });
  for (let index = 0; index < count; index++) await memory.add(`distinct fact number ${index} ${'x'.repeat(index)}`, { scope: { userId: 'alice' } });
  return store;
}

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
  } catch (error) {
    return MemloomError.isInstance(error) ? error.code : `not a MemloomError: ${String(error)}`;
  }
  return undefined;
}

describe('reindex()', () => {
  it('re-embeds every memory in batches, reports progress, and leaves the store on the new embedder', async () => {
    const store = await seededStore(5);
    const total = await store.count({});
    const embedder = createTestEmbedder({ dimension: 4, id: 'new' });
    const progress: number[] = [];
    const report = await reindex({ store, embedder, batchSize: 2, onProgress: (step) => progress.push(step.done) });
    expect(report).toEqual({ embedderId: 'new', dimension: 4, total, embedded: total, resumed: 0 });
    expect(progress[0]).toBe(0);
    expect(progress.at(-1)).toBe(total);
    const memory = createMemory({ store, embedder });
    expect((await memory.search('distinct fact', { scope: { userId: 'alice' } })).length).toBeGreaterThan(0);
  });

  it('refuses a store without the capability with NOT_SUPPORTED, and bad options with INVALID_OPTIONS', async () => {
    const plain = createInMemoryStore();
    const limited: MemoryStore = Object.assign(Object.create(plain) as MemoryStore, {
      capabilities: { textSearch: true, persistent: false, multiProcess: false },
    });
    const embedder = createTestEmbedder({ dimension: 4, id: 'new' });
    expect(await codeOf(reindex({ store: limited, embedder }))).toBe('NOT_SUPPORTED');
    expect(await codeOf(reindex({ store: plain, embedder, batchSize: 0 }))).toBe('INVALID_OPTIONS');
  });

  it('stops on abort, keeping what was staged, and a second run resumes', async () => {
    const store = await seededStore(6);
    const embedder = createTestEmbedder({ dimension: 4, id: 'new' });
    const controller = new AbortController();
    await expect(
      reindex({
        store,
        embedder,
        batchSize: 2,
        signal: controller.signal,
        onProgress: (step) => {
          if (step.done >= 4) controller.abort(new Error('enough'));
        },
      }),
    ).rejects.toThrow('enough');
    const report = await reindex({ store, embedder, batchSize: 2 });
    expect(report.resumed).toBe(4);
    expect(report.embedded).toBe(report.total - 4);
  });

  it('checks what the embedder returns', async () => {
    const store = await seededStore(2);
    const broken = { id: 'broken', dimension: 4, embed: async (texts: readonly string[]) => texts.map(() => [1, 2]) };
    expect(await codeOf(reindex({ store, embedder: broken }))).toBe('INVALID_EMBEDDING');
    const failing = { id: 'failing', dimension: 4, embed: async () => Promise.reject(new Error('model fell over')) };
    expect(await codeOf(reindex({ store, embedder: failing }))).toBe('EMBEDDER_ERROR');
  });

  it('gives up with CONFLICT when memories keep changing under every batch', async () => {
    const store = await seededStore(1);
    const stubborn: MemoryStore = Object.assign(Object.create(store) as MemoryStore, { stageReindex: async () => 0 });
    expect(await codeOf(reindex({ store: stubborn, embedder: createTestEmbedder({ dimension: 4, id: 'new' }) }))).toBe('CONFLICT');
  });

  it('stops with STORE_ERROR naming the store when pendingReindex gives the memories just staged again, instead of embedding forever', async () => {
    const store = await seededStore(5);
    const stuck = Object.create(store) as MemoryStore;
    let reads = 0;
    stuck.pendingReindex = async (limit) => {
      // Past a few reads the re-index is looping: fail the test rather than hang it.
      if (++reads > 5) throw new Error('the re-index keeps reading the same batch');
      return store.list({ orderBy: 'stored', limit });
    };
    const error = await reindex({ store: stuck, embedder: createTestEmbedder({ dimension: 4, id: 'new' }), batchSize: 2 }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ code: 'STORE_ERROR', backend: 'memory', message: expect.stringContaining('pendingReindex gave the same 2 memories') });
    // The first batch, then the same one MAX_REPEATED_PAGES times in a row.
    expect(reads).toBe(1 + MAX_REPEATED_PAGES);
  });
});
