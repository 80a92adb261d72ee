import { MemloomError, TOKENIZER_VERSION } from '@memloom/core';
import { describe, expect, it } from 'vitest';
import { createQdrantStore } from '../src/index.js';
import { META_POINT_ID } from '../src/point-ids.js';
import { collectionInfo, metaPoint, scriptedClient } from './fake-client.js';

const OPEN = { dimension: 8, embedderId: 'test/embedder' };
const WRITES = ['createCollection', 'createPayloadIndex', 'upsert', 'delete', 'setPayload'];

/** Each payload index memloom makes, by its type. */
const MEMLOOM_INDEXES: Record<string, string> = {
  userId: 'keyword', agentId: 'keyword', sessionId: 'keyword', kind: 'keyword', memoryId: 'keyword', category: 'keyword', type: 'keyword',
  level: 'keyword', source: 'keyword', verified: 'bool', tags: 'keyword', revision: 'integer', createdAtMs: 'integer', updatedAtMs: 'integer',
  writeId: 'keyword',
};

/** `payload_schema` as Qdrant reports these indexes. */
function indexed(types: Record<string, string>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(types).map(([field, type]) => [field, { data_type: type, params: { type }, points: 0 }]));
}

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
  } catch (error) {
    expect(MemloomError.isInstance(error)).toBe(true);
    return (error as MemloomError).code;
  }
  return undefined;
}

describe('open: a missing collection', () => {
  it('is created with the embedder dimension, cosine distance, a BM25 sparse vector and the cluster settings', async () => {
    let created = false;
    const fake = scriptedClient({
      collectionExists: () => ({ exists: created }),
      createCollection: () => ((created = true), true),
      retrieve: () => (fake.bodies('upsert').length > 0 ? [metaPoint()] : []),
    });
    const store = createQdrantStore({ client: fake.client, collection: 'mem', shardNumber: 6, replicationFactor: 2, writeConsistencyFactor: 2 });
    await store.open(OPEN);

    const [create] = fake.calls.filter((call) => call.method === 'createCollection');
    expect(create?.collection).toBe('mem');
    expect(create?.body).toMatchObject({
      vectors: { dense: { size: 8, distance: 'Cosine' } },
      sparse_vectors: { text: { modifier: 'idf' } },
      shard_number: 6,
      replication_factor: 2,
      write_consistency_factor: 2,
      on_disk_payload: true,
    });
    expect(create?.body.hnsw_config).toBeUndefined();
  });

  it('gets a tenant index on userId and an index on every field filters and ordering use', async () => {
    const fake = scriptedClient({ retrieve: () => [metaPoint()] });
    const store = createQdrantStore({ client: fake.client, metadataIndexes: { topic: 'keyword' } });
    await store.open(OPEN);
    const indexes = Object.fromEntries(fake.bodies('createPayloadIndex').map((body) => [body.field_name, body.field_schema]));
    expect(indexes.userId).toEqual({ type: 'keyword', is_tenant: true });
    for (const field of ['agentId', 'sessionId', 'kind', 'memoryId', 'category', 'type', 'level', 'source', 'tags']) {
      expect(indexes[field], field).toBe('keyword');
    }
    expect(indexes.verified).toBe('bool');
    expect(indexes.revision).toBe('integer');
    expect(indexes.createdAtMs).toMatchObject({ type: 'integer', range: true });
    expect(indexes.updatedAtMs).toMatchObject({ type: 'integer', range: true });
    expect(indexes['metadata.topic']).toBe('keyword');
    // Writes and undos filter on writeId: strict mode refuses filters on unindexed fields.
    expect(indexes.writeId).toBe('keyword');
    expect(fake.bodies('createPayloadIndex').every((body) => body.wait === true)).toBe(true);
  });

  it('creates only the payload indexes that are missing', async () => {
    const { updatedAtMs: _missing, ...present } = MEMLOOM_INDEXES;
    const fake = scriptedClient({ getCollection: () => collectionInfo({ payloadSchema: indexed(present) }), retrieve: () => [metaPoint()] });
    await createQdrantStore({ client: fake.client }).open(OPEN);
    expect(fake.bodies('createPayloadIndex').map((body) => body.field_name)).toEqual(['updatedAtMs']);
  });

  it('adds the writeId index to a collection made before memloom indexed it', async () => {
    const { writeId: _missing, ...present } = MEMLOOM_INDEXES;
    const fake = scriptedClient({ getCollection: () => collectionInfo({ payloadSchema: indexed(present) }), retrieve: () => [metaPoint()] });
    await createQdrantStore({ client: fake.client }).open(OPEN);
    expect(fake.bodies('createPayloadIndex')).toEqual([{ field_name: 'writeId', field_schema: 'keyword', wait: true }]);
  });

  it('builds per-tenant HNSW graphs when asked', async () => {
    let created = false;
    const fake = scriptedClient({
      collectionExists: () => ({ exists: created }),
      createCollection: () => ((created = true), true),
      retrieve: () => [metaPoint()],
    });
    await createQdrantStore({ client: fake.client, perTenantIndex: true }).open(OPEN);
    expect(fake.bodies('createCollection')[0].hnsw_config).toEqual({ payload_m: 16, m: 0 });
  });

  it('records the embedder (and the tokenizer version, as it has no keyword vectors yet) with an insert-only write of the metadata point', async () => {
    const fake = scriptedClient({ retrieve: () => (fake.bodies('upsert').length > 0 ? [metaPoint()] : []) });
    await createQdrantStore({ client: fake.client }).open(OPEN);
    const [upsert] = fake.bodies('upsert');
    expect(upsert.update_mode).toBe('insert_only');
    expect(upsert.points).toEqual([
      { id: META_POINT_ID, vector: {}, payload: { kind: 'meta', schemaVersion: 1, embedderId: 'test/embedder', dimension: 8, tokenizerVersion: TOKENIZER_VERSION } },
    ]);
  });

  it('uses the collection another process created at the same moment', async () => {
    let checks = 0;
    const fake = scriptedClient({
      collectionExists: () => ({ exists: checks++ > 0 }),
      createCollection: () => {
        throw Object.assign(new Error('conflict'), { status: 409, data: { status: { error: 'Collection `memloom` already exists!' } } });
      },
      retrieve: () => [metaPoint()],
    });
    await createQdrantStore({ client: fake.client }).open(OPEN);
    expect(fake.methods()).toContain('createPayloadIndex');
  });
});

