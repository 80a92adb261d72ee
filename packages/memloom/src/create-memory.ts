import { resolve } from 'node:path';
import {
  createMemory as createCoreMemory,
  type CreateMemoryOptions,
  describeValue,
  type Embedder,
  type Logger,
  MemloomError,
  type Memory,
  type MemoryStore,
  type Policy,
  resolvePolicy,
} from '@memloom/core';
import { createEmbedderFrom, createStoreFrom, readEmbedderSetting, readStoreSetting, type EmbedderObject, type SqliteFile, type StoreObject, type StoreSetting } from './backends.js';
import type { EmbedderConfig, MemloomConfig, StoreConfig } from './config-schema.js';
import { configFromEnv, findConfigFile, loadConfigFile, sourceOf, validateConfig, type ConfigLayer } from './load-config.js';

/** Options of the umbrella `createMemory`: core's options with everything optional. */
export interface MemloomOptions extends Partial<Omit<CreateMemoryOptions, 'store' | 'embedder'>> {
  /** A store object, or its configuration (`'sqlite:./memory.db'`, `{ type: 'qdrant', url }`, …). @default the SQLite store at `.memloom/memory.db` */
  store?: MemoryStore | StoreConfig;
  /** An embedder object, or its configuration (`'default'`, `'transformers:<model>'`, …). @default the offline default embedder */
  embedder?: Embedder | EmbedderConfig;
  /** Seed 001 policy values, over those of the configuration file and MEMLOOM_POLICY. */
  policy?: MemloomConfig['policy'];
  /** Where to look for memloom.config.* (and its parents), and the folder a relative path given here or in MEMLOOM_STORE is read in. @default process.cwd() */
  cwd?: string;
  /** A configuration file to use (a relative path is read from `cwd`), or false to read none. @default the nearest memloom.config.* from `cwd` */
  configFile?: string | false;
  /** Environment to read MEMLOOM_* from, or false to ignore it. @default process.env */
  env?: Record<string, string | undefined> | false;
  /**
   * Open the configured (or default) store only if it exists already: a missing SQLite file or
   * Markdown folder is MISSING_RESOURCE naming the path (`details: { path, mustExist: true }`), a
   * missing Qdrant collection MISSING_RESOURCE naming it and the URL (`details: { collection, url,
   * mustExist: true }`), and nothing is created. For tools that only read, so that a mistyped path
   * or collection leaves no empty store behind (the CLI's read commands). No effect on `memory:` or
   * a store object.
   * @default false (a missing file, folder or collection is created)
   */
  mustExist?: boolean;
  /**
   * What to call the fields given here in error messages and in `resolveMemloomConfig()`'s sources,
   * instead of `options`: a command line passes its flags (`{ store: '--store', embedder: '--embedder' }`),
   * so that `--store bogus:x` is said to be wrong in `--store`.
   * @default each field is named `options`
   */
  optionSources?: Partial<Record<keyof MemloomConfig, string>>;
}

/** What the configuration resolved to, and where each part came from. */
export interface ResolvedConfig {
  /** Highest precedence first: options, configuration file, environment. */
  layers: ConfigLayer[];
  /** The configuration file read, when one was found (its folder holds the default store). */
  configFile?: string;
  /**
   * The store setting and where it came from; `parsed` is its object form, read once here and built by
   * `createMemory` as it is (absent for a store object, whose `config` is `object (<name>)`; when absent
   * otherwise, `createMemory` reads `config` again, and finds `sqliteFile` or `markdownRoot` if absent too).
   */
  store: { config: StoreConfig; source: string; parsed?: StoreObject };
  /** For a SQLite store built from configuration (not a store object): the file it opens, and where its path came from. */
  sqliteFile?: SqliteFile;
  /** For a Markdown store: its folder, absolute (a relative `root` is read from the folder of the file or layer that names it). */
  markdownRoot?: string;
  /** Nothing names the store (no option, configuration file, MEMLOOM_STORE or MEMLOOM_SQLITE_PATH): the SQLite file at `.memloom/memory.db`. */
  defaultStore: boolean;
  /** The embedder setting and where it came from; `parsed` as for the store (absent for an embedder object). */
  embedder: { config: EmbedderConfig; source: string; parsed?: EmbedderObject };
  policy: Policy;
  /** The merged engine configuration (strategy, decay, freshness, retrieval, limits, scope…). */
  engine: Omit<MemloomConfig, 'store' | 'embedder' | 'policy'>;
}

