import { QdrantClient } from '@qdrant/js-client-rest';

/**
 * The part of `QdrantClient` (from `@qdrant/js-client-rest`) the store uses.
 * Pass a real client to share one, or a test double in unit tests.
 */
export type QdrantClientLike = Pick<
  QdrantClient,
  | 'versionInfo'
  | 'collectionExists'
  | 'getCollection'
  | 'createCollection'
  | 'createPayloadIndex'
  | 'upsert'
  | 'retrieve'
  | 'scroll'
  | 'count'
  | 'query'
  | 'delete'
  | 'setPayload'
>;

/** The request and response shapes of the REST API, as the client types them. */
export type { Schemas } from '@qdrant/js-client-rest';

export function createClient(options: { url: string; apiKey: string | undefined; timeoutMs: number }): QdrantClientLike {
  return new QdrantClient({
    url: options.url,
    ...(options.apiKey ? { apiKey: options.apiKey } : {}),
    timeout: options.timeoutMs,
    // open() checks the server version itself and fails with a typed error.
    checkCompatibility: false,
  });
}
