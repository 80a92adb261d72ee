import { keywordText, MemloomError, TOKENIZER_VERSION, type MemoryRecord } from '@memloom/core';
import { create, record, replace } from '@memloom/testkit';
import { describe, expect, it } from 'vitest';
import { createQdrantStore, type QdrantProgress } from '../src/index.js';
import { toMemoryPayload } from '../src/payload.js';
import { META_POINT_ID, memoryPointId } from '../src/point-ids.js';
import { documentVector, memoryTextVector } from '../src/sparse-text.js';
import { httpError, metaPoint, scriptedClient } from './fake-client.js';
import { miniQdrant } from './mini-qdrant.js';

const OPEN = { dimension: 8, embedderId: 'test/embedder' };
const BM25 = { k1: 1.2, b: 0.75, averageLength: 16 };
const REBUILD = ['count', 'scroll', 'batchUpdate', 'setPayload'];

const WALKS = record({ content: 'Alice walks her dog every morning' });
const LISBON = record({ content: 'I moved to Lisbon', context: 'we talked about relocating for work' });
// Only stopwords: no terms under the current tokenizer, so its old text vector must go.
const STOPWORDS = record({ content: 'the and of' });

/** A memory point as the store wrote it, as a scroll returns it (no vectors). */
function scrolled(memory: MemoryRecord) {
  return { id: memoryPointId(memory.id), payload: { ...toMemoryPayload(memory, `write-${memory.id}`) } };
}

/** A collection whose meta says `tokenizerVersion` (null: says none) and holds the three memories above, two per page. */
function outdated(tokenizerVersion: number | null, batchUpdate?: (collection: string, body: any) => unknown) {
  const [first, second, third] = [WALKS, LISBON, STOPWORDS].map(scrolled);
  return scriptedClient({
    retrieve: () => [metaPoint('test/embedder', 1, tokenizerVersion)],
    count: () => ({ count: 3 }),
    scroll: (_collection: string, body: any) =>
      body.offset === undefined ? { points: [first, second], next_page_offset: third!.id } : { points: [third], next_page_offset: null },
    ...(batchUpdate ? { batchUpdate } : {}),
  });
}

