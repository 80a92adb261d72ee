import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { explainZodIssues, formatZodIssues, MemloomError } from '@memloom/core';
import { memloomConfigSchema, type MemloomConfig } from './config-schema.js';
import { prepareTypeScriptConfig } from './typescript-config.js';

/** Names searched for, in this order, in the working directory and each parent. */
export const CONFIG_FILE_NAMES = ['memloom.config.json', 'memloom.config.mjs', 'memloom.config.js', 'memloom.config.ts'] as const;

/** One layer of configuration and where it came from (for error messages and `memloom stats`). */
export interface ConfigLayer {
  /** `createMemory options`, a file path, or `environment (MEMLOOM_*)`. */
  source: string;
  /** Where single fields came from when that is narrower than `source` (the variable that set them). */
  fieldSources?: Partial<Record<string, string>>;
  /** Folder that relative paths in this layer resolve against. */
  baseDir: string;
  config: MemloomConfig;
}

/** The nearest configuration file from `cwd` upwards, or undefined. */
export function findConfigFile(cwd: string = process.cwd()): string | undefined {
  let directory = resolve(cwd);
  for (;;) {
    for (const name of CONFIG_FILE_NAMES) {
      const candidate = join(directory, name);
      if (existsSync(candidate)) return candidate;
    }
    const parent = dirname(directory);
    if (parent === directory) return undefined;
    directory = parent;
  }
}

/**
 * Read and validate a configuration file. JSON is parsed; `.mjs`/`.js` are
 * imported and their default export used; `.ts` is imported natively when
 * Node can (Node 22.18+, or a process already run by tsx), else through
 * `tsx` when it is installed (as an ES module when it is written as one, even
 * where package.json does not say "type": "module"). Every error names the
 * file and the field.
 */
export async function loadConfigFile(path: string): Promise<ConfigLayer> {
  const file = resolve(path);
  let raw: unknown;
  if (file.endsWith('.json')) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      // The system's reason (no such file, a folder, no permission) is the one thing to fix.
      throw new MemloomError({ code: 'MISSING_RESOURCE', backend: 'config', message: `cannot read ${file}: ${(error as Error).message}`, cause: error, details: { file } });
    }
    try {
      // A byte order mark (Notepad, PowerShell 5's UTF-8) is no part of the JSON, and JSON.parse refuses it.
      raw = JSON.parse(text.replace(/^\uFEFF/u, ''));
    } catch (error) {
      throw new MemloomError({
        code: 'INVALID_CONFIG',
        backend: 'config',
        message: `${file} is not valid JSON: ${(error as Error).message}`,
        cause: error,
        details: { file },
      });
    }
  } else {
    const exported = configExport(await importConfigModule(file), file);
    // A module may export a promise of its configuration (export default loadTeamConfig()).
    raw = await Promise.resolve(exported).catch((error: unknown) => {
      throw cannotLoad(file, error);
    });
  }
  return { source: file, baseDir: dirname(file), config: validateConfig(raw, file) };
}

/** Validate configuration from anywhere; INVALID_CONFIG names the source and each bad field. */
export function validateConfig(raw: unknown, source: string): MemloomConfig {
  // With the values in the issues, a value of no accepted kind is named ("received 5").
  const parsed = memloomConfigSchema.safeParse(raw, { reportInput: true });
  if (!parsed.success) {
    throw new MemloomError({
      code: 'INVALID_CONFIG',
      backend: 'config',
      message: `invalid configuration in ${source}: ${formatZodIssues(parsed.error)}`,
      // The issues as the message says them: a union's where the value went wrong, not zod's bare "Invalid input" at its top.
      details: { source, issues: explainZodIssues(parsed.error.issues).map((issue) => ({ path: issue.path.map(String), message: issue.message })) },
    });
  }
  // Keep what was written (not the schema's defaults), so lower layers still show through.
  return raw as MemloomConfig;
}

/**
 * Configuration from environment variables:
 * - `MEMLOOM_STORE`: `sqlite:./memory.db`, `markdown:./memory`, `qdrant:http://host:6333`, `memory:`
 * - `MEMLOOM_EMBEDDER`: `default`, `lexical`, `use-lite`, `transformers:<model id>`
 * - `MEMLOOM_POLICY`: a JSON object of seed 001 policy values, e.g. `{"retrieve_limit":5}`
 * - `MEMLOOM_USER_ID`: the default scope's userId
 * - `MEMLOOM_FRESHNESS`: seed 000's warnings on stale memories: `on` (24 h), `off`, hours (`12`), or
 *   a JSON object such as `{"globalThresholdHours":12,"typeOverrides":{"project":6}}`
 */