/**
 * The logger a store built here warns when `createMemory` is given none: a Markdown file it cannot read (its
 * memories are missing from every read until it is fixed) is said on stderr, each warning once per memory (the
 * store says it again at every look that finds the file; a long-running agent would print it per request).
 */
function stderrWarnings(): Logger {
  const said = new Set<string>();
  return {
    warn: (message) => {
      if (said.has(message)) return;
      said.add(message);
      console.warn(message);
    },
  };
}

const ENGINE_KEYS = ['strategy', 'decay', 'freshness', 'retrieval', 'limits', 'defaults', 'modelTimeoutMs', 'trackAccess', 'scope'] as const;
/** Objects passed on to core's createMemory as they are. */
const INSTANCE_KEYS = ['languageModel', 'clock', 'generateId', 'prompts', 'logger'] as const;
/** Every option `createMemory` knows: a misspelt one (`stratgy`) would otherwise be dropped without a word. */
const OPTION_KEYS: ReadonlySet<string> = new Set([
  ...ENGINE_KEYS,
  ...['store', 'embedder', 'policy'],
  ...INSTANCE_KEYS,
  ...['cwd', 'configFile', 'env', 'mustExist', 'optionSources'],
]);

/**
 * Create a Memory from options, else the nearest `memloom.config.json`
 * (or `.mjs`/`.js`/`.ts`), else `MEMLOOM_*` environment variables, else the
 * embedded default: SQLite at `.memloom/memory.db` and the offline embedder.
 * The same application code runs on SQLite, Markdown or Qdrant by changing
 * configuration alone.
 *
 * `resolved` is what `resolveMemloomConfig(options)` returned for these same options, when the
 * caller has it already (to show it, as the CLI does): the configuration is then not read again (a
 * `memloom.config.ts` is not compiled twice). `mustExist` may differ, and a store object given here
 * is used whatever `resolved` says.
 */
export async function createMemory(options: MemloomOptions = {}, resolved?: ResolvedConfig): Promise<Memory> {
  assertOptions(options);
  resolved ??= await resolveLayers(options);
  const embedder = isEmbedder(options.embedder) ? options.embedder : await createEmbedderFrom(resolved.embedder);
  const contextWeight = resolved.engine.retrieval?.contextWeight;
  const store = isStore(options.store)
    ? options.store
    : await createStoreFrom(resolved, embedder, environmentOf(options), {
        contextWeight,
        clock: options.clock,
        // A Markdown file the store cannot read hides its memories: said on stderr unless the caller takes the warnings.
        logger: options.logger ?? stderrWarnings(),
        mustExist: options.mustExist === true,
        cwd: options.cwd ?? process.cwd(),
      });
  try {
    // The resolved policy goes with the memory (memory.config.policy): every pipeline and adapter over it starts from it.
    return createCoreMemory({ ...resolved.engine, policy: resolved.policy, ...pickInstances(options), store, embedder });
  } catch (error) {
    throw namingLayers(error, resolved);
  }
}

/**
 * Each layer was checked on its own; what core refuses now comes from how they combine (a file's
 * `strategy.mediumSimilarity` above the options' `highSimilarity`, say), or from a default scope
 * merged from several. INVALID_CONFIG naming every layer that set a field concerned, when one is a
 * file or the environment; otherwise (options alone) core's own error.
 */
