import path from 'node:path';
import { policyOverridesSchema, systemClock, type Clock, type PolicyOverrides, type PolicyStorage, type Scope } from '@memloom/core';
import { readIfExists, writeFileAtomic } from './atomic-file.js';
import { freeStampedName } from './backups.js';
import { storeError } from './errors.js';
import { FileLock } from './file-lock.js';
import { assertSafeScope, memoryDirectory } from './scope-path.js';

export interface MarkdownPolicyStorageOptions {
  /** The store's root folder. */
  root: string;
  /** Whose policy: the scope folder the files live in. @default {} (the root's own `memory/`) */
  scope?: Scope;
  /** Names the snapshots when `writeOverrides` is given no time. @default the system clock */
  clock?: Clock;
  /** fsync on every write. @default true */
  fsync?: boolean;
  /** @default 10000 */
  lockTimeoutMs?: number;
  /** @default 30000 */
  lockStaleMs?: number;
}

/**
 * Seed 001's policy files for one scope: `memory/policy_overrides.json`
 * (the overrides; deleting it rolls back to the configuration) and
 * `memory/policy_snapshots/YYYYMMDD_HHMMSS.json` (the overrides as they
 * were before each write). Writes are atomic and take the store lock.
 */
export function createMarkdownPolicyStorage(options: MarkdownPolicyStorageOptions): PolicyStorage & { readonly file: string; readonly snapshots: string } {
  if (!options || typeof options.root !== 'string' || options.root === '') {
    throw storeError('INVALID_OPTIONS', 'createMarkdownPolicyStorage needs { root, scope? }');
  }
  const root = path.resolve(options.root);
  const directory = memoryDirectory(root, assertSafeScope(options.scope ?? {}));
  const file = path.join(directory, 'policy_overrides.json');
  const snapshots = path.join(directory, 'policy_snapshots');
  const durability = { fsync: options.fsync ?? true };
  const clock = options.clock ?? systemClock;
  const lock = new FileLock(path.join(root, '.memloom', 'lock'), {
    timeoutMs: options.lockTimeoutMs ?? 10_000,
    staleMs: options.lockStaleMs ?? 30_000,
  });
  const display = path.relative(root, file).split(path.sep).join('/');

  async function read(): Promise<{ text: string; value: unknown } | undefined> {
    const text = await readIfExists(file);
    if (text === undefined || text.trim() === '') return undefined;
    try {
      return { text, value: JSON.parse(text) };
    } catch (error) {
      const position = Number((error as Error).message.match(/position (\d+)/u)?.[1] ?? NaN);
      const line = Number.isFinite(position) ? text.slice(0, position).split('\n').length : 1;
      throw storeError('STORE_CORRUPT', `${display}:${line}: not valid JSON (${(error as Error).message}); fix or delete the file`, {
        path: display,
        line,
      });
    }
  }

  return {
    file,
    snapshots,
    async readOverrides() {
      return (await read())?.value;
    },
    async writeOverrides(overrides: PolicyOverrides, at: Date) {
      const parsed = policyOverridesSchema.safeParse(overrides);
      if (!parsed.success) throw storeError('INVALID_INPUT', `policy overrides are not valid: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
      const atMs = at instanceof Date && !Number.isNaN(at.getTime()) ? at.getTime() : clock.now();
      await lock.run(async () => {
        const current = await readIfExists(file);
        if (current !== undefined && current.trim() !== '') {
          const snapshot = await freeStampedName(snapshots, atMs, 'x.json');
          // Seed 001 names snapshots YYYYMMDD_HHMMSS.json: drop the placeholder suffix.
          await writeFileAtomic(snapshot.replace(/_x\.json$/u, '.json'), current, durability);
        }
        await writeFileAtomic(file, `${JSON.stringify(parsed.data, null, 2)}\n`, durability);
      });
    },
  };
}
