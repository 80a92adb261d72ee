import { MemloomError } from '@memloom/core';
import { resolveOptions, type QdrantStoreOptions } from './options.js';

/**
 * Store options from environment variables, so a deployment can point
 * memloom at Qdrant by configuration alone:
 *
 * - `MEMLOOM_STORE=qdrant:http://host:6333` (or `QDRANT_URL=http://host:6333`)
 * - `QDRANT_API_KEY`
 * - `MEMLOOM_QDRANT_COLLECTION` (default `memloom`)
 * - `MEMLOOM_QDRANT_SHARDS`, `MEMLOOM_QDRANT_REPLICAS`, `MEMLOOM_QDRANT_WRITE_CONSISTENCY`
 *   (used when the collection is created)
 *
 * Returns undefined when neither MEMLOOM_STORE names qdrant nor QDRANT_URL is set.
 */
export function qdrantOptionsFromEnv(env: Record<string, string | undefined> = process.env): QdrantStoreOptions | undefined {
  const store = env.MEMLOOM_STORE?.trim();
  let url: string | undefined;
  if (store?.startsWith('qdrant:')) url = store.slice('qdrant:'.length) || undefined;
  else if (store && store !== 'qdrant') return undefined;
  url ??= env.QDRANT_URL?.trim() || undefined;
  if (!url && store !== 'qdrant') return undefined;
  const options: QdrantStoreOptions = {
    ...(url ? { url } : {}),
    ...(env.QDRANT_API_KEY ? { apiKey: env.QDRANT_API_KEY } : {}),
    ...(env.MEMLOOM_QDRANT_COLLECTION ? { collection: env.MEMLOOM_QDRANT_COLLECTION } : {}),
    ...integer(env, 'MEMLOOM_QDRANT_SHARDS', 'shardNumber'),
    ...integer(env, 'MEMLOOM_QDRANT_REPLICAS', 'replicationFactor'),
    ...integer(env, 'MEMLOOM_QDRANT_WRITE_CONSISTENCY', 'writeConsistencyFactor'),
  };
  // Each value checked as createQdrantStore checks it, so that a bad one is blamed on its variable.
  const urlVariable = store?.startsWith('qdrant:') && store.length > 'qdrant:'.length ? 'MEMLOOM_STORE' : 'QDRANT_URL';
  const variables: Partial<Record<keyof QdrantStoreOptions, string>> = { url: urlVariable, apiKey: 'QDRANT_API_KEY', collection: 'MEMLOOM_QDRANT_COLLECTION' };
  for (const [field, variable] of Object.entries(variables) as [keyof QdrantStoreOptions, string][]) {
    if (options[field] === undefined) continue;
    try {
      resolveOptions({ [field]: options[field] });
    } catch (error) {
      const reason = MemloomError.isInstance(error) ? error.reason.replace(/^invalid createQdrantStore options: /, '') : String(error);
      throw new MemloomError({ code: 'INVALID_CONFIG', backend: 'qdrant', message: `${variable} is not valid: ${reason}`, details: { variable } });
    }
  }
  return options;
}

function integer(env: Record<string, string | undefined>, variable: string, option: keyof QdrantStoreOptions): Partial<QdrantStoreOptions> {
  const raw = env[variable]?.trim();
  if (!raw) return {};
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) {
    throw new MemloomError({ code: 'INVALID_CONFIG', backend: 'qdrant', message: `${variable} must be a positive integer, got "${raw}"` });
  }
  return { [option]: value };
}
