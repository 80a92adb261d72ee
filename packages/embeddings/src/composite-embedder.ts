import { describeValue, MemloomError, type Embedder, type EmbedOptions } from '@memloom/core';
import { assertCombinedId, combinedQueryReading, placePart } from './combined-parts.js';
import { assertKnownOptions } from './known-options.js';
import { assertTexts } from './lexical-embedder.js';

export interface CompositePart {
  embedder: Embedder;
  /** Share of the cosine similarity this part contributes (any positive number; shares are relative). */
  weight: number;
}

/**
 * Concatenate the unit vectors of several embedders, each scaled by the
 * square root of its share, so that the cosine of two composite vectors is
 * exactly the weighted mean of the parts' cosines:
 * `cos = Σ wᵢ·cosᵢ / Σ wᵢ`. The result has unit length whenever every part
 * returns unit vectors (the parts are normalized here to make sure).
 */
export function createCompositeEmbedder(parts: readonly CompositePart[], options: { id?: string } = {}): Embedder {
  if (!Array.isArray(parts) || parts.length === 0) {
    throw invalid('needs at least one part');
  }
  if (options === null || typeof options !== 'object') throw invalid(`options must be an object, got ${describeValue(options)}`);
  assertKnownOptions(options, { id: true }, 'createCompositeEmbedder');
  assertCombinedId(options.id, 'composite embedder');
  for (const [index, part] of parts.entries()) {
    // Keys first, so a misspelt `embedder` or `weight` is named rather than reported missing.
    if (part !== null && typeof part === 'object') {
      assertKnownOptions(part, { embedder: true, weight: true } satisfies Record<keyof CompositePart, true>, 'createCompositeEmbedder', `parts[${index}].`);
    }
    if (!part?.embedder || typeof part.embedder.embed !== 'function') throw invalid(`part ${index} has no embedder`);
    if (typeof part.weight !== 'number' || !(part.weight > 0) || !Number.isFinite(part.weight)) {
      throw invalid(`part ${index} (${part.embedder.id}) needs a positive weight, got ${describeValue(part.weight)}`);
    }
  }
  const total = parts.reduce((sum, part) => sum + part.weight, 0);
  const scales = parts.map((part) => Math.sqrt(part.weight / total));
  const dimension = parts.reduce((sum, part) => sum + part.embedder.dimension, 0);
  const id = options.id ?? `composite(${parts.map((part) => `${part.embedder.id}*${part.weight}`).join('+')})`;
  const queryReading = combinedQueryReading(parts.map((part) => part.embedder));

  return {
    id,
    dimension,
    ...(queryReading !== undefined ? { queryReading } : {}),
    async embed(texts: readonly string[], embedOptions?: EmbedOptions): Promise<number[][]> {
      assertTexts(texts, id);
      if (texts.length === 0) return [];
      const outputs = await Promise.all(parts.map((part) => part.embedder.embed(texts, embedOptions)));
      return texts.map((_, row) => {
        const vector = new Array<number>(dimension).fill(0);
        let offset = 0;
        outputs.forEach((output, index) => {
          const part = parts[index] as CompositePart;
          placePart(vector, offset, output[row], part.embedder, scales[index] as number);
          offset += part.embedder.dimension;
        });
        return vector;
      });
    },
    async close() {
      await Promise.all(parts.map((part) => part.embedder.close?.()));
    },
  };
}

function invalid(message: string): MemloomError {
  return new MemloomError({ code: 'INVALID_OPTIONS', backend: 'embeddings', message: `composite embedder: ${message}` });
}
