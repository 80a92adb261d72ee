import { describeValue, MemloomError, missingStoreError, TOKENIZER_VERSION, type StoreOpenOptions } from '@memloom/core';
import { DECIDING_READ, type Backend } from './backend.js';
import type { Schemas } from './client.js';
import { PAYLOAD_INDEXES } from './filters.js';
import { KIND, SCHEMA_VERSION, type MetaPayload } from './payload.js';
import { META_POINT_ID } from './point-ids.js';
import { type CallKind, FIRST_CONTACT, urlOrigin, WRITE } from './retry.js';
import { refreshTerms } from './terms-version.js';

/** Qdrant 1.17 added `update_mode` (insert_only / update_only), which revision checks rely on. */
export const MIN_SERVER_VERSION = [1, 17, 0] as const;

/**
 * Make the collection ready for vectors of this dimension from this embedder:
 * create it when missing (unless `mustExist`: then MISSING_RESOURCE, nothing
 * created); refuse one of another dimension, distance or embedder, or with a
 * payload index of another type, before writing anything; add missing payload
 * indexes. With `mustExist` it creates nothing: a collection without memloom's
 * embedder record is MISSING_RESOURCE (a reader does not stamp its own embedder);
 * missing payload indexes are still added. Last, keyword vectors made by another version of core's
 * tokenizer are made again (with `mustExist` too: a reader's keyword search needs them current).
 */
export async function prepareCollection(backend: Backend, open: StoreOpenOptions): Promise<void> {
  const { client, call, collection, options } = backend;
  if (options.checkServerVersion) await checkServerVersion(backend);

  // Without the version check, whether the collection exists is open()'s first request.
  let info = await readCollection(backend, options.checkServerVersion ? {} : FIRST_CONTACT);
  if (!info) {
    if (options.mustExist) throw missingCollection(backend);
    try {
      await call('create collection', () => client.createCollection(collection, collectionConfig(backend, open.dimension)), WRITE);
    } catch (error) {
      // Another process may have created it at the same moment: use theirs if it is there now.
      info = await readCollection(backend);
      if (!info) throw error;
    }
    info ??= await readCollection(backend);
    if (!info) throw new MemloomError({ code: 'STORE_ERROR', backend: 'qdrant', message: `collection "${collection}" was created but cannot be read` });
  }
  checkVectors(info, collection, open.dimension);
  const indexes = wantedIndexes(backend);
  checkPayloadIndexes(info, collection, indexes);
  const meta = await checkMeta(backend, open);
  // Also with mustExist: an index is no data, and a collection of an older memloom may lack one that
  // a strict-mode server needs before it filters (and a command that must not create a store may write).
  await ensurePayloadIndexes(backend, info, indexes);
  // After the indexes: the rebuild filters on kind and writeId, which strict mode needs indexed.
  await refreshTerms(backend, meta);
}

function collectionConfig(backend: Backend, dimension: number): Parameters<Backend['client']['createCollection']>[1] {
  const { options } = backend;
  return {
    vectors: { dense: { size: dimension, distance: 'Cosine', on_disk: options.onDiskVectors } },
    // BM25 text search inside Qdrant: documents carry saturated term frequencies, Qdrant applies the IDF.
    sparse_vectors: { text: { modifier: 'idf' } },
    shard_number: options.shardNumber,
    replication_factor: options.replicationFactor,
    write_consistency_factor: options.writeConsistencyFactor,
    on_disk_payload: options.onDiskPayload,
    ...(options.perTenantIndex ? { hnsw_config: { payload_m: 16, m: 0 } } : {}),
  };
}

/** `kind`: `FIRST_CONTACT` when this is open()'s first request. */
async function readCollection(backend: Backend, kind: CallKind = {}): Promise<Schemas['CollectionInfo'] | undefined> {
  // Qdrant answers whether a collection exists with a yes or a no: a 404 is not about the collection.
  const { exists } = await backend.call('check collection', () => backend.client.collectionExists(backend.collection), { ...kind, notFoundMeansNotQdrant: true });
  if (!exists) return undefined;
  return backend.call('read collection', () => backend.client.getCollection(backend.collection));
}

