import { describe, expect, it } from 'vitest';
import { qdrantOptionsFromEnv } from '../src/index.js';

describe('qdrantOptionsFromEnv', () => {
  it('reads MEMLOOM_STORE=qdrant:URL and the cluster settings', () => {
    expect(
      qdrantOptionsFromEnv({
        MEMLOOM_STORE: 'qdrant:http://qdrant-0.qdrant:6333',
        QDRANT_API_KEY: 'secret',
        MEMLOOM_QDRANT_COLLECTION: 'agents',
        MEMLOOM_QDRANT_SHARDS: '6',
        MEMLOOM_QDRANT_REPLICAS: '2',
        MEMLOOM_QDRANT_WRITE_CONSISTENCY: '2',
      }),
    ).toEqual({ url: 'http://qdrant-0.qdrant:6333', apiKey: 'secret', collection: 'agents', shardNumber: 6, replicationFactor: 2, writeConsistencyFactor: 2 });
  });

  it('falls back to QDRANT_URL, and stays out of the way when another store is configured', () => {
    expect(qdrantOptionsFromEnv({ MEMLOOM_STORE: 'qdrant', QDRANT_URL: 'https://q.example:6333' })).toEqual({ url: 'https://q.example:6333' });
    expect(qdrantOptionsFromEnv({ QDRANT_URL: 'http://localhost:6333' })).toEqual({ url: 'http://localhost:6333' });
    expect(qdrantOptionsFromEnv({ MEMLOOM_STORE: 'sqlite:./memory.db', QDRANT_URL: 'http://localhost:6333' })).toBeUndefined();
    expect(qdrantOptionsFromEnv({})).toBeUndefined();
  });

  it('refuses a URL or collection that createQdrantStore would refuse, naming the variable it came from', () => {
    const cases: [Record<string, string>, string][] = [
      [{ MEMLOOM_STORE: 'qdrant', QDRANT_URL: 'localhost:6333' }, 'QDRANT_URL is not valid: url:'],
      [{ MEMLOOM_STORE: 'qdrant:not a url' }, 'MEMLOOM_STORE is not valid: url:'],
      [{ MEMLOOM_STORE: 'qdrant:http://h:6333', MEMLOOM_QDRANT_COLLECTION: 'team memories' }, 'MEMLOOM_QDRANT_COLLECTION is not valid: collection:'],
    ];
    for (const [env, message] of cases) {
      expect(() => qdrantOptionsFromEnv(env), message).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG', message: expect.stringContaining(message) }));
    }
  });

  it('refuses a malformed number with INVALID_CONFIG', () => {
    expect(() => qdrantOptionsFromEnv({ MEMLOOM_STORE: 'qdrant:http://h:6333', MEMLOOM_QDRANT_SHARDS: 'three' })).toThrow(
      expect.objectContaining({ code: 'INVALID_CONFIG' }),
    );
  });
});