export function configFromEnv(env: Record<string, string | undefined> = process.env, cwd = process.cwd()): ConfigLayer | undefined {
  const config: Record<string, unknown> = {};
  const fieldSources: Record<string, string> = {};
  // Each variable is validated on its own, so an error names the variable that holds the bad value.
  const take = (variable: string, field: string, value: unknown) => {
    const source = `environment variable ${variable}`;
    Object.assign(config, validateConfig({ [field]: value }, source));
    fieldSources[field] = source;
  };
  const store = env.MEMLOOM_STORE?.trim();
  if (store) take('MEMLOOM_STORE', 'store', store);
  const embedder = env.MEMLOOM_EMBEDDER?.trim();
  if (embedder) take('MEMLOOM_EMBEDDER', 'embedder', embedder);
  const policy = env.MEMLOOM_POLICY?.trim();
  if (policy) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(policy);
    } catch (error) {
      throw new MemloomError({
        code: 'INVALID_CONFIG',
        backend: 'config',
        message: `invalid configuration in environment variable MEMLOOM_POLICY: policy: must be a JSON object such as {"retrieve_limit":5}: ${(error as Error).message}`,
        cause: error,
        details: { source: 'environment variable MEMLOOM_POLICY', field: 'policy' },
      });
    }
    take('MEMLOOM_POLICY', 'policy', parsed);
  }
  const userId = env.MEMLOOM_USER_ID?.trim();
  if (userId) take('MEMLOOM_USER_ID', 'scope', { userId });
  const freshness = env.MEMLOOM_FRESHNESS?.trim();
  if (freshness) take('MEMLOOM_FRESHNESS', 'freshness', freshnessFromEnv(freshness));
  if (Object.keys(config).length === 0) return undefined;
  return { source: ENV_SOURCE, baseDir: cwd, config: config as MemloomConfig, fieldSources };
}

/**
 * `MEMLOOM_FRESHNESS` as configuration: `on` / `true` is `{}` (seed 000's 24 h), `off` / `false` is
 * `false`, a number is the hours, text starting with `{` is read as JSON (which the schema then
 * checks). Anything else is INVALID_CONFIG saying what is accepted.
 */
function freshnessFromEnv(value: string): unknown {
  const word = value.toLowerCase();
  if (word === 'on' || word === 'true') return {};
  if (word === 'off' || word === 'false') return false;
  if (/^\d+(?:\.\d+)?$/u.test(value)) return { globalThresholdHours: Number(value) };
  const refuse = (why: string, cause?: unknown): never => {
    throw new MemloomError({
      code: 'INVALID_CONFIG',
      backend: 'config',
      message: `invalid configuration in environment variable MEMLOOM_FRESHNESS: freshness: must be on, off, a number of hours (such as 12) or a JSON object such as {"globalThresholdHours":12}, got ${JSON.stringify(value)}${why}`,
      ...(cause === undefined ? {} : { cause }),
      details: { source: 'environment variable MEMLOOM_FRESHNESS', field: 'freshness' },
    });
  };
  if (!value.startsWith('{')) return refuse('');
  try {
    return JSON.parse(value) as unknown;
  } catch (error) {
    return refuse(`: ${(error as Error).message}`, error);
  }
}

/**
 * Where the default store goes: beside the configuration file when there is one (a project's
 * subfolders share its memory, as they share its configuration), else in the working directory.
 */
export function defaultLayer(cwd: string, configFile: string | undefined): ConfigLayer {
  return { source: 'defaults', baseDir: configFile ? dirname(configFile) : cwd, config: {} };
}

/** The source named for a whole environment layer. */
export const ENV_SOURCE = 'environment (MEMLOOM_*)';

/** Where one field of a layer came from: the variable that set it, else the layer's source. */
export function sourceOf(layer: ConfigLayer, field: string): string {
  return layer.fieldSources?.[field] ?? layer.source;
}

/**
 * Resolve a path written in a layer against that layer's folder; `~` and `~/…` are the home folder,
 * as a shell reads them (a configuration file is read by no shell). `source` is named when the path
 * cannot be used here.
 */
export function resolveIn(layer: ConfigLayer, path: string, source = sourceOf(layer, 'store')): string {
  if (path === ':memory:') return path;
  // Before ~: on Linux or macOS, ~\notes would be a file named "\notes" in the home folder.
  if (process.platform !== 'win32') refuseWindowsPath(path, source);
  if (/^~(?=$|[\\/])/u.test(path)) return join(homedir(), path.slice(1));
  if (isAbsolute(path)) return path;
  return resolve(layer.baseDir, path);
}