describe('open with mustExist', () => {
  it('refuses a missing collection with MISSING_RESOURCE naming it, and asks the server to create nothing', async () => {
    const fake = scriptedClient({ collectionExists: () => ({ exists: false }) });
    const error = await createQdrantStore({ client: fake.client, collection: 'teem', mustExist: true }).open(OPEN).then(
      () => undefined,
      (caught: unknown) => caught as MemloomError,
    );
    expect(MemloomError.isInstance(error)).toBe(true);
    // A client given ready-made has its own URL: the store names none.
    expect(error).toMatchObject({ code: 'MISSING_RESOURCE', backend: 'qdrant', details: { collection: 'teem', mustExist: true } });
    expect(error?.details).not.toHaveProperty('url');
    expect(error?.message).toContain('the collection "teem" does not exist, and nothing was created (mustExist)');
    expect(fake.methods()).toEqual(['versionInfo', 'collectionExists']);
  });

  it('opens an existing collection as without it', async () => {
    const fake = scriptedClient({ retrieve: () => [metaPoint()] });
    const store = createQdrantStore({ client: fake.client, mustExist: true });
    await store.open(OPEN);
    expect(fake.methods()).not.toContain('createCollection');
    expect(fake.methods()).toContain('getCollection');
    expect(await store.count({})).toBe(0);
  });

  it('creates no store in an existing collection (no embedder record is stamped), and still adds a missing payload index', async () => {
    // A collection without memloom's embedder record (made by another tool, or a creation cut short) is no store.
    const bare = scriptedClient({ retrieve: () => [] });
    const error = await createQdrantStore({ client: bare.client, collection: 'teem', mustExist: true }).open(OPEN).then(
      () => undefined,
      (caught: unknown) => caught as MemloomError,
    );
    expect(error).toMatchObject({ code: 'MISSING_RESOURCE', backend: 'qdrant', details: { collection: 'teem', mustExist: true } });
    expect(error?.message).toContain('the collection "teem" holds no memloom store (no embedder record), and nothing was created (mustExist)');
    expect(bare.methods().filter((method) => WRITES.includes(method))).toEqual([]);
    // A memloom collection missing an index (made by an older version) gets it: a strict-mode server
    // needs it before it filters on the field, and the CLI opens commands that write with mustExist.
    const { writeId: _writeId, ...allButWriteId } = MEMLOOM_INDEXES;
    const older = scriptedClient({ retrieve: () => [metaPoint()], getCollection: () => collectionInfo({ payloadSchema: indexed(allButWriteId) }) });
    const store = createQdrantStore({ client: older.client, mustExist: true });
    await store.open(OPEN);
    expect(await store.count({})).toBe(0);
    expect(older.methods().filter((method) => WRITES.includes(method))).toEqual(['createPayloadIndex']);
    expect(older.bodies('createPayloadIndex')).toEqual([expect.objectContaining({ field_name: 'writeId' })]);
  });

  it('is off by default: a missing collection is created as before', async () => {
    let created = false;
    const fake = scriptedClient({
      collectionExists: () => ({ exists: created }),
      createCollection: () => ((created = true), true),
      retrieve: () => [metaPoint()],
    });
    await createQdrantStore({ client: fake.client, collection: 'teem', mustExist: false }).open(OPEN);
    expect(fake.calls.filter((call) => call.method === 'createCollection').map((call) => call.collection)).toEqual(['teem']);
  });
});

