// The umbrella: createMemory() with defaults and configuration-driven backends.
export { createMemory, resolveMemloomConfig } from './create-memory.js';
export type { MemloomOptions, ResolvedConfig } from './create-memory.js';
export { memloomConfigSchema, storeConfigSchema, embedderConfigSchema, defineConfig } from './config-schema.js';
export type { MemloomConfig, StoreConfig, EmbedderConfig } from './config-schema.js';
export { CONFIG_FILE_NAMES, findConfigFile, loadConfigFile, configFromEnv, validateConfig } from './load-config.js';
export type { ConfigLayer } from './load-config.js';
export { parseStoreConfig, parseEmbedderConfig } from './backends.js';
export type { EmbedderObject, SqliteFile, StoreObject } from './backends.js';

// The core API users reach for first (everything else: import from '@memloom/core').
export {
  MemloomError,
  createMemoryPipeline,
  copyMemories,
  reindex,
  renderContextBlock,
  WorkingMemoryTracker,
  DEFAULT_POLICY,
  resolvePolicy,
  MEMORY_LEVELS,
  MEMORY_CATEGORIES,
  MEMORY_TYPES,
  MEMORY_SOURCES,
} from '@memloom/core';
export type {
  Memory,
  MemoryRecord,
  MemoryVersion,
  MemoryFilter,
  MemoryStore,
  Embedder,
  LanguageModel,
  Scope,
  AddOptions,
  AddResult,
  AddTurn,
  AddTurnsOptions,
  SearchOptions,
  SearchResult,
  UpdateDecision,
  MaintenanceReport,
  MemoryPipeline,
  Policy,
  MemloomErrorCode,
} from '@memloom/core';
