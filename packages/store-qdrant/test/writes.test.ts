import { keywordText, type MemoryChange, type MemoryRecord, type MemoryVersion } from '@memloom/core';
import { describe, expect, it } from 'vitest';
import { createQdrantStore } from '../src/index.js';
import { toMemoryPayload, toVersionPayload } from '../src/payload.js';
import { memoryPointId, versionPointId } from '../src/point-ids.js';
import { documentVector, queryVector, type SparseVector } from '../src/sparse-text.js';
import { httpError, metaPoint, scriptedClient } from './fake-client.js';
import { miniQdrant, twoStoresOn } from './mini-qdrant.js';

const VECTOR = [1, 0, 0, 0, 0, 0, 0, 0];

function record(id: string, overrides: Partial<MemoryRecord> = {}): MemoryRecord {
  return {
    id, content: `memory ${id} about espresso`, level: 'full', weight: 1, baseWeight: 1, importance: 1, baseImportance: 1,
    category: 'fact', type: 'user', scope: { userId: 'alice' }, createdAt: '2024-01-01T00:00:00.000Z', updatedAt: '2024-01-01T00:00:00.000Z',
    lastAccessedAt: '2024-01-01T00:00:00.000Z', source: 'user', verified: true, sources: [], tags: [], metadata: {}, revision: 1, ...overrides,
  };
}

function version(before: MemoryRecord | null, after: MemoryRecord): MemoryVersion {
  return { memoryId: after.id, version: after.revision, at: after.updatedAt, trigger: 'manual_edit', action: before ? 'edit' : 'create', reason: 'test', before, after };
}

function create(memory: MemoryRecord, vector: number[] | undefined = VECTOR): MemoryChange {
  return { op: 'put', memory, ...(vector ? { vector } : {}), expectedRevision: 0, version: version(null, memory) };
}

function replace(before: MemoryRecord, patch: Partial<MemoryRecord>, vector?: number[]): MemoryChange {
  const after = { ...before, ...patch, revision: before.revision + 1 };
  return { op: 'put', memory: after, ...(vector ? { vector } : {}), expectedRevision: before.revision, version: version(before, after) };
}

/** A stored memory as the revision read returns it. */
function stored(memory: MemoryRecord, writeId: string) {
  return { id: memoryPointId(memory.id), payload: { ...toMemoryPayload(memory, writeId) }, vector: { dense: [0, 1, 0, 0, 0, 0, 0, 0] } };
}

type Stage = 'revisions' | 'verify' | 'verify-delete' | 'other';
function stageOf(body: any): Stage {
  if (Array.isArray(body.with_vector) && body.with_vector.includes('dense') && body.consistency === 'majority') return 'revisions';
  if (Array.isArray(body.with_payload) && body.with_payload.includes('revision')) return 'verify';
  if (Array.isArray(body.with_payload) && body.with_payload.includes('writeId')) return 'verify-delete';
  return 'other';
}

/**
 * Script: the revision read returns `existing`; the write verification
 * answers with what `landed(pointId, ourWriteId)` says is stored now.
 */
function script(options: {
  existing?: ReturnType<typeof stored>[];
  landed?: (pointId: string, ours: { writeId: string; revision: number }) => { writeId: string; revision: number } | undefined;
  remaining?: string[];
  /** Version points the purge's scroll finds (those of the memory ids it asks for). */
  versions?: Array<{ id: string; payload: any }>;
}) {
  const fake = scriptedClient({
    scroll: (_collection: string, body: any) => {
      const ids: string[] = body.filter?.must?.[1]?.match?.any ?? [];
      return { points: (options.versions ?? []).filter((point) => ids.includes(point.payload.memoryId)), next_page_offset: null };
    },
    retrieve: (_collection: string, body: any) => {
      const stage = stageOf(body);
      if (stage === 'revisions') return (options.existing ?? []).filter((point) => body.ids.includes(point.id));
      if (stage === 'verify') {
        const written = new Map<string, { writeId: string; revision: number }>();
        for (const upsert of fake.bodies('upsert')) {
          for (const point of upsert.points) if (point.payload.kind === 'memory') written.set(point.id, point.payload);
        }
        return body.ids.flatMap((id: string) => {
          const ours = written.get(id);
          const now = ours && (options.landed ? options.landed(id, ours) : ours);
          return now ? [{ id, payload: now }] : [];
        });
      }
      if (stage === 'verify-delete') return (options.remaining ?? []).map((id) => ({ id, payload: { writeId: 'theirs' } }));
      return [metaPoint()];
    },
  });
  return fake;
}

