import type { Embedder } from './contracts.js';
import { describeValue, MemloomError, toMemloomError } from './errors.js';
import { excerpt } from './well-formed.js';

/** Cosine similarity in -1..1; 0 when either vector is all zeros. */
export function cosineSimilarity(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  const length = Math.min(a.length, b.length);
  for (let index = 0; index < length; index++) {
    const x = a[index] as number;
    const y = b[index] as number;
    dot += x * y;
    normA += x * x;
    normB += y * y;
  }
  if (normA === 0 || normB === 0) return 0;
  return Math.max(-1, Math.min(1, dot / Math.sqrt(normA * normB)));
}

/** Scale to unit length; a zero vector stays zero. */
export function normalizeVector(vector: readonly number[]): number[] {
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm);
  if (norm === 0) return [...vector];
  return vector.map((value) => value / norm);
}

/**
 * Whether `value` is held the way a vector may be: an array, a Float32Array or a Float64Array
 * (what embedders give; a Float32Array from a user's embedder is common). Another typed array (bytes,
 * quantized integers) or a DataView is not: the one rule for every vector core takes in, from an
 * embedder (`assertValidVector`), an export file or a store's caller (`assertUsableVector`). Known
 * by what they are, not by `instanceof`: an array made in another realm (a `vm` context, a native
 * addon) is one too.
 */
export function isVectorArray(value: unknown): value is ArrayLike<unknown> {
  return Array.isArray(value) || (ArrayBuffer.isView(value) && FLOAT_ARRAY_TAGS.has(Object.prototype.toString.call(value)));
}

const FLOAT_ARRAY_TAGS = new Set(['[object Float32Array]', '[object Float64Array]']);

/** The index of the first value in `values` that is not a finite number (NaN, Infinity, a string); -1 when there is none. */
export function nonFiniteIndex(values: ArrayLike<unknown>): number {
  for (let index = 0; index < values.length; index++) {
    const value = values[index];
    if (typeof value !== 'number' || !Number.isFinite(value)) return index;
  }
  return -1;
}

/**
 * Check a vector before it is stored: an array of finite numbers (`isVectorArray`) of the right
 * dimension. Throws INVALID_EMBEDDING naming who produced it.
 */
export function assertValidVector(vector: unknown, dimension: number, producer: string, backend = 'core'): asserts vector is ArrayLike<number> {
  if (!isVectorArray(vector)) {
    throw new MemloomError({
      code: 'INVALID_EMBEDDING',
      backend,
      message: `${producer} returned ${describeVector(vector)} where a vector of ${dimension} numbers (an array, a Float32Array or a Float64Array) was expected`,
    });
  }
  if (vector.length !== dimension) {
    throw new MemloomError({
      code: 'INVALID_EMBEDDING',
      backend,
      message: `${producer} returned a vector of dimension ${vector.length}; expected ${dimension}`,
      details: { expected: dimension, actual: vector.length },
    });
  }
  const index = nonFiniteIndex(vector);
  if (index >= 0) {
    throw new MemloomError({
      code: 'INVALID_EMBEDDING',
      backend,
      message: `${producer} returned a vector with a non-finite value (${describeValue(vector[index])}) at index ${index}`,
      details: { index },
    });
  }
}

/**
 * Embed texts and check what came back at the edge: a thrown error becomes
 * EMBEDDER_ERROR, a wrong count or an unusable vector INVALID_EMBEDDING
 * (wrong dimension, NaN, all zeros). Returns plain arrays, one per text, in order.
 * `signal` goes to the embedder (`EmbedOptions.signal`); aborted before the
 * call, or while the embedder fails, its reason is thrown instead.
 */
