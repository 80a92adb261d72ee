import { TOKENIZER_VERSION } from '@memloom/core';
import type { QdrantClientLike } from '../src/index.js';

type Method = keyof QdrantClientLike;
type Handler = (...args: any[]) => unknown;

export interface RecordedCall {
  method: Method;
  collection: unknown;
  body: any;
}

/**
 * A scripted stand-in for QdrantClient: it records every request and answers
 * with what the test scripts (or an empty default). It is not a Qdrant: it
 * only lets the tests look at the requests the store sends and feed it the
 * answers (and failures) a server would give.
 */
export function scriptedClient(handlers: Partial<Record<Method, Handler>> = {}) {
  const calls: RecordedCall[] = [];
  const defaults: Record<Method, Handler> = {
    versionInfo: () => ({ title: 'qdrant', version: '1.18.0' }),
    collectionExists: () => ({ exists: true }),
    getCollection: () => collectionInfo(),
    createCollection: () => true,
    createPayloadIndex: () => ({ operation_id: 1, status: 'completed' }),
    upsert: () => ({ operation_id: 1, status: 'completed' }),
    retrieve: () => [],
    scroll: () => ({ points: [], next_page_offset: null }),
    count: () => ({ count: 0 }),
    query: () => ({ points: [] }),
    delete: () => ({ operation_id: 1, status: 'completed' }),
    setPayload: () => ({ operation_id: 1, status: 'completed' }),
    batchUpdate: () => [{ operation_id: 1, status: 'completed' }],
  };
  const client = {} as Record<Method, Handler>;
  for (const method of Object.keys(defaults) as Method[]) {
    client[method] = async (...args: unknown[]) => {
      calls.push({ method, collection: args[0], body: args[1] });
      const handler = handlers[method] ?? defaults[method];
      return handler(...args);
    };
  }
  return {
    client: client as unknown as QdrantClientLike,
    calls,
    bodies: (method: Method) => calls.filter((call) => call.method === method).map((call) => call.body),
    methods: () => calls.map((call) => call.method),
  };
}

export function collectionInfo(options: { size?: number; distance?: string; sparse?: unknown; payloadSchema?: Record<string, unknown>; vectors?: unknown } = {}) {
  return {
    status: 'green',
    optimizer_status: 'ok',
    segments_count: 1,
    config: {
      params: {
        vectors: options.vectors ?? { dense: { size: options.size ?? 8, distance: options.distance ?? 'Cosine' } },
        sparse_vectors: options.sparse === undefined ? { text: { modifier: 'idf' } } : options.sparse,
      },
      hnsw_config: {},
      optimizer_config: {},
    },
    payload_schema: options.payloadSchema ?? {},
  };
}

/** The metadata point as open() reads it back; `tokenizerVersion` null: one written before it was recorded. */
export function metaPoint(embedderId = 'test/embedder', schemaVersion = 1, tokenizerVersion: number | null = TOKENIZER_VERSION) {
  return { id: 'meta', payload: { kind: 'meta', schemaVersion, embedderId, dimension: 8, ...(tokenizerVersion !== null ? { tokenizerVersion } : {}) } };
}

/** An HTTP failure shaped like the client's ApiError. */
export function httpError(status: number, error = 'something went wrong') {
  return Object.assign(new Error(`status ${status}`), { name: 'ApiError', status, statusText: 'x', data: { status: { error } } });
}