function checkVectors(info: Schemas['CollectionInfo'], collection: string, dimension: number): void {
  const vectors = info.config.params.vectors as Record<string, { size?: number; distance?: string } | undefined> | undefined;
  const dense = vectors && typeof vectors === 'object' && !('size' in vectors) ? vectors.dense : undefined;
  if (!dense || typeof dense.size !== 'number') {
    throw corrupt(collection, 'has no named vector "dense"; it was not created by memloom');
  }
  if (dense.distance !== 'Cosine') {
    throw corrupt(collection, `compares vectors by ${String(dense.distance)}; memloom needs Cosine`);
  }
  const sparse = info.config.params.sparse_vectors as Record<string, { modifier?: unknown } | undefined> | null | undefined;
  if (!sparse?.text || sparse.text.modifier !== 'idf') {
    throw corrupt(collection, 'has no sparse vector "text" with the idf modifier; it was not created by memloom');
  }
  if (dense.size !== dimension) {
    throw new MemloomError({
      code: 'DIMENSION_MISMATCH',
      backend: 'qdrant',
      message: `collection "${collection}" holds vectors of dimension ${dense.size}; the embedder gives ${dimension}`,
      details: { collection, stored: dense.size, requested: dimension },
    });
  }
}

async function checkMeta(backend: Backend, open: StoreOpenOptions): Promise<MetaPayload> {
  let meta = await readMeta(backend);
  if (!meta) {
    if (backend.options.mustExist) throw missingCollection(backend, 'holds no memloom store (no embedder record)');
    // A new store has no keyword vectors yet: those it gets are made by this tokenizer.
    const payload: MetaPayload = {
      kind: KIND.meta,
      schemaVersion: SCHEMA_VERSION,
      embedderId: open.embedderId,
      dimension: open.dimension,
      tokenizerVersion: TOKENIZER_VERSION,
    };
    // insert_only: when two processes open a new collection at once, the first embedder recorded wins.
    await backend.call('record embedder', () =>
      backend.client.upsert(backend.collection, {
        wait: true,
        ordering: backend.options.writeOrdering,
        update_mode: 'insert_only',
        points: [{ id: META_POINT_ID, vector: {}, payload: { ...payload } }],
      }),
      WRITE,
    );
    meta = await readMeta(backend);
    if (!meta) throw new MemloomError({ code: 'STORE_ERROR', backend: 'qdrant', message: 'the embedder record was written but cannot be read back' });
  }
  if (meta.schemaVersion > SCHEMA_VERSION) {
    throw new MemloomError({
      code: 'SCHEMA_TOO_NEW',
      backend: 'qdrant',
      message: `collection "${backend.collection}" was written by a newer memloom (schema ${meta.schemaVersion}; this one knows ${SCHEMA_VERSION})`,
    });
  }
  if (meta.embedderId !== open.embedderId) {
    throw new MemloomError({
      code: 'EMBEDDER_MISMATCH',
      backend: 'qdrant',
      message: `collection "${backend.collection}" was indexed by ${meta.embedderId}, not ${open.embedderId}; re-index to switch`,
      details: { stored: meta.embedderId, requested: open.embedderId },
    });
  }
  return meta;
}

async function readMeta(backend: Backend): Promise<MetaPayload | undefined> {
  const [point] = await backend.call('read embedder record', () =>
    backend.client.retrieve(backend.collection, { ids: [META_POINT_ID], with_payload: true, with_vector: false, consistency: DECIDING_READ }),
  );
  if (!point) return undefined;
  const payload = point.payload as Partial<MetaPayload> | null | undefined;
  if (payload?.kind !== KIND.meta || typeof payload.embedderId !== 'string' || typeof payload.schemaVersion !== 'number') {
    throw corrupt(backend.collection, 'holds a damaged memloom metadata point');
  }
  return payload as MetaPayload;
}

type WantedIndex = (typeof PAYLOAD_INDEXES)[number];

function wantedIndexes(backend: Backend): WantedIndex[] {
  return [...PAYLOAD_INDEXES, ...Object.entries(backend.options.metadataIndexes).map(([key, schema]) => ({ field: `metadata.${key}`, schema }))];
}

/**
 * An index of another type on a field memloom filters on (a `userId` index made as `integer` by
 * another tool) makes its filters fail or miss; Qdrant keeps one index per field, so memloom
 * cannot add its own beside it. Refused, naming the field and both types; other index settings
 * (tenant, range, on disk) only change speed and are left as they are.
 */