describe('open: keyword vectors made by another tokenizer version', () => {
  for (const [what, version] of [['version 2', 2], ['no version (made before it was recorded)', null]] as const) {
    it(`${what}: every memory's text vector is rewritten from its content and context, page by page, and the version recorded last`, async () => {
      expect(memoryTextVector(STOPWORDS, BM25)).toBeUndefined();
      const fake = outdated(version);
      const progress: QdrantProgress[] = [];
      await createQdrantStore({ client: fake.client, batchSize: 2, onProgress: (step) => void progress.push(step) }).open(OPEN);

      const scrolls = fake.bodies('scroll');
      expect(scrolls).toHaveLength(2);
      // Read from a majority: the rewrite is conditional on the write read, which a replica behind would get wrong.
      expect(scrolls[0]).toMatchObject({
        filter: { must: [{ key: 'kind', match: { value: 'memory' } }] },
        limit: 2,
        with_payload: true,
        with_vector: false,
        consistency: 'majority',
      });
      expect(scrolls[1]).toMatchObject({ limit: 2, offset: memoryPointId(STOPWORDS.id) });

      const [firstPage, secondPage] = fake.bodies('batchUpdate');
      // Only the sparse vector, and only where the memory still holds the write that was read.
      expect(firstPage).toEqual({
        wait: true,
        ordering: 'strong',
        operations: [
          {
            update_vectors: {
              points: [
                { id: memoryPointId(WALKS.id), vector: { text: documentVector(keywordText(WALKS), BM25) } },
                { id: memoryPointId(LISBON.id), vector: { text: documentVector(keywordText(LISBON), BM25) } },
              ],
              update_filter: { must: [{ key: 'writeId', match: { any: [`write-${WALKS.id}`, `write-${LISBON.id}`] } }] },
            },
          },
        ],
      });
      // The context's words are terms too, as when the memory is put.
      expect(documentVector(keywordText(LISBON), BM25)).not.toEqual(documentVector(LISBON.content, BM25));
      expect(secondPage.operations).toEqual([
        {
          delete_vectors: {
            filter: { must: [{ has_id: [memoryPointId(STOPWORDS.id)] }, { key: 'writeId', match: { any: [`write-${STOPWORDS.id}`] } }] },
            vector: ['text'],
          },
        },
      ]);

      const writes = fake.methods().filter((method) => method === 'batchUpdate' || method === 'setPayload');
      expect(writes).toEqual(['batchUpdate', 'batchUpdate', 'setPayload']);
      expect(fake.bodies('setPayload')).toEqual([
        { wait: true, ordering: 'strong', points: [META_POINT_ID], payload: { tokenizerVersion: TOKENIZER_VERSION } },
      ]);
      expect(progress).toEqual([
        { task: 'retokenize', done: 0, total: 3 },
        { task: 'retokenize', done: 2, total: 3 },
        { task: 'retokenize', done: 3, total: 3 },
      ]);
    });
  }

  it('stopped midway (a request fails), leaves the version unrecorded; the next open does it all again', async () => {
    let failing = true;
    const fake = outdated(2, (_collection, body) => {
      if (failing && body.operations[0].delete_vectors) throw httpError(400, 'Bad request: no');
      return [{ operation_id: 1, status: 'completed' }];
    });
    const error = await createQdrantStore({ client: fake.client, batchSize: 2 }).open(OPEN).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(MemloomError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'STORE_ERROR', backend: 'qdrant', details: { operation: 'rewrite keyword vectors' } });
    expect(fake.bodies('batchUpdate')).toHaveLength(2);
    expect(fake.methods()).not.toContain('setPayload');

    failing = false;
    await createQdrantStore({ client: fake.client, batchSize: 2 }).open(OPEN);
    // The first page again (its memories were done already: the same vectors, harmless), then the rest.
    expect(fake.bodies('batchUpdate')).toHaveLength(4);
    expect(fake.bodies('batchUpdate')[2]).toEqual(fake.bodies('batchUpdate')[0]);
    expect(fake.bodies('setPayload')).toEqual([expect.objectContaining({ points: [META_POINT_ID], payload: { tokenizerVersion: TOKENIZER_VERSION } })]);
  });

  it('the current version: nothing is read or rewritten', async () => {
    const fake = outdated(TOKENIZER_VERSION);
    const progress: QdrantProgress[] = [];
    await createQdrantStore({ client: fake.client, batchSize: 2, onProgress: (step) => void progress.push(step) }).open(OPEN);
    expect(fake.methods().filter((method) => REBUILD.includes(method))).toEqual([]);
    expect(progress).toEqual([]);
  });

  it('is done with mustExist too, as SQLite does: a reader\'s keyword search needs current terms', async () => {
    const fake = outdated(2);
    await createQdrantStore({ client: fake.client, batchSize: 2, mustExist: true }).open(OPEN);
    expect(fake.methods().filter((method) => method === 'batchUpdate' || method === 'setPayload')).toEqual(['batchUpdate', 'batchUpdate', 'setPayload']);
  });
});

