import { createHash } from 'node:crypto';
import { isMap } from 'node:util/types';
import { abortable, assertValidVector, describeValue, hasLoneSurrogate, MemloomError, type Embedder, type EmbedOptions } from '@memloom/core';
import { assertKnownOptions, shown } from './known-options.js';
import { assertTexts } from './lexical-embedder.js';

/**
 * Where vectors outlive the process. A store may offer one so that
 * re-indexing after a restart does not re-embed what it already holds
 * (described here, implemented by stores that choose to).
 *
 * Keys are opaque strings made by the cache (embedder id, purpose and text
 * hashed together); a store keeps them in a table of its own beside the
 * memories, e.g. `embedding_cache(key TEXT PRIMARY KEY, vector BLOB, used_at)`,
 * and may drop any entry at any time: a miss only costs an embedding.
 */
export interface PersistentEmbeddingCache {
  /**
   * Vectors for the keys it holds; missing keys are simply absent from the map.
   * A failure (thrown, rejected, or anything but a Map) is counted in
   * `stats().persistentErrors` and read as "no key held", never thrown.
   */
  getMany(keys: readonly string[]): Promise<Map<string, number[]>>;
  /** Remember vectors. Best effort: a failure is counted in `stats().persistentErrors`, never thrown. */
  setMany(entries: ReadonlyMap<string, readonly number[]>): Promise<void>;
}

export interface CachedEmbedderOptions {
  /**
   * Most vectors kept in memory; the least recently used go first. 0 keeps
   * none in memory (useful with `persistent` alone).
   * @default 10000
   */
  maxEntries?: number;
  /**
   * Whether query and document embeddings of the same text share an entry.
   * Leave it false for models that embed the two differently (e5, bge with
   * instructions); true saves work for symmetric ones. Refused
   * (`INVALID_OPTIONS`) for an embedder that names a `queryReading`, such as
   * the offline embedder.
   * @default false
   */
  sharePurposes?: boolean;
  /** A second, lasting level (e.g. a store's cache table), asked after a memory miss. */
  persistent?: PersistentEmbeddingCache;
}

export interface CachedEmbedder extends Embedder {
  /** Counters since creation (or the last `clear`). */
  stats(): { hits: number; misses: number; persistentHits: number; persistentErrors: number; entries: number };
  /** Forget every in-memory entry and reset the counters. */
  clear(): void;
  /** Forget every entry and close the inner embedder. */
  close(): Promise<void>;
}

/**
 * Wrap an embedder so the same text is never embedded twice: re-adding,
 * re-indexing or searching the same words again costs a map lookup. The key
 * is a digest of the embedder id, the purpose (unless shared; a query's with
 * the embedder's `queryReading`, if it names one) and the text, so
 * two embedders never mix their vectors and a long text costs no more memory
 * than a short one. Concurrent calls for the same text share one embedding;
 * one caller's abort never fails the others. Vectors are checked (dimension,
 * finite numbers) before they are kept, and copied in and out, so callers
 * cannot corrupt the cache.
 */