describe('open: an existing collection of another kind is refused and left unchanged', () => {
  const cases: Array<[string, Parameters<typeof collectionInfo>[0], string, unknown?]> = [
    ['another dimension', { size: 384 }, 'DIMENSION_MISMATCH'],
    ['another distance', { distance: 'Dot' }, 'STORE_CORRUPT'],
    ['an unnamed vector', { vectors: { size: 8, distance: 'Cosine' } }, 'STORE_CORRUPT'],
    ['no BM25 sparse vector', { sparse: {} }, 'STORE_CORRUPT'],
    ['a sparse vector without idf', { sparse: { text: {} } }, 'STORE_CORRUPT'],
  ];
  for (const [what, info, code] of cases) {
    it(`${what}: ${code}`, async () => {
      const fake = scriptedClient({ getCollection: () => collectionInfo(info), retrieve: () => [metaPoint()] });
      expect(await codeOf(createQdrantStore({ client: fake.client }).open(OPEN))).toBe(code);
      expect(fake.methods().filter((method) => WRITES.includes(method))).toEqual([]);
    });
  }

  it('a payload index of another type: STORE_CORRUPT naming the field and both types', async () => {
    const cases: Array<[Record<string, string>, Record<string, 'keyword' | 'integer'>, string, string, string]> = [
      [{ ...MEMLOOM_INDEXES, userId: 'integer' }, {}, 'userId', 'integer', 'keyword'],
      [{ ...MEMLOOM_INDEXES, revision: 'float' }, {}, 'revision', 'float', 'integer'],
      [{ ...MEMLOOM_INDEXES, 'metadata.rank': 'keyword' }, { rank: 'integer' }, 'metadata.rank', 'keyword', 'integer'],
    ];
    for (const [schema, metadataIndexes, field, stored, expected] of cases) {
      const fake = scriptedClient({ getCollection: () => collectionInfo({ payloadSchema: indexed(schema) }), retrieve: () => [metaPoint()] });
      const error = await createQdrantStore({ client: fake.client, metadataIndexes }).open(OPEN).then(
        () => undefined,
        (caught: unknown) => caught as MemloomError,
      );
      expect(MemloomError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ code: 'STORE_CORRUPT', backend: 'qdrant', details: { collection: 'memloom', field, stored, expected } });
      expect(error?.message).toBe(
        `[memloom] [qdrant] collection "memloom" has a ${stored} index on payload field "${field}"; memloom needs ${expected}: drop that index (or use another collection)`,
      );
      expect(fake.methods().filter((method) => WRITES.includes(method))).toEqual([]);
    }
  });

  it('takes a uuid index on writeId (its values are UUIDs) as memloom\'s keyword one', async () => {
    const fake = scriptedClient({ getCollection: () => collectionInfo({ payloadSchema: indexed({ ...MEMLOOM_INDEXES, writeId: 'uuid' }) }), retrieve: () => [metaPoint()] });
    await createQdrantStore({ client: fake.client }).open(OPEN);
    expect(fake.methods()).not.toContain('createPayloadIndex');
  });

  it('another embedder: EMBEDDER_MISMATCH', async () => {
    const fake = scriptedClient({ retrieve: () => [metaPoint('another/model')] });
    expect(await codeOf(createQdrantStore({ client: fake.client }).open(OPEN))).toBe('EMBEDDER_MISMATCH');
    expect(fake.methods().filter((method) => WRITES.includes(method))).toEqual([]);
  });

  it('a newer schema: SCHEMA_TOO_NEW', async () => {
    const fake = scriptedClient({ retrieve: () => [metaPoint('test/embedder', 99)] });
    expect(await codeOf(createQdrantStore({ client: fake.client }).open(OPEN))).toBe('SCHEMA_TOO_NEW');
    expect(fake.methods().filter((method) => WRITES.includes(method))).toEqual([]);
  });

  it('a server older than 1.17: NOT_SUPPORTED before anything else', async () => {
    const fake = scriptedClient({ versionInfo: () => ({ title: 'qdrant', version: '1.16.3' }) });
    expect(await codeOf(createQdrantStore({ client: fake.client }).open(OPEN))).toBe('NOT_SUPPORTED');
    expect(fake.methods()).toEqual(['versionInfo']);
  });
});

describe('options', () => {
  it('are validated at the boundary with INVALID_OPTIONS naming the field', () => {
    expect(() => createQdrantStore({ url: 'localhost:6333' })).toThrow(/url/);
    expect(() => createQdrantStore({ collection: 'has space' })).toThrow(/collection/);
    expect(() => createQdrantStore({ replicationFactor: 1, writeConsistencyFactor: 2 })).toThrow(/writeConsistencyFactor/);
    // A misspelt option is refused, not ignored with its default used.
    expect(() => createQdrantStore({ colection: 'memories' } as never)).toThrow('invalid createQdrantStore options: unknown key "colection"');
    expect(() => createQdrantStore({ timeoutMs: 3_600_000_000 })).toThrow(/timeoutMs/);
    expect(() => createQdrantStore({ mustExist: 'yes' } as never)).toThrow(/mustExist/);
    expect(() => createQdrantStore({ retry: { attempt: 2 } } as never)).toThrow('retry: unknown key "attempt"');
    let caught: unknown;
    try {
      createQdrantStore({ batchSize: 0 });
    } catch (error) {
      caught = error;
    }
    expect((caught as MemloomError).code).toBe('INVALID_OPTIONS');
    expect((caught as MemloomError).message).toMatch(/^\[memloom\] \[qdrant\] .*batchSize/);
  });
});
