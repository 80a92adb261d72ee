// Memory blocks for LlamaIndex.TS's Memory
export { MemloomMemoryBlock, memloomBlock } from './memloom-block.js';
export type { MemloomBlockOptions } from './memloom-block.js';
export { WorkingMemoryBlock, workingMemoryBlock } from './working-memory-block.js';
export type { WorkingMemoryBlockOptions } from './working-memory-block.js';
export { MemoryIndexBlock, memoryIndexBlock } from './index-block.js';
export type { MemoryIndexBlockOptions } from './index-block.js';

// LlamaIndex models serving memloom
export { fromLlamaIndexLLM } from './language-model.js';
export type { FromLlamaIndexLLMOptions } from './language-model.js';
export { fromLlamaIndexEmbedding } from './embedder.js';
export type { FromLlamaIndexEmbeddingOptions } from './embedder.js';

// The flush path, for callers that record messages themselves
export { recordMessages } from './record.js';
export type { RecordOptions, RecordOutcome } from './record.js';
