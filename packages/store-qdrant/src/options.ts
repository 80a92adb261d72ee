import { formatZodIssues, MAX_TIMEOUT_MS, MemloomError } from '@memloom/core';
import { z } from 'zod';
import type { QdrantClientLike } from './client.js';

/** Read consistency Qdrant applies on replicated collections. */
export type ReadConsistency = number | 'majority' | 'quorum' | 'all';

/** How write operations are ordered between the replicas of a shard. */
export type WriteOrdering = 'weak' | 'medium' | 'strong';

export interface QdrantRetryOptions {
  /** Tries per request, the first included. 1 turns retries off. @default 4 */
  attempts?: number;
  /** Upper bound of the first backoff delay (full jitter). @default 100 */
  initialDelayMs?: number;
  /** Cap of any single backoff delay. @default 2000 */
  maxDelayMs?: number;
  /** Waits between tries; injected so tests never sleep. @default setTimeout */
  sleep?: (ms: number) => Promise<void>;
  /** Source of jitter in [0, 1). @default Math.random */
  random?: () => number;
}

export interface QdrantTextSearchOptions {
  /** BM25 term-frequency saturation used for the document side of the sparse vectors. @default 1.2 */
  k1?: number;
  /** BM25 length normalization. @default 0.75 */
  b?: number;
  /**
   * Expected average memory length in tokens. Qdrant computes IDF itself
   * (`modifier: idf`) but not the corpus' average length, so it is fixed here
   * (as Qdrant's own BM25 does). Changing it only affects memories written afterwards.
   * @default 16
   */
  averageLength?: number;
}

/** Progress of long work the store does on its own. */
export interface QdrantProgress {
  /** `retokenize`: `open()` rewriting every memory's keyword vector after a change of core's tokenizer. */
  task: 'retokenize';
  /** Memories done so far. */
  done: number;
  /** Memories to do, as counted when the work began (never below `done`). */
  total: number;
  /**
   * Memory points left as they are so far because a read refuses them (damaged, `STORE_CORRUPT`): each point's id
   * and why. Their keyword vectors keep the older terms; the rebuild goes on without them. Absent when there are none.
   */
  skipped?: Array<{ pointId: string; message: string }>;
}

export interface QdrantStoreOptions {
  /**
   * Qdrant's REST endpoint. Ignored when `client` is given. A path is kept (Qdrant behind a
   * reverse proxy at `https://example.com/qdrant`); a port written in it is used. Without a port:
   * the scheme's (443 / 80) when there is a path, else Qdrant's 6333, as QdrantClient does.
   * @default 'http://localhost:6333'
   */
  url?: string;
  /**
   * Where `url` came from (`'environment variable QDRANT_URL'`, a configuration file's path), for tools that
   * read it from configuration: every request error, a collection the server does not have and a server that
   * is not Qdrant end with `(the Qdrant URL from <urlSource>)` and carry `details.urlSource`. Ignored when `client` is given.
   * @default undefined
   */
  urlSource?: string;
  /** API key (sent as the `api-key` header). Ignored when `client` is given. @default undefined */
  apiKey?: string;
  /** Collection holding memories, their versions and one metadata point. @default 'memloom' */
  collection?: string;
  /**
   * Open the collection only if it exists: a missing one is MISSING_RESOURCE naming the
   * collection and the URL (`details: { collection, url, mustExist: true }`; no `url` with a given
   * `client`, which has its own), and nothing is created on the server. For tools that only read, so that a misspelt collection leaves no empty
   * one behind (the `memloom` CLI's read commands).
   * @default false (a missing collection is created)
   */
  mustExist?: boolean;
  /** A ready client (e.g. a `QdrantClient` with custom headers, or a test double). @default a new QdrantClient({ url, apiKey, timeout }) */
  client?: QdrantClientLike;
  /**
   * Per-request timeout of the client this store creates, in milliseconds. `open()` does not retry its first
   * request when this client gave up waiting for its answer: against a server that never answers it fails after
   * one timeout (a connect timeout, an HTTP 408 or 504 are retried). @default 30000
   */
  timeoutMs?: number;
  /** Shards of a newly created collection (spread over the cluster's nodes). @default 1 */
  shardNumber?: number;
  /** Copies of each shard in a newly created collection. @default 1 */
  replicationFactor?: number;
  /** Replicas that must confirm a write before it counts (new collections). @default 1 */
  writeConsistencyFactor?: number;
  /** Keep payloads on disk instead of in RAM (new collections). @default true */
  onDiskPayload?: boolean;
  /** Keep the dense vectors on disk, memory-mapped (new collections). @default false */
  onDiskVectors?: boolean;
  /**
   * Build HNSW graphs per tenant (`payload_m: 16`) and none across the whole
   * collection (`m: 0`), as Qdrant recommends for many users in one
   * collection. Searches without a userId then fall back to slower scans.
   * Only applies to collections created by this store.
   * @default false
   */
  perTenantIndex?: boolean;
  /**
   * Extra payload indexes for metadata keys your filters use, e.g.
   * `{ topic: 'keyword', rank: 'integer' }`. Unindexed metadata filters still
   * work unless the cluster runs strict mode.
   * @default {}
   */
  metadataIndexes?: Record<string, 'keyword' | 'integer' | 'float' | 'bool'>;
  /** Points per upsert or delete request. @default 256 */
  batchSize?: number;
  /** Consistency of ordinary reads (get, list, search, and the scan of deleteByScope). Revision checks always read with `majority`. @default undefined (Qdrant's default: one replica) */
  readConsistency?: ReadConsistency;
  /** Ordering of memory writes. Conditional writes need `strong` (or `medium`) to be decided by one leader. @default 'strong' */
  writeOrdering?: WriteOrdering;
  /** Refuse servers older than 1.17 (they ignore `update_mode`, which revision checks rely on), and one whose version answer is not Qdrant's JSON. @default true */
  checkServerVersion?: boolean;
  retry?: QdrantRetryOptions;
  textSearch?: QdrantTextSearchOptions;
  /**
   * Told how long work the store does on its own goes: `open()` re-tokenizing every memory's
   * keywords after core's tokenizer changed (`{ task: 'retokenize', done, total }`, before the
   * first page and after each; `skipped` names the damaged memory points it left as they are). Awaited;
   * what it throws fails the open.
   * @default undefined
   */
  onProgress?: (progress: QdrantProgress) => unknown;
}

