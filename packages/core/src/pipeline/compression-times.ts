import type { PolicyStorage } from '../policy.js';
import { scopeKey } from '../scope.js';
import type { Scope } from '../types.js';

/** Where the time of each scope's last long-term compression is kept. */
export interface CompressionTimes {
  keptIn: 'policyStorage' | 'process';
  read(scope: Scope | undefined): Promise<Date | undefined>;
  write(scope: Scope | undefined, at: Date): Promise<void>;
}

/**
 * Seed 001 keeps the time in `memory/.last_longterm_compress`, beside the
 * policy overrides, so the policy storage keeps it when it can
 * (`readLastCompression` / `writeLastCompression`); otherwise this process
 * does, and a restart may compress once more that day.
 */
export function createCompressionTimes(storage: PolicyStorage | undefined): CompressionTimes {
  if (storage?.readLastCompression && storage.writeLastCompression) {
    const read = storage.readLastCompression.bind(storage);
    const write = storage.writeLastCompression.bind(storage);
    return { keptIn: 'policyStorage', read: (scope) => read(scope ?? {}), write: (scope, at) => write(scope ?? {}, at) };
  }
  const times = new Map<string, Date>();
  return {
    keptIn: 'process',
    read: async (scope) => times.get(scopeKey(scope ?? {})),
    write: async (scope, at) => {
      times.set(scopeKey(scope ?? {}), at);
    },
  };
}
