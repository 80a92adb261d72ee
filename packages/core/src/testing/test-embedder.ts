import type { Embedder, EmbedOptions } from '../contracts.js';
import { tokenize } from '../text/tokenize.js';
import { normalizeVector } from '../vector.js';

export interface TestEmbedderOptions {
  /** @default 64 */
  dimension?: number;
  /** Exact vectors for chosen texts (normalized on output), to make similarities what a test needs. */
  vectors?: Record<string, readonly number[]>;
  /** @default 'memloom/test-embedder' */
  id?: string;
}

export interface TestEmbedder extends Embedder {
  /** Every text embedded so far, in order. */
  readonly calls: string[][];
  /** Set (or replace) the vector for a text. */
  setVector(text: string, vector: readonly number[]): void;
}

/**
 * A deterministic embedder for tests: chosen texts get chosen vectors, any
 * other text a hashed bag of its tokens (so shared words mean similarity).
 */
export function createTestEmbedder(options: TestEmbedderOptions = {}): TestEmbedder {
  const dimension = options.dimension ?? 64;
  const chosen = new Map<string, number[]>();
  for (const [text, vector] of Object.entries(options.vectors ?? {})) chosen.set(text, checked(vector, dimension));
  const calls: string[][] = [];
  return {
    id: options.id ?? 'memloom/test-embedder',
    dimension,
    calls,
    setVector(text, vector) {
      chosen.set(text, checked(vector, dimension));
    },
    async embed(texts: readonly string[], _options?: EmbedOptions): Promise<number[][]> {
      calls.push([...texts]);
      return texts.map((text) => chosen.get(text) ?? hashedVector(text, dimension));
    },
  };
}

/**
 * Unit vector with cosine `similarity` to the unit vector on `axis`, lying in
 * the plane of `axis` and `other`. Handy for chosen similarities.
 */
export function vectorWithSimilarity(dimension: number, axis: number, other: number, similarity: number): number[] {
  const vector = new Array<number>(dimension).fill(0);
  vector[axis] = similarity;
  vector[other] = Math.sqrt(Math.max(0, 1 - similarity * similarity));
  return vector;
}

/** The unit vector along one axis. */
export function axisVector(dimension: number, axis: number): number[] {
  const vector = new Array<number>(dimension).fill(0);
  vector[axis] = 1;
  return vector;
}

function hashedVector(text: string, dimension: number): number[] {
  const vector = new Array<number>(dimension).fill(0);
  const tokens = tokenize(text);
  for (const token of tokens.length > 0 ? tokens : [text]) {
    const hash = fnv1a(token);
    const index = hash % dimension;
    vector[index] = (vector[index] as number) + ((hash >>> 16) & 1 ? 1 : -1);
  }
  const normalized = normalizeVector(vector);
  if (!normalized.some((value) => value !== 0)) normalized[0] = 1;
  return normalized;
}

function checked(vector: readonly number[], dimension: number): number[] {
  if (vector.length !== dimension) throw new Error(`test vector has dimension ${vector.length}, expected ${dimension}`);
  return normalizeVector(vector);
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}