const memoryUpserts = (fake: ReturnType<typeof scriptedClient>) => fake.bodies('upsert').filter((body) => body.points[0]?.payload.kind === 'memory');
const versionUpserts = (fake: ReturnType<typeof scriptedClient>) => fake.bodies('upsert').filter((body) => body.points[0]?.payload.kind === 'version');

describe('apply: creating', () => {
  it('reads revisions, writes versions, then the memory insert-only, then verifies, in that order', async () => {
    const fake = script({});
    const memory = record('m1');
    await createQdrantStore({ client: fake.client }).apply([create(memory)]);
    expect(fake.methods()).toEqual(['retrieve', 'upsert', 'upsert', 'retrieve']);

    const [revisions, , ] = fake.bodies('retrieve');
    expect(revisions).toMatchObject({ ids: [memoryPointId('m1')], with_vector: ['dense'], consistency: 'majority' });

    const [versions] = versionUpserts(fake);
    const versionPoint = versions.points[0];
    expect(versionPoint.vector).toEqual({});
    expect(versionPoint.payload).toMatchObject({ kind: 'version', memoryId: 'm1', version: 1, parentWriteId: null, userId: 'alice' });
    expect(versionPoint.payload.entry).toEqual(version(null, memory));
    expect(versionPoint.id).toBe(versionPointId('m1', 1, versionPoint.payload.writeId));

    const [memories] = memoryUpserts(fake);
    expect(memories).toMatchObject({ wait: true, ordering: 'strong', update_mode: 'insert_only' });
    expect(memories.update_filter).toBeUndefined();
    const memoryPoint = memories.points[0];
    expect(memoryPoint.id).toBe(memoryPointId('m1'));
    expect(memoryPoint.vector).toEqual({ dense: VECTOR, text: documentVector(memory.content, { k1: 1.2, b: 0.75, averageLength: 16 }) });
    expect(memoryPoint.payload).toEqual({ ...toMemoryPayload(memory, versionPoint.payload.writeId) });
  });

  it('sends upserts in batches of batchSize', async () => {
    const fake = script({});
    const changes = ['a', 'b', 'c', 'd', 'e'].map((id) => create(record(id)));
    await createQdrantStore({ client: fake.client, batchSize: 2 }).apply(changes);
    expect(memoryUpserts(fake).map((body) => body.points.length)).toEqual([2, 2, 1]);
    expect(versionUpserts(fake).map((body) => body.points.length)).toEqual([2, 2, 1]);
  });

  it('refuses a vector of the wrong dimension before sending anything', async () => {
    const fake = script({});
    const store = createQdrantStore({ client: fake.client });
    await store.open({ dimension: 8, embedderId: 'test/embedder' });
    const before = fake.calls.length;
    await expect(store.apply([create(record('m1'), [1, 0, 0])])).rejects.toMatchObject({ code: 'DIMENSION_MISMATCH', backend: 'qdrant' });
    expect(fake.calls.length).toBe(before);
  });

  it('refuses a new memory without a vector (INVALID_INPUT) and writes nothing', async () => {
    const fake = script({});
    const withoutVector = { ...create(record('m1')), vector: undefined } as MemoryChange;
    await expect(createQdrantStore({ client: fake.client }).apply([withoutVector])).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    expect(fake.methods()).toEqual(['retrieve']);
  });

  it("refuses a lone half of a UTF-16 pair in an id, a scope, content or context (the server's JSON parser would) before any request", async () => {
    const cut = [
      [record('m\uD800'), 'INVALID_INPUT'],
      [record('m1', { scope: { userId: 'alice\uDBFF' } }), 'INVALID_SCOPE'],
      [record('m1', { content: 'cut through an emoji \uD83D' }), 'INVALID_INPUT'],
      [record('m1', { context: 'the turn before \uDE00' }), 'INVALID_INPUT'],
    ] as const;
    for (const [memory, code] of cut) {
      const fake = script({});
      await expect(createQdrantStore({ client: fake.client }).apply([create(memory)])).rejects.toMatchObject({ code, backend: 'qdrant' });
      expect(fake.methods()).toEqual([]);
    }
  });

  it("refuses a lone half of a UTF-16 pair in tags, sources, metadata (a value or a key, at any depth) or the version, naming the field, before any request", async () => {
    const memory = record('m1');
    const cut: Array<[MemoryChange, string]> = [
      [create(record('m1', { tags: ['fine', 'cut \uD83D'] })), 'memory.tags[1]'],
      [create(record('m1', { sources: ['turn \uDC00'] })), 'memory.sources[0]'],
      [create(record('m1', { metadata: { note: { list: ['ok', 'x\uDE00'] } } })), 'memory.metadata.note.list[1]'],
      [create(record('m1', { metadata: { ['key \uD800']: true } })), 'memory.metadata.key \uD800'],
      [{ ...create(memory), version: { ...version(null, memory), reason: 'edited \uDBFF' } } as MemoryChange, 'version.reason'],
    ];
    for (const [change, field] of cut) {
      const fake = script({});
      const error = await createQdrantStore({ client: fake.client }).apply([change]).catch((caught: unknown) => caught);
      expect(error, field).toMatchObject({ code: 'INVALID_INPUT', backend: 'qdrant', details: { field } });
      expect((error as Error).message).toContain('lone half of a UTF-16 pair');
      expect(fake.methods(), field).toEqual([]);
    }
    // Whole pairs (an emoji) are fine.
    const fake = script({});
    await createQdrantStore({ client: fake.client }).apply([create(record('m1', { tags: ['\u{1F600}'], metadata: { ['\u{1F600}']: '\u{1F600}' } }))]);
    expect(memoryUpserts(fake)).toHaveLength(1);
  });

  it('refuses a vector holding NaN, Infinity or all zeros, and metadata that is not JSON data, with INVALID_INPUT before any request', async () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    const bad: MemoryChange[] = [
      create(record('m1'), [Number.NaN, 0, 0, 0, 0, 0, 0, 1]),
      create(record('m1'), [Number.POSITIVE_INFINITY, 0, 0, 0, 0, 0, 0, 0]),
      create(record('m1'), [0, 0, 0, 0, 0, 0, 0, 0]),
      replace(record('m1'), { content: 'moved' }, [0, 0, 0, 0, 0, 0, 0, 0]),
      create(record('m1', { metadata: { when: new Date(0) } })),
      create(record('m1', { metadata: { big: 10n } })),
      create(record('m1', { metadata: { loop: cycle } })),
      create(record('m1', { metadata: { score: Number.NaN } })),
    ];
    for (const change of bad) {
      const fake = script({});
      const store = createQdrantStore({ client: fake.client });
      await expect(store.apply([change])).rejects.toMatchObject({ code: 'INVALID_INPUT', backend: 'qdrant' });
      expect(fake.methods()).toEqual([]);
    }
  });

  it('refuses a scope of the wrong shape, absent or null (INVALID_SCOPE) before any request', async () => {
    for (const scope of ['alice', { userId: 5 }, { userId: null }, { tenant: 'x' }, undefined, null]) {
      const fake = script({});
      const bad = create(record('m1', { scope: scope as never }));
      await expect(createQdrantStore({ client: fake.client }).apply([bad]), JSON.stringify(scope)).rejects.toMatchObject({ code: 'INVALID_SCOPE', backend: 'qdrant' });
      expect(fake.methods()).toEqual([]);
    }
  });

  it('a write refused with HTTP 403 (a key that may only read) is STORE_ERROR with readonly: true, as SQLite and Markdown say of what they may not write; a read refused so is not', async () => {
    const forbidden = () => {
      throw httpError(403, 'Forbidden: Write operations are forbidden');
    };
    const fake = scriptedClient({ upsert: forbidden, createCollection: forbidden, collectionExists: () => ({ exists: false }), count: forbidden });
    const store = createQdrantStore({ client: fake.client });
    const write = await store.apply([create(record('m1'))]).catch((error: unknown) => error);
    expect(write).toMatchObject({ code: 'STORE_ERROR', backend: 'qdrant', details: { operation: 'write versions', status: 403, readonly: true } });
    expect((write as Error).message).toContain('(HTTP 403): this API key may only read, or writes are locked on the server; check apiKey');
    // Making a collection is a write too.
    const made = await store.open({ dimension: 8, embedderId: 'test/embedder' }).catch((error: unknown) => error);
    expect(made).toMatchObject({ code: 'STORE_ERROR', details: { operation: 'create collection', status: 403, readonly: true } });
    // A read refused with 403 (a key without access to the collection) is not a read-only store.
    const read = await store.count({}).catch((error: unknown) => error);
    expect(read).toMatchObject({ code: 'STORE_ERROR', details: { operation: 'count memories', status: 403 } });
    expect((read as { details: object }).details).not.toHaveProperty('readonly');
  });

  it('refuses a context that is not a non-empty string (INVALID_INPUT) before any request', async () => {
    for (const context of ['', 42]) {
      const fake = script({});
      const bad = create(record('m1', { context } as unknown as Partial<MemoryRecord>));
      await expect(createQdrantStore({ client: fake.client }).apply([bad])).rejects.toMatchObject({ code: 'INVALID_INPUT', backend: 'qdrant' });
      expect(fake.methods()).toEqual([]);
    }
  });
});

