import type { BaseEmbedding } from '@llamaindex/core/embeddings';
import { describeValue, MemloomError, normalizeVector, type EmbedOptions, type Embedder } from '@memloom/core';

export interface FromLlamaIndexEmbeddingOptions {
  /**
   * Names the vector space. A store remembers which embedder filled it and
   * refuses another, so give the model and its settings, e.g.
   * `openai:text-embedding-3-small`. @default `llamaindex:<class name>[:<model>]`
   */
  id?: string;
  /** Length of every vector. @default `embedding.embedInfo.dimensions` (required when that is not set) */
  dimension?: number;
}

/**
 * Use a LlamaIndex `BaseEmbedding` as memloom's `Embedder`. Documents go
 * through `getTextEmbeddingsBatch` (the model's own batching), queries through
 * `getQueryEmbedding`, so models that embed queries differently keep doing so.
 * Vectors are scaled to unit length, as memloom's embedders give them;
 * memloom checks every vector (length, finite numbers) before it is stored.
 */
export function fromLlamaIndexEmbedding(embedding: BaseEmbedding, options: FromLlamaIndexEmbeddingOptions = {}): Embedder {
  // A BaseEmbedding is a callable TransformComponent (a function at runtime), so check methods, not typeof.
  const candidate = embedding as Partial<BaseEmbedding> | null | undefined;
  if (!candidate || typeof candidate.getTextEmbeddingsBatch !== 'function' || typeof candidate.getQueryEmbedding !== 'function') {
    throw invalid('fromLlamaIndexEmbedding needs a LlamaIndex BaseEmbedding (getTextEmbeddingsBatch and getQueryEmbedding)');
  }
  const dimension = options.dimension ?? embedding.embedInfo?.dimensions;
  if (dimension === undefined) {
    throw invalid('fromLlamaIndexEmbedding: the embedding does not state its dimensions (embedInfo.dimensions); pass { dimension }');
  }
  if (!Number.isInteger(dimension) || dimension <= 0) {
    throw invalid(`fromLlamaIndexEmbedding: dimension must be a positive integer, got ${describeValue(dimension)}`);
  }
  if (options.id !== undefined && (typeof options.id !== 'string' || options.id.trim() === '')) {
    throw invalid('fromLlamaIndexEmbedding: id must be a non-empty string');
  }
  const id = options.id ?? defaultId(embedding);
  return {
    id,
    dimension,
    async embed(texts: readonly string[], embedOptions: EmbedOptions = {}): Promise<number[][]> {
      if (texts.length === 0) return [];
      const vectors =
        embedOptions.purpose === 'query'
          ? await Promise.all(texts.map((text) => embedding.getQueryEmbedding({ type: 'text', text })))
          : await embedding.getTextEmbeddingsBatch([...texts]);
      if (!Array.isArray(vectors) || vectors.length !== texts.length) {
        throw new MemloomError({
          code: 'INVALID_EMBEDDING',
          backend: 'llamaindex',
          message: `${id} returned ${Array.isArray(vectors) ? vectors.length : 'no'} vectors for ${texts.length} texts`,
        });
      }
      return vectors.map((vector, index) => {
        if (!Array.isArray(vector)) {
          throw new MemloomError({ code: 'INVALID_EMBEDDING', backend: 'llamaindex', message: `${id} returned no vector for text ${index}` });
        }
        // memloom's embedders give unit vectors: a search scores by cosine, and a memory's context is blended in by weight.
        return normalizeVector(vector);
      });
    },
  };
}

function defaultId(embedding: BaseEmbedding): string {
  const model = (embedding as unknown as { model?: unknown }).model;
  const name = embedding.constructor?.name ?? 'embedding';
  return typeof model === 'string' && model !== '' ? `llamaindex:${name}:${model}` : `llamaindex:${name}`;
}

function invalid(message: string): MemloomError {
  return new MemloomError({ code: 'INVALID_OPTIONS', backend: 'llamaindex', message });
}
