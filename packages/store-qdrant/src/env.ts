import { MemloomError } from '@memloom/core';
import { optionProblem, type QdrantStoreOptions } from './options.js';

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
 * Each value is checked as createQdrantStore checks it, and a bad one is
 * INVALID_CONFIG naming its variable. `given`: options set elsewhere (a
 * configuration file); the variables of the fields it sets are not read, nor
 * the URL and key when it gives a `client`, so a stale one is ignored.
 *
 * Returns undefined when neither MEMLOOM_STORE names qdrant nor QDRANT_URL is set.
 */
export function qdrantOptionsFromEnv(
  env: Record<string, string | undefined> = process.env,
  given: QdrantStoreOptions = {},
): QdrantStoreOptions | undefined {
  const store = env.MEMLOOM_STORE?.trim();
  if (store && store !== 'qdrant' && !store.startsWith('qdrant:')) return undefined;
  const fromStore = store?.startsWith('qdrant:') ? store.slice('qdrant:'.length) || undefined : undefined;
  const url = fromStore ?? (env.QDRANT_URL?.trim() || undefined);
  if (!url && store !== 'qdrant') return undefined;
  const read = (field: keyof QdrantStoreOptions): boolean => given[field] === undefined && !(given.client !== undefined && (field === 'url' || field === 'apiKey'));
  const text = (variable: string, field: keyof QdrantStoreOptions, value: string | undefined): Partial<QdrantStoreOptions> => {
    if (!value || !read(field)) return {};
    const problem = optionProblem(field, value);
    if (problem) throw new MemloomError({ code: 'INVALID_CONFIG', backend: 'qdrant', message: `${variable} is not valid: ${problem}`, details: { variable } });
    return { [field]: value };
  };
  const integer = (variable: string, field: keyof QdrantStoreOptions) => (read(field) ? positiveInteger(env, variable, field) : {});
  return {
    ...text(fromStore ? 'MEMLOOM_STORE' : 'QDRANT_URL', 'url', url),
    ...text('QDRANT_API_KEY', 'apiKey', env.QDRANT_API_KEY),
    ...text('MEMLOOM_QDRANT_COLLECTION', 'collection', env.MEMLOOM_QDRANT_COLLECTION),
    ...integer('MEMLOOM_QDRANT_SHARDS', 'shardNumber'),
    ...integer('MEMLOOM_QDRANT_REPLICAS', 'replicationFactor'),
    ...integer('MEMLOOM_QDRANT_WRITE_CONSISTENCY', 'writeConsistencyFactor'),
  };
}

function positiveInteger(env: Record<string, string | undefined>, variable: string, option: keyof QdrantStoreOptions): Partial<QdrantStoreOptions> {
  const raw = env[variable]?.trim();
  if (!raw) return {};
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) {
    throw new MemloomError({ code: 'INVALID_CONFIG', backend: 'qdrant', message: `${variable} must be a positive integer, got "${raw}"` });
  }
  return { [option]: value };
}
