import { MemloomError, type Clock, type Embedder, type Logger, type MemoryStore } from '@memloom/core';
import { defaultLayer, resolveIn, sourceOf, type ConfigLayer } from './load-config.js';
import type { EmbedderConfig, StoreConfig } from './config-schema.js';
import type { ResolvedConfig } from './create-memory.js';

/** A store setting in its object form (`sqlite:./memory.db` is `{ type: 'sqlite', path: './memory.db' }`). */
export type StoreObject = Exclude<StoreConfig, string>;
/** An embedder setting in its object form (`transformers:<model>` is `{ type: 'transformers', model }`). */
export type EmbedderObject = Exclude<EmbedderConfig, string>;

const STORE_TYPES = ['sqlite', 'markdown', 'qdrant', 'memory'] as const;

/** `sqlite:./memory.db` → `{ type: 'sqlite', path: './memory.db' }`; objects pass through. */
export function parseStoreConfig(config: StoreConfig, source: string): StoreObject {
  if (typeof config !== 'string') return config;
  const colon = config.indexOf(':');
  const type = (colon < 0 ? config : config.slice(0, colon)).trim();
  const rest = colon < 0 ? '' : config.slice(colon + 1).trim();
  switch (type) {
    case 'sqlite':
      return rest ? { type, path: rest } : { type };
    case 'markdown':
      if (!rest) throw invalidConfig(source, 'store', 'markdown needs a folder: "markdown:./memory"');
      return { type, root: rest };
    case 'qdrant':
      return rest ? { type, url: rest } : { type };
    case 'memory':
      // Text after the colon would be dropped unread, as for a named embedder.
      if (rest) throw invalidConfig(source, 'store', `"memory:" takes nothing after the colon (got "${rest}"): the store is kept in process and has no location`);
      return { type };
    default:
      throw invalidConfig(source, 'store', `unknown store "${type}" (expected one of ${STORE_TYPES.join(', ')}, e.g. "sqlite:./memory.db")`);
  }
}

/** `transformers:Xenova/all-MiniLM-L6-v2` → `{ type: 'transformers', model: … }`. */
export function parseEmbedderConfig(config: EmbedderConfig, source: string): EmbedderObject {
  if (typeof config !== 'string') return config;
  const colon = config.indexOf(':');
  const type = (colon < 0 ? config : config.slice(0, colon)).trim();
  const rest = colon < 0 ? '' : config.slice(colon + 1).trim();
  switch (type) {
    case 'default':
    case 'lexical':
    case 'use-lite':
      // Options come as an object ({ "type": "lexical", "wordDimension": 512 }): text after the colon would be dropped unread.
      if (rest) throw invalidConfig(source, 'embedder', `"${type}" takes nothing after a colon (got "${rest}"); give options as an object: { "type": "${type}", … }`);
      return { type };
    case 'transformers':
      return rest ? { type, model: rest } : { type };
    default:
      throw invalidConfig(source, 'embedder', `unknown embedder "${type}" (expected default, lexical, use-lite or transformers:<model id>)`);
  }
}

/** The store setting of a resolved configuration: its object form, and for SQLite the file it opens, for Markdown its folder. */
export type StoreSetting = Pick<ResolvedConfig, 'store' | 'sqliteFile' | 'markdownRoot' | 'defaultStore'>;

/**
 * The store `layers` name (the highest layer that names one, else SQLite at its default file), read once:
 * its object form, and for SQLite the file it opens, for Markdown its folder (see pathLayer for relative paths).
 */
export async function readStoreSetting(layers: ConfigLayer[], env: Record<string, string | undefined>, cwd: string, configFile: string | undefined): Promise<StoreSetting> {
  const { layer, source } = settingLayer(layers, 'store');
  const config = layer?.config.store ?? 'sqlite';
  const parsed = parseStoreConfig(config, source);
  const store = { config, source, parsed };
  const base = pathLayer(layers, cwd, configFile);
  if (parsed.type === 'sqlite') {
    const sqliteFile = await sqliteFileOf(base, parsed.path, env, source);
    return { store, sqliteFile, defaultStore: !layer && sqliteFile.from === 'default' };
  }
  if (parsed.type === 'markdown') return { store, markdownRoot: resolveIn(base, parsed.root), defaultStore: false };
  return { store, defaultStore: false };
}