function checkPayloadIndexes(info: Schemas['CollectionInfo'], collection: string, wanted: readonly WantedIndex[]): void {
  const existing = info.payload_schema ?? {};
  for (const { field, schema } of wanted) {
    const found = existing[field];
    if (!found) continue;
    const expected = typeof schema === 'string' ? schema : schema.type;
    if (found.data_type === expected) continue;
    // writeId is always a UUID: a uuid index (one a strict-mode user may have made) answers its match filters too.
    if (field === 'writeId' && found.data_type === 'uuid') continue;
    throw new MemloomError({
      code: 'STORE_CORRUPT',
      backend: 'qdrant',
      message: `collection "${collection}" has a ${String(found.data_type)} index on payload field "${field}"; memloom needs ${expected}: drop that index (or use another collection)`,
      details: { collection, field, stored: found.data_type, expected },
    });
  }
}

async function ensurePayloadIndexes(backend: Backend, info: Schemas['CollectionInfo'], wanted: readonly WantedIndex[]): Promise<void> {
  const existing = new Set(Object.keys(info.payload_schema ?? {}));
  for (const { field, schema } of wanted) {
    if (existing.has(field)) continue;
    await backend.call(`create payload index ${field}`, () =>
      backend.client.createPayloadIndex(backend.collection, { field_name: field, field_schema: schema, wait: true }),
      WRITE,
    );
  }
}

async function checkServerVersion(backend: Backend): Promise<void> {
  const info: unknown = await backend.call('read server version', () => backend.client.versionInfo(), { ...FIRST_CONTACT, notFoundMeansNotQdrant: true });
  const version = typeof info === 'object' && info !== null ? (info as { version?: unknown }).version : undefined;
  // Not Qdrant's JSON (a web page, another API on that port, a proxy's own page): say so now, not at the next request.
  if (typeof version !== 'string') throw notQdrant(backend, info);
  const parts = /^(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (!parts) return;
  const numbers = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  for (let index = 0; index < 3; index++) {
    const have = numbers[index] as number;
    const need = MIN_SERVER_VERSION[index] as number;
    if (have > need) return;
    if (have < need) {
      throw new MemloomError({
        code: 'NOT_SUPPORTED',
        backend: 'qdrant',
        message: `Qdrant ${version} is too old: memloom needs ${MIN_SERVER_VERSION.join('.')} or newer (conditional upserts keep concurrent writers from overwriting each other)`,
        details: { version },
      });
    }
  }
}

/** The server answered the version request, but not with Qdrant's JSON (`{ title, version, … }`). */
function notQdrant(backend: Backend, answer: unknown): MemloomError {
  const { collection, url } = backend;
  const where = url === undefined ? 'behind the given client' : `at ${url}`;
  const what = answer === undefined || answer === null || answer === '' ? 'nothing' : typeof answer === 'object' ? 'JSON without a version' : describeValue(answer);
  const { from, details: origin } = urlOrigin(backend);
  return new MemloomError({
    code: 'STORE_ERROR',
    backend: 'qdrant',
    message: `no Qdrant server ${where}: the server version request was answered with ${what}, not Qdrant's JSON; check the URL (its port, or a proxy's path)${from}`,
    details: { operation: 'read server version', collection, ...origin },
  });
}

/** mustExist and no such collection (or one memloom did not make): say which one, on which server, and that nothing was made. */
function missingCollection(backend: Backend, what = 'does not exist'): MemloomError {
  const { collection, url } = backend;
  const { from, details: origin } = urlOrigin(backend);
  const where = url === undefined ? 'on the server of the given client' : `at ${url}`;
  const error = missingStoreError({
    backend: 'qdrant',
    where,
    what: `the collection "${collection}" ${what}`,
    check: 'the collection name and the URL',
    details: { collection, ...origin },
  });
  if (!from) return error;
  return new MemloomError({ code: error.code, backend: 'qdrant', message: `${error.reason}${from}`, details: error.details });
}

function corrupt(collection: string, what: string): MemloomError {
  return new MemloomError({ code: 'STORE_CORRUPT', backend: 'qdrant', message: `collection "${collection}" ${what}`, details: { collection } });
}