describe('open with a key that may not write (HTTP 403, as a read-only API key gets), keyword vectors of another tokenizer version', () => {
  const forbidden = () => {
    throw httpError(403, 'Forbidden: Write operations are forbidden');
  };

  it('keeps the older terms, as SQLite does with a file it may not write: the open succeeds, records no version, and keyword search works', async () => {
    const fake = outdated(2, forbidden);
    const store = createQdrantStore({ client: fake.client, batchSize: 2, mustExist: true });
    await store.open(OPEN);
    // The first rewrite was refused: nothing more is tried, and the version stays unrecorded for a store that may write.
    expect(fake.methods().filter((method) => method === 'batchUpdate' || method === 'setPayload')).toEqual(['batchUpdate']);
    await store.textSearch!({ text: 'walks', limit: 2 });
    expect(fake.methods()).toContain('query');
  });

  it('with no memories to rewrite, the refused version record is no failure either', async () => {
    const fake = scriptedClient({ retrieve: () => [metaPoint('test/embedder', 1, 2)], setPayload: forbidden });
    await createQdrantStore({ client: fake.client, mustExist: true }).open(OPEN);
    expect(fake.methods().filter((method) => REBUILD.includes(method))).toEqual(['count', 'scroll', 'setPayload']);
  });

  it.each(['count', 'scroll'] as const)('a read it refuses (%s: a key that may not read the collection) still fails the open', async (refused) => {
    const fake = scriptedClient({ retrieve: () => [metaPoint('test/embedder', 1, 2)], [refused]: forbidden });
    const error = await createQdrantStore({ client: fake.client, batchSize: 2 }).open(OPEN).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    // Before: taken as a key that may only read, and the open went on with the older terms.
    expect(error).toMatchObject({ code: 'STORE_ERROR', backend: 'qdrant', details: { status: 403 } });
    expect(fake.methods()).not.toContain('setPayload');
  });

  it('another refusal (HTTP 401: a key the server does not know) still fails the open', async () => {
    const fake = outdated(2, () => {
      throw httpError(401, 'Unauthorized: Invalid API key');
    });
    const error = await createQdrantStore({ client: fake.client, batchSize: 2 }).open(OPEN).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ code: 'STORE_ERROR', backend: 'qdrant', details: { operation: 'rewrite keyword vectors', status: 401 } });
  });
});

describe('open: keyword vectors of another tokenizer version, beside damaged memory points', () => {
  it('skips a point a read refuses (no write id, a context that is not a string), reports it in the progress, and rebuilds the rest; apply still refuses it', async () => {
    const { writeId: _dropped, ...payload } = toMemoryPayload(LISBON, 'w1');
    const noWriteId = { id: memoryPointId(LISBON.id), payload, vector: { dense: [1, 0, 0, 0, 0, 0, 0, 0] } };
    const badContext = { id: memoryPointId(STOPWORDS.id), payload: { ...toMemoryPayload(STOPWORDS, 'w2'), context: 42 } };
    const fake = scriptedClient({
      retrieve: (_collection: string, body: any) => (body.ids.includes(META_POINT_ID) ? [metaPoint('test/embedder', 1, 2)] : [noWriteId]),
      count: () => ({ count: 3 }),
      scroll: () => ({ points: [scrolled(WALKS), noWriteId, badContext], next_page_offset: null }),
    });
    const progress: QdrantProgress[] = [];
    const store = createQdrantStore({ client: fake.client, onProgress: (step) => void progress.push(step) });
    // Before: the open failed with STORE_CORRUPT "memory … is stored without a write id", rewriting nothing.
    await store.open(OPEN);
    expect(fake.bodies('batchUpdate')).toEqual([
      expect.objectContaining({
        operations: [
          {
            update_vectors: {
              points: [{ id: memoryPointId(WALKS.id), vector: { text: documentVector(keywordText(WALKS), BM25) } }],
              update_filter: { must: [{ key: 'writeId', match: { any: [`write-${WALKS.id}`] } }] },
            },
          },
        ],
      }),
    ]);
    expect(fake.bodies('setPayload')).toEqual([expect.objectContaining({ points: [META_POINT_ID], payload: { tokenizerVersion: TOKENIZER_VERSION } })]);
    const skipped = [
      { pointId: memoryPointId(LISBON.id), message: expect.stringContaining(`memory ${LISBON.id} is stored without a write id`) },
      { pointId: memoryPointId(STOPWORDS.id), message: expect.stringContaining(`memory ${STOPWORDS.id} is stored with a context that is not a string`) },
    ];
    expect(progress).toEqual([
      { task: 'retokenize', done: 0, total: 3 },
      { task: 'retokenize', done: 3, total: 3, skipped },
    ]);

    const corrupt = { code: 'STORE_CORRUPT', backend: 'qdrant', message: expect.stringContaining(`memory ${LISBON.id} is stored without a write id`), details: { id: LISBON.id } };
    await expect(store.apply([replace(LISBON, { content: 'I moved to Porto' })])).rejects.toMatchObject(corrupt);
    expect(fake.methods()).not.toContain('upsert');
  });

  it('a page holding only damaged points sends no rewrite, and the version is recorded', async () => {
    const badContext = { id: memoryPointId(STOPWORDS.id), payload: { ...toMemoryPayload(STOPWORDS, 'w2'), context: 42 } };
    const fake = scriptedClient({
      retrieve: () => [metaPoint('test/embedder', 1, 2)],
      count: () => ({ count: 1 }),
      scroll: () => ({ points: [badContext], next_page_offset: null }),
    });
    await createQdrantStore({ client: fake.client }).open(OPEN);
    expect(fake.methods()).not.toContain('batchUpdate');
    expect(fake.methods()).toContain('setPayload');
  });
});