export function createCachedEmbedder(embedder: Embedder, options: CachedEmbedderOptions = {}): CachedEmbedder {
  if (!embedder || typeof embedder.embed !== 'function' || typeof embedder.id !== 'string') {
    throw new MemloomError({ code: 'INVALID_OPTIONS', backend: 'embeddings', message: 'createCachedEmbedder needs an embedder' });
  }
  if (options === null || typeof options !== 'object') {
    throw new MemloomError({ code: 'INVALID_OPTIONS', backend: 'embeddings', message: `cached embedder: options must be an object, got ${describeValue(options)}` });
  }
  assertKnownOptions(options, { maxEntries: true, sharePurposes: true, persistent: true } satisfies Record<keyof CachedEmbedderOptions, true>, 'createCachedEmbedder');
  const maxEntries = options.maxEntries ?? 10_000;
  assertCacheSize(maxEntries, 'cached embedder: maxEntries');
  const sharePurposes = options.sharePurposes ?? false;
  if (typeof sharePurposes !== 'boolean') {
    throw new MemloomError({ code: 'INVALID_OPTIONS', backend: 'embeddings', message: `cached embedder: sharePurposes must be true or false, got ${JSON.stringify(sharePurposes)}` });
  }
  const queryReading = embedder.queryReading;
  if (queryReading !== undefined && (typeof queryReading !== 'string' || queryReading === '')) {
    throw new MemloomError({ code: 'INVALID_OPTIONS', backend: 'embeddings', message: `cached embedder: ${embedder.id}'s queryReading must be a non-empty string, got ${shown(queryReading)}` });
  }
  if (sharePurposes && queryReading !== undefined) {
    throw new MemloomError({
      code: 'INVALID_OPTIONS',
      backend: 'embeddings',
      message: `cached embedder: sharePurposes cannot be true for ${embedder.id}, which embeds a query otherwise than a document (queryReading ${queryReading})`,
    });
  }
  const persistent = options.persistent;
  assertPersistentLevel(persistent, 'cached embedder: persistent');
  // A Map iterates in insertion order: delete + set moves an entry to the young end.
  const entries = new Map<string, number[]>();
  const pending = new Map<string, Shared>();
  let hits = 0;
  let misses = 0;
  let persistentHits = 0;
  let persistentErrors = 0;

  // A digest, not the text: 10,000 entries of long texts would otherwise hold every text in memory.
  // A query read otherwise than a document is keyed with that reading; documents' keys never change.
  const queryKeyPart = queryReading === undefined ? 'query' : `query:${queryReading}`;
  const keyOf = (text: string, purpose: 'document' | 'query') =>
    persistentKey(`${embedder.id}\u0000${sharePurposes ? '*' : purpose === 'query' ? queryKeyPart : purpose}\u0000${text}`);

  /** Core's check for a vector it will store: the right dimension, finite numbers only. */
  function isUsable(vector: unknown): vector is ArrayLike<number> {
    try {
      assertValidVector(vector, embedder.dimension, embedder.id, 'embeddings');
      return true;
    } catch {
      return false;
    }
  }

  function remember(key: string, vector: number[]): void {
    if (maxEntries === 0) return;
    entries.delete(key);
    entries.set(key, vector);
    while (entries.size > maxEntries) entries.delete(entries.keys().next().value as string);
  }

  function recall(key: string): number[] | undefined {
    const vector = entries.get(key);
    if (vector === undefined) return undefined;
    entries.delete(key);
    entries.set(key, vector);
    return vector;
  }

  /** The lasting level's answer, or an empty map when it throws, rejects or answers with anything but a Map. */
  async function readPersistent(level: PersistentEmbeddingCache, keys: string[]): Promise<Map<string, unknown>> {
    try {
      // Awaited inside try, so a getMany that throws before returning a promise is caught too.
      const stored: unknown = await level.getMany(keys);
      if (isMap(stored)) return stored as Map<string, unknown>;
    } catch {
      // Counted below, like a wrong answer.
    }
    persistentErrors++;
    return new Map();
  }

  /** Best effort: a write that throws or rejects is counted and skipped. */
  async function writePersistent(level: PersistentEmbeddingCache, fresh: Map<string, number[]>): Promise<void> {
    try {
      await level.setMany(fresh);
    } catch {
      persistentErrors++;
    }
  }

  async function embedMissing(keys: string[], texts: string[], embedOptions: EmbedOptions | undefined): Promise<Map<string, number[]>> {
    const found = new Map<string, number[]>();
    let todoKeys = keys;
    let todoTexts = texts;
    if (persistent) {
      // The lasting level is an optimisation: when it fails, embed as if it were empty.
      const stored = await readPersistent(persistent, keys);
      todoKeys = [];
      todoTexts = [];
      keys.forEach((key, index) => {
        const vector = stored.get(key);
        if (isUsable(vector)) {
          persistentHits++;
          found.set(key, Array.from(vector));
        } else {
          todoKeys.push(key);
          todoTexts.push(texts[index] as string);
        }
      });
    }
    if (todoTexts.length > 0) {
      const vectors = await embedder.embed(todoTexts, embedOptions);
      if (!Array.isArray(vectors) || vectors.length !== todoTexts.length) {
        throw new MemloomError({
          code: 'INVALID_EMBEDDING',
          backend: 'embeddings',
          message: `${embedder.id} returned ${Array.isArray(vectors) ? vectors.length : 'no'} vectors for ${todoTexts.length} texts`,
        });
      }
      const fresh = new Map<string, number[]>();
      todoKeys.forEach((key, index) => {
        // Checked before it is kept: a NaN or a wrong length would otherwise be served again, and stored for good.
        assertValidVector(vectors[index], embedder.dimension, embedder.id, 'embeddings');
        const vector = Array.from(vectors[index] as ArrayLike<number>);
        found.set(key, vector);
        fresh.set(key, vector);
      });
      if (persistent) await writePersistent(persistent, fresh);
    }
    return found;
  }

  /**
   * A vector another call is embedding. When that call's own signal aborted
   * it, the abort is not this caller's: undefined tells `embed` to embed the
   * text again, with this caller's options. This caller's own abort ends its
   * wait at once. The promise may reject while its caller still awaits its
   * own batch: it is marked handled, so Node does not end the process.
   */
  function share(shared: Shared, signal: AbortSignal | undefined): Promise<number[] | undefined> {
    const waited = shared.vector.catch((error: unknown) => {
      if (shared.signal?.aborted && !signal?.aborted) return undefined;
      throw error;
    });
    const result = abortable(waited, signal);
    result.catch(() => undefined);
    return result;
  }

  async function embed(texts: readonly string[], embedOptions?: EmbedOptions): Promise<number[][]> {
    assertTexts(texts, embedder.id);
    const purpose = embedOptions?.purpose ?? 'document';
    const keys = texts.map((text) => keyOf(text, purpose));
    const results: (number[] | Promise<number[] | undefined> | undefined)[] = new Array(keys.length);
    const missing = new Map<string, string>();
    keys.forEach((key, index) => {
      const cached = recall(key);
      const shared = cached ? undefined : pending.get(key);
      if (cached || shared) {
        hits++;
        results[index] = cached ?? share(shared as Shared, embedOptions?.signal);
      } else if (!missing.has(key)) {
        misses++;
        missing.set(key, texts[index] as string);
      }
    });

    if (missing.size > 0) {
      const missingKeys = [...missing.keys()];
      const batch = embedMissing(missingKeys, [...missing.values()], embedOptions);
      for (const key of missingKeys) {
        const vector = batch.then((found) => found.get(key) as number[]);
        // Every waiter sees the batch's rejection; this keeps Node from flagging the copies as unhandled.
        vector.catch(() => undefined);
        pending.set(key, { vector, signal: embedOptions?.signal });
      }
      try {
        const found = await batch;
        for (const [key, vector] of found) remember(key, vector);
        keys.forEach((key, index) => {
          results[index] ??= found.get(key);
        });
      } finally {
        for (const key of missingKeys) pending.delete(key);
      }
    }
    const vectors = await Promise.all(results);
    const again = texts.filter((_, index) => vectors[index] === undefined);
    if (again.length > 0) {
      // Counted as hits while they waited; the second lookup counts them again, as what it finds.
      hits -= again.length;
      const redone = await embed(again, embedOptions);
      let next = 0;
      vectors.forEach((vector, index) => {
        vectors[index] = vector ?? redone[next++];
      });
    }
    return vectors.map((vector) => [...(vector as number[])]);
  }

  return {
    id: embedder.id,
    dimension: embedder.dimension,
    ...(queryReading !== undefined ? { queryReading } : {}),
    embed,
    async close() {
      entries.clear();
      await embedder.close?.();
    },
    stats: () => ({ hits, misses, persistentHits, persistentErrors, entries: entries.size }),
    clear() {
      entries.clear();
      hits = 0;
      misses = 0;
      persistentHits = 0;
      persistentErrors = 0;
    },
  };
}