/** The embedder `layers` name (the highest layer that names one, else the offline default), read once. */
export function readEmbedderSetting(layers: ConfigLayer[]): ResolvedConfig['embedder'] {
  const { layer, source } = settingLayer(layers, 'embedder');
  const config = layer?.config.embedder ?? 'default';
  return { config, source, parsed: parseEmbedderConfig(config, source) };
}

/**
 * Build the store the configuration asks for (`resolved.store.parsed`), importing its package only
 * when it is used. The SQLite file and the Markdown folder are the ones `resolveMemloomConfig` found.
 * A resolved configuration kept without them (they are optional: one a caller wrote, say) has its `config`
 * parsed again, and its paths read as `resolveMemloomConfig` reads them (see pathLayer).
 * `contextWeight` is the Memory's `retrieval.contextWeight`, for stores that embed by themselves (Markdown).
 * `clock` and `logger` are the Memory's, for the Markdown store (the times of hand edits and backups; the files it
 * cannot read are warned about there).
 * `mustExist` opens a SQLite file, a Markdown folder or a Qdrant collection only if it exists (MISSING_RESOURCE otherwise, nothing created).
 */
export async function createStoreFrom(
  resolved: ResolvedConfig,
  embedder: Embedder,
  env: Record<string, string | undefined>,
  { contextWeight, clock, logger, mustExist = false, cwd }: { contextWeight?: number | undefined; clock?: Clock | undefined; logger?: Logger | undefined; mustExist?: boolean; cwd: string },
): Promise<MemoryStore> {
  const { source } = resolved.store;
  const parsed = resolved.store.parsed ?? parseStoreConfig(settingOf('store', resolved.store), source);
  const { type, ...options } = parsed as StoreObject & Record<string, unknown>;
  // The layer a relative path is read in, as resolveMemloomConfig finds it.
  const base = () => pathLayer(resolved.layers, cwd, resolved.configFile);
  // The persistent stores take it over what the configuration says; memory: has nothing to find.
  const existing = mustExist ? { mustExist: true } : {};
  // Each factory validates its own options; its error is re-raised naming where they came from.
  return namingSource(source, 'store', async () => {
    switch (type) {
      case 'sqlite': {
        const sqlite = await import('@memloom/store-sqlite');
        const file = resolved.sqliteFile ?? (await sqliteFileOf(base(), options.path, env, source));
        // A path that cannot be a database file is blamed on where it came from (the store setting,
        // MEMLOOM_SQLITE_PATH or the default).
        try {
          return sqlite.createSqliteStore({ ...options, ...existing, path: file.path });
        } catch (error) {
          // Only an error about the path itself (it names it in its details) comes from there; any other option
          // error is the store setting's, named by the layer below.
          const aboutPath = MemloomError.hasCode(error, 'INVALID_OPTIONS') && typeof (error.details as { path?: unknown } | undefined)?.path === 'string';
          if (!aboutPath) throw error;
          return namingSource(file.source, 'store', () => Promise.reject(error));
        }
      }
      case 'markdown': {
        const markdown = await importOptional(() => import('@memloom/store-markdown'), '@memloom/store-markdown', source);
        // The store re-embeds hand-edited blocks and rebuilds its index: with the Memory's context weight, unless the store config sets one.
        // It dates hand edits and backups by the Memory's clock, and warns the Memory's logger of the files it cannot read.
        const memoryParts = { ...(contextWeight === undefined ? {} : { contextWeight }), ...(clock ? { clock } : {}), ...(logger ? { logger } : {}) };
        const root = resolved.markdownRoot ?? resolveIn(base(), options.root as string);
        return markdown.createMarkdownStore({ ...memoryParts, ...options, ...existing, root, embedder });
      }
      case 'qdrant': {
        const qdrant = await importOptional(() => import('@memloom/store-qdrant'), '@memloom/store-qdrant', source);
        // The Qdrant variables (QDRANT_URL, QDRANT_API_KEY, MEMLOOM_QDRANT_*) fill in what the configuration leaves out;
        // a stale one for a field it sets is neither read nor checked.
        const fromEnv = qdrant.qdrantOptionsFromEnv({ ...env, MEMLOOM_STORE: 'qdrant' }, options as Parameters<typeof qdrant.createQdrantStore>[0]) ?? {};
        // Errors about the server (not reached, no such collection) say where its URL came from (a given client has its own).
        const urlSource = options.url !== undefined ? source : fromEnv.url !== undefined ? 'environment variable QDRANT_URL' : 'the default (no url in the store setting, no QDRANT_URL)';
        return qdrant.createQdrantStore({ urlSource, ...fromEnv, ...options, ...existing });
      }
      case 'memory': {
        const { createInMemoryStore } = await import('@memloom/core/testing');
        return createInMemoryStore();
      }
    }
  });
}

