// The umbrella: createMemory() with defaults and configuration-driven backends.
export { createMemory, resolveMemloomConfig } from './create-memory.js';
export type { MemloomOptions, ResolvedConfig } from './create-memory.js';
export { memloomConfigSchema, storeConfigSchema, embedderConfigSchema, defineConfig } from './config-schema.js';
export type { MemloomConfig, StoreConfig, EmbedderConfig } from './config-schema.js';
export { CONFIG_FILE_NAMES, findConfigFile, loadConfigFile, configFromEnv, validateConfig } from './load-config.js';
export type { ConfigLayer } from './load-config.js';
export { parseStoreConfig, parseEmbedderConfig } from './backends.js';
export type { EmbedderObject, SqliteFile, StoreObject } from './backends.js';

// Everything else of the core API, values and types. The explicit `createMemory` above takes the
// place of core's (an explicit export wins over `export *`): core's facade factory, which needs a
// store and an embedder, stays in '@memloom/core'. test/reexports.test.ts checks that nothing is missing.
export * from '@memloom/core';