function namingLayers(error: unknown, resolved: ResolvedConfig): unknown {
  let fields: string[];
  if (MemloomError.hasCode(error, 'INVALID_SCOPE')) fields = ['scope'];
  else if (MemloomError.hasCode(error, 'INVALID_OPTIONS')) {
    const issues = (error.details as { issues?: { path: string[] }[] } | undefined)?.issues ?? [];
    fields = [...new Set(issues.map((issue) => issue.path[0] ?? ''))].filter((field) => (ENGINE_KEYS as readonly string[]).includes(field));
  } else return error;
  // Each layer that set a field concerned, once per field it set.
  const setting = resolved.layers.flatMap((layer) => fields.filter((field) => layer.config[field as keyof MemloomConfig] !== undefined).map((field) => ({ layer, field })));
  if (fields.length === 0 || (!fields.includes('scope') && setting.every(({ layer }) => layer.source === 'options'))) return error;
  // The options layer is named by the caller's optionSources, else as "createMemory options".
  const named = (source: string) => (source === 'options' ? 'createMemory options' : source);
  const sources = [...new Set(setting.map(({ layer, field }) => named(sourceOf(layer, field))))];
  const reason = (error as MemloomError).reason.replace(/^invalid createMemory options: /, '');
  return new MemloomError({
    code: 'INVALID_CONFIG',
    backend: 'config',
    message: `invalid configuration in ${sources.join(' and ') || 'createMemory options'}${fields.includes('scope') ? ': scope' : ''}: ${reason}` +
      (sources.length > 1 ? ' (each is valid alone; merged field by field, they are not)' : ''),
    cause: error,
    details: { sources, field: fields.join(', ') },
  });
}

/** Resolve the configuration layers without creating anything (used by the CLI and `memloom stats`). */
export async function resolveMemloomConfig(options: MemloomOptions = {}): Promise<ResolvedConfig> {
  assertOptions(options);
  return resolveLayers(options);
}

async function resolveLayers(options: MemloomOptions): Promise<ResolvedConfig> {
  const cwd = options.cwd ?? process.cwd();
  const layers: ConfigLayer[] = [];
  layers.push({
    source: 'options',
    baseDir: cwd,
    config: validateConfig(configPart(options), 'createMemory options'),
    ...(options.optionSources ? { fieldSources: { ...options.optionSources } } : {}),
  });
  // A relative configFile is read from `cwd`, where the nearest one would be looked for too.
  const file = options.configFile === false ? undefined : options.configFile !== undefined ? resolve(cwd, options.configFile) : findConfigFile(cwd);
  if (file) layers.push(await loadConfigFile(file));
  const env = environmentOf(options);
  const fromEnv = configFromEnv(env, cwd);
  if (fromEnv) layers.push(fromEnv);
  const engine: Record<string, unknown> = {};
  for (const layer of [...layers].reverse()) {
    for (const key of ENGINE_KEYS) {
      const value = layer.config[key];
      if (value !== undefined) engine[key] = mergeValues(engine[key], value);
    }
  }
  const policy = resolvePolicy(
    [...layers].reverse().map((layer) => ({ source: sourceOf(layer, 'policy'), values: layer.config.policy })),
  );
  // Seed 001's retrieve_limit and the engine's retrieval.defaultLimit both say how many results a
  // search returns: the highest layer that sets either decides, retrieval.defaultLimit first within one.
  const limitLayer = layers.find((layer) => layer.config.retrieval?.defaultLimit !== undefined || layer.config.policy?.retrieve_limit !== undefined);
  if (limitLayer && limitLayer.config.retrieval?.defaultLimit === undefined) {
    engine.retrieval = mergeValues(engine.retrieval, { defaultLimit: limitLayer.config.policy?.retrieve_limit });
  }
  // A store or embedder object given in the options wins over any setting.
  const store: StoreSetting = isStore(options.store)
    ? { store: { config: `object (${options.store.name})`, source: 'options' }, defaultStore: false }
    : await readStoreSetting(layers, env, cwd, file);
  return {
    layers,
    ...(file ? { configFile: file } : {}),
    ...store,
    embedder: isEmbedder(options.embedder) ? { config: `object (${options.embedder.id})`, source: 'options' } : readEmbedderSetting(layers),
    policy,
    engine,
  };
}