/** The file a SQLite store opens, and where its path came from. */
export interface SqliteFile {
  /** Absolute, or `:memory:`. */
  path: string;
  /** `configuration` (the store's own `path`), `environment` (MEMLOOM_SQLITE_PATH) or `default` (.memloom/memory.db). */
  from: 'configuration' | 'environment' | 'default';
  /** Where the path came from, for error messages. */
  source: string;
}

/**
 * The one rule for a SQLite store's file: the `path` its setting gives, else MEMLOOM_SQLITE_PATH, else
 * `.memloom/memory.db`; a relative one in the folder of `layer` (see pathLayer: the layer that names the store,
 * else the configuration file's folder, else the working directory). `storeSource` names the setting that
 * chose SQLite ('default' when none did), for the source of the default path.
 */
export async function sqliteFileOf(layer: ConfigLayer, path: unknown, env: Record<string, string | undefined>, storeSource: string): Promise<SqliteFile> {
  if (typeof path === 'string') return { path: resolveIn(layer, path), from: 'configuration', source: sourceOf(layer, 'store') };
  const { DEFAULT_SQLITE_PATH, SQLITE_PATH_ENV } = await import('@memloom/store-sqlite');
  const fromEnv = env[SQLITE_PATH_ENV]?.trim();
  if (fromEnv) {
    const source = `environment variable ${SQLITE_PATH_ENV}`;
    return { path: resolveIn(layer, fromEnv, source), from: 'environment', source };
  }
  const chosen = storeSource === 'default' ? 'nothing configured' : `for the SQLite store set in ${storeSource}`;
  return { path: resolveIn(layer, DEFAULT_SQLITE_PATH), from: 'default', source: `the default store path (${DEFAULT_SQLITE_PATH}, ${chosen})` };
}

/** Build the embedder the configuration asks for (`resolved.embedder.parsed`, else its `config` read again). */
export async function createEmbedderFrom(setting: ResolvedConfig['embedder']): Promise<Embedder> {
  const { source } = setting;
  const parsed = setting.parsed ?? parseEmbedderConfig(settingOf('embedder', setting), source);
  const { type, ...options } = parsed as EmbedderObject & Record<string, unknown>;
  return namingSource(source, 'embedder', async () => {
    const embeddings = await import('@memloom/embeddings');
    switch (type) {
      case 'default':
        return embeddings.createDefaultEmbedder(options as Parameters<typeof embeddings.createDefaultEmbedder>[0]);
      case 'lexical':
        return embeddings.createLexicalEmbedder(options as Parameters<typeof embeddings.createLexicalEmbedder>[0]);
      case 'use-lite':
        return namingSourceOnUse(source, embeddings.createUseLiteEmbedder(options as Parameters<typeof embeddings.createUseLiteEmbedder>[0]));
      case 'transformers':
        return embeddings.createTransformersEmbedder(options as Parameters<typeof embeddings.createTransformersEmbedder>[0]);
    }
  });
}

