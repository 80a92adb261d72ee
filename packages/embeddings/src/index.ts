// The offline default
export { createDefaultEmbedder, createOfflineEmbedder } from './default-embedder.js';
export type { DefaultEmbedderOptions, OfflineEmbedderOptions } from './default-embedder.js';

// Embedders
export { createWordVectorEmbedder, wordVectorOf, WORD_VECTOR_EMBEDDER_ID } from './word-vector-embedder.js';
export { createUseLiteEmbedder } from './use-lite-embedder.js';
export type { UseLiteEmbedderOptions } from './use-lite-embedder.js';
export { createLexicalEmbedder, lexicalVector, resolveLexicalSettings } from './lexical-embedder.js';
export type { LexicalEmbedderOptions, LexicalEmbedderSettings } from './lexical-embedder.js';
export { createTransformersEmbedder, DEFAULT_TRANSFORMERS_MODEL } from './transformers-embedder.js';
export type { TransformersEmbedderOptions, TransformersEmbedder, TransformersRuntime, TransformersDtype } from './transformers-embedder.js';

// Combinators
export { createScriptRoutedEmbedder, cjkShare } from './script-routed-embedder.js';
export type { ScriptRoutedEmbedderOptions } from './script-routed-embedder.js';
export { createCompositeEmbedder } from './composite-embedder.js';
export type { CompositePart } from './composite-embedder.js';
export { createCachedEmbedder } from './cached-embedder.js';
export type { CachedEmbedder, CachedEmbedderOptions, PersistentEmbeddingCache } from './cached-embedder.js';