function configPart(options: MemloomOptions): MemloomConfig {
  const config: Record<string, unknown> = {};
  for (const key of ENGINE_KEYS) if (options[key] !== undefined) config[key] = options[key];
  if (options.store !== undefined && !isStore(options.store)) config.store = options.store;
  if (options.embedder !== undefined && !isEmbedder(options.embedder)) config.embedder = options.embedder;
  if (options.policy !== undefined) config.policy = options.policy;
  return config as MemloomConfig;
}

function pickInstances(options: MemloomOptions): Partial<CreateMemoryOptions> {
  return Object.fromEntries(INSTANCE_KEYS.filter((key) => options[key]).map((key) => [key, options[key]]));
}

/** The variables to read MEMLOOM_* from: none for `env: false`. */
function environmentOf(options: MemloomOptions): Record<string, string | undefined> {
  return options.env === false ? {} : (options.env ?? process.env);
}

/**
 * The options that say where and how to read the configuration, checked before any is read (the
 * configuration values themselves are checked as a layer): INVALID_OPTIONS naming the option.
 */
function assertOptions(options: MemloomOptions): void {
  const refuse = (message: string): never => {
    throw new MemloomError({ code: 'INVALID_OPTIONS', backend: 'config', message: `invalid createMemory options: ${message}` });
  };
  if (!isObject(options)) refuse(`expected an object, got ${describeValue(options)}`);
  const unknown = Object.keys(options).filter((key) => !OPTION_KEYS.has(key));
  if (unknown.length > 0) refuse(`unknown option${unknown.length > 1 ? 's' : ''} ${unknown.map((key) => JSON.stringify(key)).join(', ')} (known: ${[...OPTION_KEYS].join(', ')})`);
  const { cwd, configFile, env, mustExist, optionSources } = options;
  if (cwd !== undefined && (typeof cwd !== 'string' || cwd.trim() === '')) refuse(`cwd must be a folder's path, got ${describeValue(cwd)}`);
  if (configFile !== undefined && configFile !== false && (typeof configFile !== 'string' || configFile.trim() === '')) {
    refuse(`configFile must be a file's path, or false to read none, got ${describeValue(configFile)}`);
  }
  // null is not "leave it out": it would read process.env, which a caller passing null meant not to.
  if (env !== undefined && env !== false && !isObject(env)) {
    refuse(`env must be an object of variables (such as process.env), or false to read none, got ${describeValue(env)}`);
  }
  if (mustExist !== undefined && typeof mustExist !== 'boolean') refuse(`mustExist must be true or false, got ${describeValue(mustExist)}`);
  if (optionSources !== undefined && !(isObject(optionSources) && Object.values(optionSources).every((name) => typeof name === 'string'))) {
    refuse(`optionSources must map option names to the names to show (such as { store: '--store' }), got ${describeValue(optionSources)}`);
  }
}

/** Plain objects merge key by key (the higher layer wins); anything else is replaced. */
function mergeValues(lower: unknown, higher: unknown): unknown {
  if (!isPlainObject(lower) || !isPlainObject(higher)) return higher;
  const merged: Record<string, unknown> = { ...lower };
  for (const [key, value] of Object.entries(higher)) merged[key] = mergeValues(lower[key], value);
  return merged;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype;
}

function isStore(value: unknown): value is MemoryStore {
  return typeof value === 'object' && value !== null && typeof (value as MemoryStore).apply === 'function';
}

function isEmbedder(value: unknown): value is Embedder {
  return typeof value === 'object' && value !== null && typeof (value as Embedder).embed === 'function';
}

