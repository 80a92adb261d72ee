export { createQdrantStore } from './qdrant-store.js';
export type { QdrantStoreOptions, QdrantProgress, QdrantRetryOptions, QdrantTextSearchOptions, ReadConsistency, WriteOrdering } from './options.js';
export type { QdrantClientLike } from './client.js';
export { qdrantOptionsFromEnv } from './env.js';