const COLLECTION_NAME = /^[A-Za-z0-9_-]{1,200}$/;

const optionsSchema = z.strictObject({
  url: z.url({ protocol: /^https?$/ }).default('http://localhost:6333'),
  urlSource: z.string().min(1).optional(),
  apiKey: z.string().min(1).optional(),
  collection: z.string().regex(COLLECTION_NAME, 'letters, digits, _ and - only').default('memloom'),
  mustExist: z.boolean().default(false),
  client: z.custom<QdrantClientLike>((value) => typeof value === 'object' && value !== null, 'must be a client object').optional(),
  // At most the longest timer Node keeps: a longer one fires at once.
  timeoutMs: z.number().int().positive().max(MAX_TIMEOUT_MS).default(30_000),
  shardNumber: z.number().int().min(1).default(1),
  replicationFactor: z.number().int().min(1).default(1),
  writeConsistencyFactor: z.number().int().min(1).default(1),
  onDiskPayload: z.boolean().default(true),
  onDiskVectors: z.boolean().default(false),
  perTenantIndex: z.boolean().default(false),
  metadataIndexes: z
    .record(z.string().regex(/^[A-Za-z0-9_-]+$/, 'metadata index keys are plain top-level keys'), z.enum(['keyword', 'integer', 'float', 'bool']))
    .default({}),
  batchSize: z.number().int().min(1).max(10_000).default(256),
  readConsistency: z.union([z.number().int().min(1), z.enum(['majority', 'quorum', 'all'])]).optional(),
  writeOrdering: z.enum(['weak', 'medium', 'strong']).default('strong'),
  checkServerVersion: z.boolean().default(true),
  retry: z
    .strictObject({
      attempts: z.number().int().min(1).max(20).default(4),
      initialDelayMs: z.number().min(0).default(100),
      maxDelayMs: z.number().min(0).default(2000),
      sleep: z.custom<(ms: number) => Promise<void>>((value) => typeof value === 'function').optional(),
      random: z.custom<() => number>((value) => typeof value === 'function').optional(),
    })
    .prefault({}),
  textSearch: z
    .strictObject({
      k1: z.number().positive().default(1.2),
      b: z.number().min(0).max(1).default(0.75),
      averageLength: z.number().positive().default(16),
    })
    .prefault({}),
  onProgress: z.custom<(progress: QdrantProgress) => unknown>((value) => typeof value === 'function', 'must be a function').optional(),
});

export type ResolvedQdrantStoreOptions = z.output<typeof optionsSchema>;

/** Why one option's value would be refused (`field: problem`), or undefined when createQdrantStore takes it. */
export function optionProblem(field: keyof QdrantStoreOptions, value: unknown): string | undefined {
  const parsed = optionsSchema.shape[field].safeParse(value);
  return parsed.success ? undefined : formatZodIssues(parsed.error, field);
}

/** Validate options at the boundary; INVALID_OPTIONS names the field. */
export function resolveOptions(options: QdrantStoreOptions | undefined): ResolvedQdrantStoreOptions {
  const parsed = optionsSchema.safeParse(options ?? {});
  if (!parsed.success) {
    throw new MemloomError({
      code: 'INVALID_OPTIONS',
      backend: 'qdrant',
      message: `invalid createQdrantStore options: ${formatZodIssues(parsed.error)}`,
    });
  }
  if (parsed.data.writeConsistencyFactor > parsed.data.replicationFactor) {
    throw new MemloomError({
      code: 'INVALID_OPTIONS',
      backend: 'qdrant',
      message: `writeConsistencyFactor (${parsed.data.writeConsistencyFactor}) cannot exceed replicationFactor (${parsed.data.replicationFactor})`,
    });
  }
  return parsed.data;
}