describe('open: rebuilding keyword vectors beside other stores (in-memory stand-in, not a Qdrant)', () => {
  const SMALL = { dimension: 2, embedderId: 'e' };

  /** A stand-in collection holding `memories` written by a store, then made to look as a tokenizer-2 store left it. */
  async function staleCollection(memories: MemoryRecord[]) {
    const qdrant = miniQdrant();
    const writer = createQdrantStore({ client: qdrant.client, checkServerVersion: false });
    await writer.open(SMALL);
    await writer.apply(memories.map((memory) => create(memory, [1, 0])));
    for (const memory of memories) (qdrant.points.get(memoryPointId(memory.id)) as any).vector.text = { indices: [7], values: [1] };
    (qdrant.points.get(META_POINT_ID) as any).payload.tokenizerVersion = 2;
    return { qdrant, writer };
  }
  const textOf = (qdrant: ReturnType<typeof miniQdrant>, memory: MemoryRecord) => (qdrant.points.get(memoryPointId(memory.id)) as any).vector.text;

  it('a memory written between the read of its page and the rewrite keeps the vector of that write', async () => {
    const { qdrant, writer } = await staleCollection([WALKS, LISBON]);
    const cycles = { ...WALKS, content: 'Alice cycles to work now', revision: 2 };
    let interleaved = false;
    const racing = {
      ...qdrant.client,
      batchUpdate: async (collection: string, body: any) => {
        if (!interleaved) {
          interleaved = true;
          await writer.apply([replace(WALKS, { content: cycles.content })]);
        }
        return (qdrant.client as any).batchUpdate(collection, body);
      },
    } as typeof qdrant.client;
    await createQdrantStore({ client: racing, checkServerVersion: false }).open(SMALL);
    expect(interleaved).toBe(true);
    expect(textOf(qdrant, WALKS)).toEqual(memoryTextVector(cycles, BM25));
    expect(textOf(qdrant, LISBON)).toEqual(memoryTextVector(LISBON, BM25));
    expect((qdrant.points.get(META_POINT_ID) as any).payload.tokenizerVersion).toBe(TOKENIZER_VERSION);
  });

  it('two stores opening at once both rebuild, to the same vectors', async () => {
    const { qdrant } = await staleCollection([WALKS, LISBON, STOPWORDS]);
    const stores = [0, 1].map(() => createQdrantStore({ client: qdrant.client, checkServerVersion: false, batchSize: 1 }));
    await Promise.all(stores.map((store) => store.open(SMALL)));
    expect(textOf(qdrant, WALKS)).toEqual(memoryTextVector(WALKS, BM25));
    expect(textOf(qdrant, LISBON)).toEqual(memoryTextVector(LISBON, BM25));
    expect(textOf(qdrant, STOPWORDS)).toBeUndefined();
    expect((qdrant.points.get(META_POINT_ID) as any).payload.tokenizerVersion).toBe(TOKENIZER_VERSION);
  });
});
