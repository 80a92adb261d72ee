// LlamaIndex models serving memloom
export { fromLlamaIndexLLM } from './language-model.js';
export type { FromLlamaIndexLLMOptions } from './language-model.js';
export { fromLlamaIndexEmbedding } from './embedder.js';
export type { FromLlamaIndexEmbeddingOptions } from './embedder.js';
