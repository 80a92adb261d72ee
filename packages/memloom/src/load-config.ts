import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { formatZodIssues, MemloomError } from '@memloom/core';
import { memloomConfigSchema, type MemloomConfig } from './config-schema.js';

/** Names searched for, in this order, in the working directory and each parent. */
export const CONFIG_FILE_NAMES = ['memloom.config.json', 'memloom.config.mjs', 'memloom.config.js', 'memloom.config.ts'] as const;

/** One layer of configuration and where it came from (for error messages and `memloom stats`). */
export interface ConfigLayer {
  /** `options`, a file path, or `environment`. */
  source: string;
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
 * Read and validate a configuration file. JSON is parsed; `.mjs`/`.js`
 * (and `.ts` when the process can import TypeScript) are imported and
 * their default export used. Every error names the file and the field.
 */
export async function loadConfigFile(path: string): Promise<ConfigLayer> {
  const file = resolve(path);
  let raw: unknown;
  if (file.endsWith('.json')) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      throw new MemloomError({ code: 'MISSING_RESOURCE', backend: 'config', message: `cannot read ${file}`, cause: error, details: { file } });
    }
    try {
      raw = JSON.parse(text);
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
    try {
      const module = (await import(pathToFileURL(file).href)) as { default?: unknown };
      raw = module.default;
    } catch (error) {
      const hint = file.endsWith('.ts') ? ' (a .ts config needs a TypeScript loader such as tsx; use memloom.config.mjs otherwise)' : '';
      throw new MemloomError({
        code: 'INVALID_CONFIG',
        backend: 'config',
        message: `cannot load ${file}${hint}: ${(error as Error).message}`,
        cause: error,
        details: { file },
      });
    }
  }
  return { source: file, baseDir: dirname(file), config: validateConfig(raw, file) };
}

/** Validate configuration from anywhere; INVALID_CONFIG names the source and each bad field. */
export function validateConfig(raw: unknown, source: string): MemloomConfig {
  const parsed = memloomConfigSchema.safeParse(raw ?? {});
  if (!parsed.success) {
    throw new MemloomError({
      code: 'INVALID_CONFIG',
      backend: 'config',
      message: `invalid configuration in ${source}: ${formatZodIssues(parsed.error)}`,
      details: { source, issues: parsed.error.issues.map((issue) => ({ path: issue.path.map(String), message: issue.message })) },
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
 */
export function configFromEnv(env: Record<string, string | undefined> = process.env, cwd = process.cwd()): ConfigLayer | undefined {
  const config: Record<string, unknown> = {};
  const store = env.MEMLOOM_STORE?.trim();
  if (store) config.store = store;
  const embedder = env.MEMLOOM_EMBEDDER?.trim();
  if (embedder) config.embedder = embedder;
  const policy = env.MEMLOOM_POLICY?.trim();
  if (policy) {
    try {
      config.policy = JSON.parse(policy);
    } catch (error) {
      throw new MemloomError({
        code: 'INVALID_CONFIG',
        backend: 'config',
        message: `MEMLOOM_POLICY must be a JSON object such as {"retrieve_limit":5}: ${(error as Error).message}`,
        cause: error,
        details: { source: 'MEMLOOM_POLICY' },
      });
    }
  }
  const userId = env.MEMLOOM_USER_ID?.trim();
  if (userId) config.scope = { userId };
  if (Object.keys(config).length === 0) return undefined;
  return { source: 'environment (MEMLOOM_*)', baseDir: cwd, config: validateConfig(config, 'environment (MEMLOOM_*)') };
}

/** Resolve a path written in a layer against that layer's folder. */
export function resolveIn(layer: ConfigLayer, path: string): string {
  if (path === ':memory:' || isAbsolute(path)) return path;
  return resolve(layer.baseDir, path);
}