/**
 * On Linux or macOS, a backslash is no folder separator but a character of a name: `data\memory.db` would be
 * one file named so in the layer's folder, and `C:\data` or `\\server\share` one named after the whole path.
 * `C:/data/memory.db` would be a folder named `C:` in the layer's folder, and `C:memory.db` (on Windows, relative
 * to drive C:'s current folder) a file named so: meant as a Windows drive, both are refused too (`./C:/data` and
 * `./C:memory.db` name such a folder or file). INVALID_CONFIG naming `source`.
 */
function refuseWindowsPath(path: string, source: string): void {
  // ASCII letters only: with the u and i flags, [a-z] also matches ſ (U+017F) and K (Kelvin sign, U+212A).
  const drive = /^[A-Za-z]:/u.test(path);
  let problem: string;
  if (drive || path.startsWith('\\\\')) {
    const name = path.split('/')[0];
    const here = drive && !path.includes('\\') ? ` (for ${path.includes('/') ? 'a folder' : 'a file or folder'} named "${name}" here, write "./${path}")` : '';
    problem = `is a Windows path, and this system is not Windows: give a path of this system${here}`;
  } else if (path.includes('\\')) {
    problem = 'holds a backslash, which separates no folders on this system: write the path with "/" (Windows reads that too)';
  } else return;
  throw new MemloomError({
    code: 'INVALID_CONFIG',
    backend: 'config',
    message: `invalid configuration in ${source}: store: ${JSON.stringify(path)} ${problem}`,
    details: { source, field: 'store', path },
  });
}

type TsImport = (specifier: string, parent: string) => Promise<Record<string, unknown>>;

/** A JavaScript or TypeScript configuration module, imported. */
async function importConfigModule(file: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(file).href;
  const typescript = /\.[cm]?ts$/.test(file);
  if (typescript) prepareTypeScriptConfig(file);
  try {
    return (await import(url)) as Record<string, unknown>;
  } catch (error) {
    if (!typescript || (error as { code?: string }).code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw cannotLoad(file, error);
  }
  const tsImport = await findTsx(file);
  if (!tsImport) {
    throw new MemloomError({
      code: 'MISSING_RESOURCE',
      backend: 'config',
      message: `cannot load ${file}: this Node.js cannot import TypeScript by itself; run "npm install --save-dev tsx" or rename it memloom.config.mjs`,
      details: { file, package: 'tsx' },
    });
  }
  try {
    return await tsImport(url, url);
  } catch (error) {
    throw cannotLoad(file, error);
  }
}

/**
 * tsx's `tsImport`, from the configuration's project first, then from
 * memloom's own dependencies. Its ESM entry is used (read from tsx's exports
 * map): the CommonJS one cannot import ES modules.
 */
async function findTsx(file: string): Promise<TsImport | undefined> {
  for (const base of [file, import.meta.url]) {
    let manifest: string;
    try {
      manifest = createRequire(base).resolve('tsx/package.json');
    } catch {
      continue; // not installed there
    }
    const exports = (JSON.parse(await readFile(manifest, 'utf8')) as { exports?: Record<string, { import?: { default?: string } }> }).exports;
    const entry = exports?.['./esm/api']?.import?.default;
    if (!entry) continue;
    const api = (await import(pathToFileURL(join(dirname(manifest), entry)).href)) as { tsImport?: TsImport };
    if (typeof api.tsImport === 'function') return api.tsImport;
  }
  return undefined;
}

/** The configuration a module exports as default; INVALID_CONFIG naming the file when it exports none. */
function configExport(module: Record<string, unknown>, file: string): unknown {
  // A TypeScript module compiled to CommonJS wraps its exports once more (its default, if any, inside).
  const wrapper = module.default;
  const compiled = typeof wrapper === 'object' && wrapper !== null && (wrapper as { __esModule?: unknown }).__esModule === true;
  const exports = compiled ? (wrapper as Record<string, unknown>) : module;
  if (!('default' in exports)) {
    throw new MemloomError({
      code: 'INVALID_CONFIG',
      backend: 'config',
      message: `invalid configuration in ${file}: it has no default export (write "export default defineConfig({ … })", or "module.exports = { … }" in CommonJS)`,
      details: { source: file },
    });
  }
  return exports.default;
}

function cannotLoad(file: string, error: unknown): MemloomError {
  return new MemloomError({
    code: 'INVALID_CONFIG',
    backend: 'config',
    message: `cannot load ${file}: ${(error as Error).message}`,
    cause: error,
    details: { file },
  });
}