export async function embedChecked(
  embedder: Embedder,
  texts: string[],
  purpose: 'document' | 'query',
  signal?: AbortSignal,
  /** Texts whose vector may be zeros: contexts, which are only blended in (a zero one moves nothing). */
  mayBeZero: (index: number) => boolean = () => false,
): Promise<number[][]> {
  signal?.throwIfAborted();
  let vectors: unknown;
  try {
    vectors = await embedder.embed(texts, signal ? { purpose, signal } : { purpose });
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    throw toMemloomError(error, { code: 'EMBEDDER_ERROR', backend: 'embeddings', message: `embedder ${embedder.id} failed` });
  }
  if (!Array.isArray(vectors) || vectors.length !== texts.length) {
    throw new MemloomError({
      code: 'INVALID_EMBEDDING',
      message: `embedder ${embedder.id} returned ${Array.isArray(vectors) ? vectors.length : 'no'} vectors for ${texts.length} text${texts.length === 1 ? '' : 's'}`,
    });
  }
  return vectors.map((vector: unknown, index) => {
    assertValidVector(vector, embedder.dimension, `embedder ${embedder.id}`);
    if (!mayBeZero(index) && isZeroVector(vector)) {
      const text = texts[index] as string;
      throw new MemloomError({
        code: 'INVALID_EMBEDDING',
        message: `embedder ${embedder.id} returned a vector of zeros for ${JSON.stringify(excerpt(text))}: it has no direction to compare`,
        // One text's answer, not a broken embedder: a caller embedding many may leave this one out and go on.
        details: { zeros: true },
      });
    }
    return Array.from(vector);
  });
}

/** Every value 0: a vector with no direction to compare (stores' searches refuse it, SQLite will not store it). */
export function isZeroVector(values: ArrayLike<number>): boolean {
  for (let index = 0; index < values.length; index++) if (values[index] !== 0) return false;
  return true;
}

/** normalize(a + weight·b), for unit vectors a and b; `a` itself when the sum vanishes. */
export function blendVectors(a: readonly number[], b: readonly number[], weight: number): number[] {
  if (weight === 0 || a.length !== b.length) return [...a];
  const sum = a.map((value, index) => value + weight * (b[index] as number));
  let norm = 0;
  for (const value of sum) norm += value * value;
  if (!(norm > 1e-12)) return [...a];
  const scale = 1 / Math.sqrt(norm);
  return sum.map((value) => value * scale);
}

/**
 * Each memory's content vector and, when it has a context that moves the
 * vector (`contextWeight` > 0), its context's: contents and contexts in one
 * embedder call. A context's vector may be zeros (it is only blended in).
 * `signal` goes to the embedder, as in `embedChecked`.
 */
export async function contentAndContextVectors(
  embedder: Embedder,
  memories: readonly { content: string; context?: string | undefined }[],
  contextWeight: number,
  signal?: AbortSignal,
): Promise<[content: number[], context?: number[]][]> {
  const texts = memories.map((memory) => memory.content);
  const contextAt = new Map<number, number>();
  if (contextWeight > 0) {
    memories.forEach((memory, index) => {
      if (memory.context) contextAt.set(index, texts.push(memory.context) - 1);
    });
  }
  if (texts.length === 0) return [];
  // The contexts come after the contents.
  const vectors = await embedChecked(embedder, texts, 'document', signal, (index) => index >= memories.length);
  return memories.map((_, index) => {
    const at = contextAt.get(index);
    const content = vectors[index] as number[];
    return at === undefined ? [content] : [content, vectors[at] as number[]];
  });
}

/**
 * The vectors a store keeps for memories: each content's vector, moved toward
 * its context's when the memory has one (`normalize(v(content) +
 * contextWeight · v(context))`, `retrieval.contextWeight`). Contents and
 * contexts are embedded in one call. Used wherever a memory is embedded
 * (add, update, restore, re-index), so its context's pull is never lost.
 * `signal` goes to the embedder, as in `embedChecked`.
 */
export async function documentVectors(
  embedder: Embedder,
  memories: readonly { content: string; context?: string | undefined }[],
  contextWeight: number,
  signal?: AbortSignal,
): Promise<number[][]> {
  const pairs = await contentAndContextVectors(embedder, memories, contextWeight, signal);
  return pairs.map(([content, context]) => (context ? blendVectors(content, context, contextWeight) : content));
}

/** What was given instead of a vector: `Uint8Array data`, `DataView data`, `an object`, `"text"`. */
function describeVector(value: unknown): string {
  return ArrayBuffer.isView(value) ? `${value.constructor.name} data` : describeValue(value);
}