describe('apply: replacing', () => {
  it('keeps the stored vector, links the version to the stored write and updates only the write read', async () => {
    const before = record('m1');
    const fake = script({ existing: [stored(before, 'w-stored')] });
    await createQdrantStore({ client: fake.client }).apply([replace(before, { content: 'edited' })]);
    const [versions] = versionUpserts(fake);
    expect(versions.points[0].payload.parentWriteId).toBe('w-stored');
    const [memories] = memoryUpserts(fake);
    expect(memories.update_mode).toBe('update_only');
    expect(memories.update_filter).toEqual({ must: [{ has_id: [memoryPointId('m1')] }, { key: 'writeId', match: { any: ['w-stored'] } }] });
    expect(memories.points[0].vector.dense).toEqual([0, 1, 0, 0, 0, 0, 0, 0]);
    expect(memories.points[0].payload).toMatchObject({ content: 'edited', revision: 2 });
  });

  it('a stale expectedRevision is a CONFLICT found before anything is written', async () => {
    const current = record('m1', { revision: 3 });
    const fake = script({ existing: [stored(current, 'w3')] });
    const stale = replace(record('m1', { revision: 2 }), { content: 'lost update' });
    await expect(createQdrantStore({ client: fake.client }).apply([create(record('m2')), stale])).rejects.toMatchObject({ code: 'CONFLICT', backend: 'qdrant' });
    expect(fake.methods()).toEqual(['retrieve']);
  });

  it('a write that lost a race is a CONFLICT: its versions are removed and the batch\'s won writes are undone', async () => {
    const contended = record('m1');
    const fake = script({
      existing: [stored(contended, 'w1')],
      // m2 (a creation) lands; m1 was replaced by another writer first.
      landed: (pointId, ours) => (pointId === memoryPointId('m1') ? { writeId: 'theirs', revision: 2 } : ours),
    });
    const store = createQdrantStore({ client: fake.client });
    await expect(store.apply([create(record('m2')), replace(contended, { content: 'mine' })])).rejects.toMatchObject({
      code: 'CONFLICT',
      details: { id: 'm1', ids: ['m1'] },
    });
    const writeIdOf = (id: string) => memoryUpserts(fake).flatMap((body) => body.points).find((point) => point.id === memoryPointId(id)).payload.writeId;
    const deletes = fake.bodies('delete');
    // The creation that landed is removed only if it is still this call's write.
    expect(deletes).toContainEqual(
      expect.objectContaining({ filter: { must: [{ has_id: [memoryPointId('m2')] }, { key: 'writeId', match: { value: writeIdOf('m2') } }] } }),
    );
    // The losing write's version point goes; nobody's history points at it.
    expect(deletes).toContainEqual(expect.objectContaining({ points: [versionPointId('m1', 2, writeIdOf('m1'))] }));
  });

  it('a write another writer already built upon counts as landed when it is on their history chain', async () => {
    const before = record('m1');
    const fake = scriptedClient({
      retrieve: (_collection: string, body: any) => {
        const stage = stageOf(body);
        if (stage === 'revisions') return [stored(before, 'w1')];
        return [{ id: memoryPointId('m1'), payload: { writeId: 'w-next', revision: 3 } }];
      },
      scroll: () => {
        const ours = versionUpserts(fake)[0].points[0].payload;
        const after = { ...before, revision: 3 };
        const next = { memoryId: 'm1', version: 3, at: '', trigger: 'manual_edit', action: 'edit', reason: '', before, after };
        return {
          points: [
            { id: 'v1', payload: { ...toVersionPayload(version(null, before), 'w1', null) } },
            { id: 'v2', payload: ours },
            { id: 'v3', payload: { ...toVersionPayload(next as MemoryVersion, 'w-next', ours.writeId) } },
          ],
          next_page_offset: null,
        };
      },
    });
    await createQdrantStore({ client: fake.client }).apply([replace(before, { content: 'mine' })]);
    expect(fake.bodies('delete')).toEqual([]);
  });
});

