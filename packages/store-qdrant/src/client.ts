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
  | 'batchUpdate'
>;

/** The request and response shapes of the REST API, as the client types them. */
export type { Schemas } from '@qdrant/js-client-rest';

export function createClient(options: { url: string; apiKey: string | undefined; timeoutMs: number }): QdrantClientLike {
  return new QdrantClient({
    ...clientLocation(options.url),
    ...(options.apiKey ? { apiKey: options.apiKey } : {}),
    timeout: options.timeoutMs,
    // open() checks the server version itself and fails with a typed error.
    checkCompatibility: false,
  });
}

/**
 * `url` as QdrantClient's `url`, `port` and `prefix`. The client keeps only the scheme, host and
 * port of a `url` and falls back to port 6333 when the URL parser reports none, which it also does
 * for a scheme's own port written out (`https://host:443`). So a path becomes the `prefix` (Qdrant
 * behind a reverse proxy at `https://example.com/qdrant`), a port written in the URL is passed
 * on, and a URL with a path but no port uses its scheme's port: Qdrant serves no path itself, so
 * whatever answers there is a proxy on the usual port. Without a path or a port: 6333, as before.
 */
function clientLocation(url: string): { url: string; port?: number | null; prefix?: string } {
  const parsed = new URL(url);
  const prefix = parsed.pathname.replace(/\/+$/, '');
  const written = /^[a-z]+:\/\/(?:[^/?#@]*@)?[^/?#]*:(\d+)(?:[/?#]|$)/i.exec(url)?.[1];
  const port = written !== undefined ? Number(written) : prefix ? null : undefined;
  return { url: parsed.origin, ...(port !== undefined ? { port } : {}), ...(prefix ? { prefix } : {}) };
}