/** The highest layer that sets `field`, and the source named for it (`default` when none does). */
function settingLayer(layers: ConfigLayer[], field: 'store' | 'embedder'): { layer: ConfigLayer | undefined; source: string } {
  const layer = layers.find((candidate) => candidate.config[field] !== undefined);
  return { layer, source: layer ? sourceOf(layer, field) : 'default' };
}

/**
 * The layer a relative SQLite or Markdown path is read in (a store's own path, MEMLOOM_SQLITE_PATH, the default
 * file): the one that names the store (a file's folder; the working directory for the options and MEMLOOM_STORE),
 * else the defaults, whose folder is the configuration file's when one was found, else the working directory.
 */
function pathLayer(layers: ConfigLayer[], cwd: string, configFile: string | undefined): ConfigLayer {
  return settingLayer(layers, 'store').layer ?? defaultLayer(cwd, configFile);
}

/**
 * The setting of a resolved configuration kept without its object form, to be read again. One resolved for a
 * store or embedder object (`object (<name>)`) has none to read: that object has to be given again.
 */
function settingOf<T>(field: 'store' | 'embedder', { config, source }: { config: T; source: string }): T {
  if (source === 'options' && typeof config === 'string' && config.startsWith('object (')) {
    throw new MemloomError({
      code: 'INVALID_OPTIONS',
      backend: 'config',
      message: `createMemory was given a configuration resolved for ${field === 'store' ? 'a store' : 'an embedder'} object (${config}), and no ${field} object: give it in the options again, or resolve the configuration of these options`,
      details: { field },
    });
  }
  return config;
}

/**
 * Run a factory; its INVALID_OPTIONS becomes INVALID_CONFIG naming the field and the source, and a
 * MISSING_RESOURCE (a model's files, a package) says which setting asked for it.
 */
async function namingSource<T>(source: string, field: string, create: () => Promise<T>): Promise<T> {
  try {
    return await create();
  } catch (error) {
    if (!MemloomError.hasCode(error, 'INVALID_OPTIONS')) throw missingNamingSource(error, source, field);
    throw new MemloomError({
      code: 'INVALID_CONFIG',
      backend: 'config',
      message: `invalid configuration in ${source}: ${field}: ${error.message.replace(/^\[memloom\] (\[[^\]]*\] )?/, '')}`,
      cause: error,
      details: { source, field },
    });
  }
}

/** A MISSING_RESOURCE that does not say yet which setting asked for what is missing, saying it; other errors as they are. */
function missingNamingSource(error: unknown, source: string, field: string): unknown {
  if (!MemloomError.hasCode(error, 'MISSING_RESOURCE') || error.details.source !== undefined) return error;
  return new MemloomError({
    code: error.code,
    backend: error.backend,
    message: `${error.reason} (the ${field} set in ${source})`,
    cause: error,
    details: { ...error.details, source, field },
  });
}

/**
 * USE-lite loads its packages at its first `embed`, after createMemory has returned: a missing one is named
 * with the setting there, as namingSource names it for the embedders that load when they are made.
 */
function namingSourceOnUse(source: string, embedder: Embedder): Embedder {
  return {
    ...embedder,
    embed: (texts, options) => embedder.embed(texts, options).catch((error: unknown) => Promise.reject(missingNamingSource(error, source, 'embedder'))),
  };
}

export async function importOptional<T>(load: () => Promise<T>, name: string, source: string): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const code = (error as { code?: string }).code;
    if ((code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && String((error as Error).message).includes(name)) {
      throw new MemloomError({
        code: 'MISSING_RESOURCE',
        backend: 'config',
        message: `${source} asks for a store from ${name}, which is not installed: run "npm install ${name}"`,
        cause: error,
        details: { package: name, source },
      });
    }
    throw error;
  }
}

function invalidConfig(source: string, field: string, message: string): MemloomError {
  return new MemloomError({ code: 'INVALID_CONFIG', backend: 'config', message: `invalid configuration in ${source}: ${field}: ${message}`, details: { source, field } });
}