describe('apply: deleting', () => {
  it('deletes the memory point, then the version points on its chain, by id', async () => {
    const first = record('m1');
    const memory = record('m1', { revision: 2 });
    const versionPoint = (entry: MemoryVersion, writeId: string, parent: string | null) => ({
      id: versionPointId('m1', entry.version, writeId),
      payload: { ...toVersionPayload(entry, writeId, parent) },
    });
    const chain = [versionPoint(version(null, first), 'w1', null), versionPoint(version(first, memory), 'w2', 'w1')];
    // A chain another writer started for the same id (created again): not this delete's to remove.
    const theirs = versionPoint(version(null, record('m1', { content: 'theirs' })), 'w-theirs', null);
    const fake = script({ existing: [stored(memory, 'w2')], versions: [...chain, theirs] });
    await createQdrantStore({ client: fake.client }).apply([{ op: 'delete', id: 'm1' }]);
    expect(fake.methods()).toEqual(['retrieve', 'delete', 'scroll', 'delete']);
    const [point, versions] = fake.bodies('delete');
    expect(point).toMatchObject({ points: [memoryPointId('m1')], ordering: 'strong' });
    expect(fake.bodies('scroll')[0]).toMatchObject({
      filter: { must: [{ key: 'kind', match: { value: 'version' } }, { key: 'memoryId', match: { any: ['m1'] } }] },
      with_payload: ['memoryId', 'writeId', 'parentWriteId'],
      consistency: 'majority',
    });
    expect(versions).toEqual({ wait: true, ordering: 'strong', points: chain.map((entry) => entry.id) });
  });

  it('deletes a point damaged where a read would refuse it (a context that is not a string); one without a revision is STORE_CORRUPT naming it', async () => {
    const damaged = stored(record('m1'), 'w1');
    (damaged.payload as Record<string, unknown>).context = 42;
    const fake = script({ existing: [damaged] });
    const store = createQdrantStore({ client: fake.client });
    // Before: STORE_CORRUPT "memory m1 is stored with a context that is not a string", and the point could not be deleted.
    await store.apply([{ op: 'delete', id: 'm1' }]);
    expect(fake.bodies('delete')[0]).toMatchObject({ points: [memoryPointId('m1')] });

    const { revision: _dropped, ...noRevision } = stored(record('m2'), 'w2').payload;
    const broken = script({ existing: [{ id: memoryPointId('m2'), payload: noRevision as any, vector: { dense: VECTOR } }] });
    await expect(createQdrantStore({ client: broken.client }).apply([{ op: 'delete', id: 'm2' }])).rejects.toMatchObject({
      code: 'STORE_CORRUPT',
      backend: 'qdrant',
      message: expect.stringContaining('memory m2 is stored without a revision'),
      details: { id: 'm2' },
    });
    expect(broken.bodies('delete')).toEqual([]);
  });

  it('an unknown id is a no-op; with an expectedRevision it is a CONFLICT', async () => {
    const fake = script({});
    const store = createQdrantStore({ client: fake.client });
    await store.apply([{ op: 'delete', id: 'ghost' }]);
    expect(fake.bodies('delete')).toEqual([]);
    await expect(store.apply([{ op: 'delete', id: 'ghost', expectedRevision: 1 }])).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('a delete with expectedRevision is conditional on the write read, and fails if the point survived it', async () => {
    const memory = record('m1', { revision: 2 });
    const fake = script({ existing: [stored(memory, 'w2')], remaining: [memoryPointId('m1')] });
    await expect(createQdrantStore({ client: fake.client }).apply([{ op: 'delete', id: 'm1', expectedRevision: 2 }])).rejects.toMatchObject({ code: 'CONFLICT' });
    const [conditional] = fake.bodies('delete');
    expect(conditional.filter).toEqual({ must: [{ has_id: [memoryPointId('m1')] }, { key: 'writeId', match: { any: ['w2'] } }] });
    // Its versions stay: the memory is still there (no version is read for deletion, nothing else is deleted).
    expect(fake.bodies('delete')).toHaveLength(1);
    expect(fake.bodies('scroll')).toEqual([]);
  });
});

/** What Qdrant scores a text query against a point's sparse vector (before IDF): their dot product. */
function textScore(query: string, document: SparseVector | undefined): number {
  const terms = queryVector(query) as SparseVector;
  if (!document) return 0;
  return terms.indices.reduce((sum, index) => {
    const at = document.indices.indexOf(index);
    return sum + (at < 0 ? 0 : (document.values[at] as number));
  }, 0);
}

describe('apply: context', () => {
  const BM25 = { k1: 1.2, b: 0.75, averageLength: 16 };
  const CONTEXT = 'Any plans for the lake this summer?\n问：你夏天去哪儿划船？';

  it('stores the context in the payload and indexes its words with the content\'s; no context, no key', async () => {
    const fake = script({});
    const kayak = record('kayak', { content: 'Bought a kayak last week', context: CONTEXT });
    const plain = record('plain', { content: 'The lake house is rented out' });
    await createQdrantStore({ client: fake.client }).apply([create(kayak), create(plain)]);
    const points = memoryUpserts(fake).flatMap((body) => body.points);
    const [kayakPoint, plainPoint] = [kayak, plain].map((memory) => points.find((point) => point.id === memoryPointId(memory.id)));
    expect(kayakPoint.payload.context).toBe(CONTEXT);
    expect(plainPoint.payload).not.toHaveProperty('context');
    expect(kayakPoint.vector.text).toEqual(documentVector(keywordText(kayak), BM25));
    // A word of the context alone finds the memory; the content's words still do.
    expect(textScore('summer', kayakPoint.vector.text)).toBeGreaterThan(0);
    expect(textScore('划船', kayakPoint.vector.text)).toBeGreaterThan(0);
    expect(textScore('kayak', kayakPoint.vector.text)).toBeGreaterThan(0);
    expect(textScore('summer', plainPoint.vector.text)).toBe(0);
  });

  it('an update that removes the context removes its words from the text vector and its key from the payload', async () => {
    const before = record('m1', { content: 'Bought a kayak last week', context: CONTEXT });
    const fake = script({ existing: [stored(before, 'w1')] });
    const { context: _context, ...bare } = before;
    const after = { ...bare, revision: 2 };
    await createQdrantStore({ client: fake.client }).apply([
      { op: 'put', memory: after, expectedRevision: 1, version: version(before, after) },
    ]);
    const [memories] = memoryUpserts(fake);
    const written = memories.points[0];
    expect(written.payload).not.toHaveProperty('context');
    expect(written.vector.text).toEqual(documentVector(before.content, BM25));
    expect(textScore('summer', written.vector.text)).toBe(0);
    expect(textScore('kayak', written.vector.text)).toBeGreaterThan(0);
    // The version keeps the context the memory had before.
    const [versions] = versionUpserts(fake);
    expect(versions.points[0].payload.entry.before.context).toBe(CONTEXT);
    expect(versions.points[0].payload.entry.after).not.toHaveProperty('context');
  });

  it('undoing a won write puts back the context\'s words with the payload it replaced', async () => {
    const kayak = record('kayak', { content: 'Bought a kayak last week', context: CONTEXT });
    const other = record('other');
    const fake = script({
      existing: [stored(kayak, 'w-kayak'), stored(other, 'w-other')],
      // The kayak edit lands; the other memory was replaced by another writer first.
      landed: (pointId, ours) => (pointId === memoryPointId('other') ? { writeId: 'theirs', revision: 2 } : ours),
    });
    await expect(
      createQdrantStore({ client: fake.client }).apply([replace(kayak, { context: 'a different question' }), replace(other, { content: 'mine' })]),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
    const kayakWrites = memoryUpserts(fake).flatMap((body) => body.points).filter((point) => point.id === memoryPointId('kayak'));
    expect(kayakWrites).toHaveLength(2);
    const restored = kayakWrites[1];
    expect(restored.payload.context).toBe(CONTEXT);
    expect(restored.vector.text).toEqual(documentVector(keywordText(kayak), BM25));
    expect(textScore('summer', kayakWrites[0].vector.text)).toBe(0);
    expect(textScore('summer', restored.vector.text)).toBeGreaterThan(0);
  });
});

describe('write ordering', () => {
  it('sends every write with the configured ordering (writes of different orderings may be applied in another order on each replica)', async () => {
    const memory = record('m1');
    for (const writeOrdering of ['strong', 'medium'] as const) {
      const fake = script({ existing: [stored(memory, 'w1')] });
      const store = createQdrantStore({ client: fake.client, writeOrdering });
      await store.apply([create(record('m2'))]);
      await store.apply([replace(memory, { content: 'memory m1, edited' })]);
      await store.apply([{ op: 'delete', id: 'm1' }]);
      await store.touch(['m1', 'm2'], '2025-05-05T05:05:05.000Z');
      const writes = fake.calls.filter((call) => ['upsert', 'delete', 'setPayload'].includes(call.method));
      expect(writes.length).toBeGreaterThan(4);
      for (const write of writes) expect(write.body.ordering, `${write.method} ${JSON.stringify(write.body).slice(0, 80)}`).toBe(writeOrdering);
    }
  });
});

describe('touch', () => {
  it('refuses a time that is not ISO 8601, or ids that are not strings, before any request (INVALID_INPUT)', async () => {
    const qdrant = miniQdrant();
    const { a } = await twoStoresOn(qdrant);
    const memory = record('t1');
    await a.apply([create(memory, [1, 0])]);
    const calls: string[] = [];
    const client = qdrant.client as any;
    const setPayload = client.setPayload;
    client.setPayload = async (...args: unknown[]) => {
      calls.push('setPayload');
      return setPayload(...args);
    };
    for (const at of ['yesterday', '2024-02-30T10:00:00.000Z', 1714550400000]) {
      await expect(a.touch([memory.id], at as never)).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('touch: at must be an ISO 8601 time') });
    }
    await expect(a.touch('t1' as never, '2025-05-05T05:05:05.000Z')).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    expect(calls).toEqual([]);
    await a.touch([memory.id], '2025-05-05T05:05:05.000Z');
    expect(calls).toEqual(['setPayload']);
  });
});

describe('apply over a point damaged where a read would refuse it', () => {
  const BM25 = { k1: 1.2, b: 0.75, averageLength: 16 };

  it('undoing a won put over it (the batch lost elsewhere) puts back its payload as it was, keyword vector from its content', async () => {
    const espresso = record('m1');
    const damaged = stored(espresso, 'w1');
    (damaged.payload as Record<string, unknown>).context = 42;
    const other = record('other');
    const fake = script({
      existing: [damaged, stored(other, 'w-other')],
      // The put over m1 lands; the other memory was replaced by another writer first.
      landed: (pointId, ours) => (pointId === memoryPointId('other') ? { writeId: 'theirs', revision: 2 } : ours),
    });
    const store = createQdrantStore({ client: fake.client });
    // Before: STORE_CORRUPT "memory m1 is stored with a context that is not a string", and the put over m1 stayed.
    await expect(store.apply([replace(espresso, { content: 'mine' }), replace(other, { content: 'mine' })])).rejects.toMatchObject({
      code: 'CONFLICT',
      details: { ids: ['other'] },
    });
    const writes = memoryUpserts(fake).flatMap((body) => body.points).filter((point) => point.id === memoryPointId('m1'));
    expect(writes).toHaveLength(2);
    expect(writes[1].payload).toEqual(damaged.payload);
    expect(writes[1].vector).toEqual({ dense: damaged.vector.dense, text: documentVector(espresso.content, BM25) });
    expect(memoryUpserts(fake).at(-1)).toMatchObject({ update_mode: 'update_only', update_filter: { must: [{ has_id: [memoryPointId('m1')] }, { key: 'writeId', match: { value: writes[0].payload.writeId } }] } });
  });

  for (const [what, vector] of [['without a dense vector', {}], ['with a damaged one', { dense: null }]] as const) {
    it(`a point ${what} can be deleted, and replaced by a put with a vector; a put keeping its vector is STORE_CORRUPT`, async () => {
      const espresso = record('m1');
      const point = { ...stored(espresso, 'w1'), vector };
      // Before: each was STORE_CORRUPT "memory m1 is stored without a vector", before any write.
      const deleting = script({ existing: [point as any] });
      await createQdrantStore({ client: deleting.client }).apply([{ op: 'delete', id: 'm1' }]);
      expect(deleting.bodies('delete')[0]).toMatchObject({ points: [memoryPointId('m1')] });

      const replacing = script({ existing: [point as any] });
      await createQdrantStore({ client: replacing.client }).apply([replace(espresso, { content: 'mine' }, VECTOR)]);
      expect(memoryUpserts(replacing)[0].points[0].vector.dense).toEqual(VECTOR);

      const keeping = script({ existing: [point as any] });
      await expect(createQdrantStore({ client: keeping.client }).apply([replace(espresso, { content: 'mine' })])).rejects.toMatchObject({
        code: 'STORE_CORRUPT',
        backend: 'qdrant',
        message: expect.stringContaining('memory m1 is stored without a vector'),
        details: { id: 'm1' },
      });
      expect(keeping.methods()).toEqual(['retrieve']);
    });
  }

  it('undoing a won put over a point without a dense vector puts it back without one', async () => {
    const espresso = record('m1');
    const other = record('other');
    const fake = script({
      existing: [{ ...stored(espresso, 'w1'), vector: {} } as any, stored(other, 'w-other')],
      landed: (pointId, ours) => (pointId === memoryPointId('other') ? { writeId: 'theirs', revision: 2 } : ours),
    });
    await expect(
      createQdrantStore({ client: fake.client }).apply([replace(espresso, { content: 'mine' }, VECTOR), replace(other, { content: 'mine' })]),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
    const writes = memoryUpserts(fake).flatMap((body) => body.points).filter((point) => point.id === memoryPointId('m1'));
    expect(writes).toHaveLength(2);
    expect(writes[1].vector).toEqual({ text: documentVector(espresso.content, BM25) });
  });
});