/** An embedding in progress, and the signal of the call that started it. */
interface Shared {
  vector: Promise<number[]>;
  signal: AbortSignal | undefined;
}

/**
 * The check of `maxEntries`, shared with the default embedder, which calls it
 * `cacheEntries`: `option` names it as the caller wrote it (`default embedder: cacheEntries`).
 */
export function assertCacheSize(maxEntries: unknown, option: string): asserts maxEntries is number {
  if (!Number.isInteger(maxEntries) || (maxEntries as number) < 0) {
    throw new MemloomError({ code: 'INVALID_OPTIONS', backend: 'embeddings', message: `${option} must be a whole number >= 0, got ${shown(maxEntries)}` });
  }
}

/** The check of `persistent` (the default embedder's `persistentCache`): absent, or the two methods the cache calls. */
export function assertPersistentLevel(persistent: unknown, option: string): asserts persistent is PersistentEmbeddingCache | undefined {
  if (persistent !== undefined && !isPersistentCache(persistent)) {
    throw new MemloomError({ code: 'INVALID_OPTIONS', backend: 'embeddings', message: `${option} must be an object with getMany and setMany methods, got ${shown(persistent)}` });
  }
}

function isPersistentCache(value: unknown): value is PersistentEmbeddingCache {
  const level = value as Partial<PersistentEmbeddingCache> | null;
  return typeof level === 'object' && level !== null && typeof level.getMany === 'function' && typeof level.setMany === 'function';
}

/**
 * Keys of both levels: fixed length whatever the text, so a store can index
 * them and the memory level holds no text.
 *
 * Well-formed text is hashed as UTF-8, as it always was, so existing persistent
 * caches keep their keys. UTF-8 cannot carry a lone surrogate (it becomes
 * U+FFFD), which would give 'x\uD800' and 'x\uFFFD' one key; text holding one
 * is hashed as its exact UTF-16 code units instead, after a 0xFF byte. 0xFF
 * never occurs in UTF-8, so these keys can never equal a well-formed text's.
 */
function persistentKey(key: string): string {
  const hash = createHash('sha256');
  if (hasLoneSurrogate(key)) hash.update(Buffer.from([0xff])).update(key, 'utf16le');
  else hash.update(key, 'utf8');
  return hash.digest('base64url');
}
