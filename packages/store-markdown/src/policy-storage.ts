import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { excerpt, isIsoTime, policyOverridesSchema, systemClock, type Clock, type PolicyOverrides, type PolicyStorage, type Scope } from '@memloom/core';
import { readIfExists, writeFileAtomic } from './atomic-file.js';
import { stamp } from './backups.js';
import { guarded, storeError, writeError } from './errors.js';
import { FileLock } from './file-lock.js';
import { assertNotLinked } from './linked-folders.js';
import { assertSafeScope, memoryDirectory, shownPath } from './scope-path.js';

export interface MarkdownPolicyStorageOptions {
  /** The store's root folder. */
  root: string;
  /** Whose policy: the scope folder the files live in. @default {} (the root's own `memory/`) */
  scope?: Scope;
  /** Names the snapshots when `writeOverrides` is given no time. @default the system clock */
  clock?: Clock;
  /** fsync on every write. @default true */
  fsync?: boolean;
  /** Longest wait for the store lock before a write fails with TIMEOUT. @default 10000 */
  lockTimeoutMs?: number;
  /** A lock not refreshed for this long is taken over. @default 30000 */
  lockStaleMs?: number;
}

/**
 * Snapshots kept in `policy_snapshots/`, the newest: a snapshot is only read
 * by a person rolling back by hand (neither the store nor core reads them),
 * each is a few hundred bytes, and evolution writes one per accepted change
 * (at most one per ~20 messages), so 100 reach back over at least 2,000
 * messages while the folder stays bounded.
 */
export const POLICY_SNAPSHOTS_KEPT = 100;

/**
 * Seed 001's policy files for one scope: `memory/policy_overrides.json`
 * (the overrides; deleting it rolls back to the configuration) and
 * `memory/policy_snapshots/YYYYMMDD_HHMMSS.json` (the overrides as they
 * were before each write, the newest `POLICY_SNAPSHOTS_KEPT`), and each
 * scope's `memory/.last_longterm_compress` (when its long-term memory was
 * last compressed). Writes are atomic and take the store lock.
 */
export function createMarkdownPolicyStorage(options: MarkdownPolicyStorageOptions): PolicyStorage & { readonly file: string; readonly snapshots: string } {
  if (!options || typeof options.root !== 'string' || options.root === '') {
    throw storeError('INVALID_OPTIONS', 'createMarkdownPolicyStorage needs { root, scope? }');
  }
  const root = path.resolve(options.root);
  const directory = memoryDirectory(root, assertSafeScope(options.scope));
  const file = path.join(directory, 'policy_overrides.json');
  const snapshots = path.join(directory, 'policy_snapshots');
  const durability = { fsync: options.fsync ?? true };
  const clock = options.clock ?? systemClock;
  const lock = new FileLock(path.join(root, '.memloom', 'lock'), {
    timeoutMs: options.lockTimeoutMs ?? 10_000,
    staleMs: options.lockStaleMs ?? 30_000,
  });
  const display = shownPath(root, file);

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
      return (await guarded(`cannot read ${display}`, read))?.value;
    },
    async readLastCompression(of: Scope) {
      const marker = compressionMarker(root, of);
      const text = (await guarded(`cannot read ${shownPath(root, marker)}`, () => readIfExists(marker)))?.trim();
      if (!text) return undefined;
      // Like the times in the Markdown: a Date would read 2024-02-30 as March 1, and other text as it guesses.
      const valid: boolean = isIsoTime(text); // a guard: `text` is already a string
      if (!valid) {
        const shown = shownPath(root, marker);
        throw storeError('STORE_CORRUPT', `${shown}:1: not an ISO timestamp on a day of the calendar (${JSON.stringify(excerpt(text))}); delete the file to reset it`, {
          path: shown,
          line: 1,
        });
      }
      return new Date(text);
    },
    async writeLastCompression(of: Scope, at: Date) {
      const marker = compressionMarker(root, of);
      if (!(at instanceof Date) || Number.isNaN(at.getTime())) {
        throw storeError('INVALID_INPUT', `the time of the last compression must be a valid Date, not ${String(at)}`);
      }
      const write = async () => {
        assertNotLinked(root, path.dirname(marker));
        await writeFileAtomic(marker, `${at.toISOString()}\n`, durability);
      };
      await guarded(`cannot write ${shownPath(root, marker)}`, () => lock.run(write), writeError);
    },
    async writeOverrides(overrides: PolicyOverrides, at: Date) {
      const parsed = policyOverridesSchema.safeParse(overrides);
      if (!parsed.success) throw storeError('INVALID_INPUT', `policy overrides are not valid: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
      const atMs = at instanceof Date && !Number.isNaN(at.getTime()) ? at.getTime() : clock.now();
      await guarded(`cannot write ${display}`, () =>
        lock.run(async () => {
          assertNotLinked(root, directory);
          const current = await readIfExists(file);
          if (current !== undefined && current.trim() !== '') {
            const written = await freeSnapshotName(snapshots, atMs);
            await writeFileAtomic(written, current, durability);
            // Like backups: a snapshot that cannot be removed now is removed after a later write.
            await pruneSnapshots(snapshots, path.basename(written)).catch(() => undefined);
          }
          // Only the keys given: the schema's defaults are the configuration's business, not an override.
          const given = Object.fromEntries(Object.keys(overrides).map((key) => [key, (parsed.data as Record<string, unknown>)[key]]));
          await writeFileAtomic(file, `${JSON.stringify(given, null, 2)}\n`, durability);
        }),
        writeError,
      );
    },
  };
}

/** Seed 001's `memory/.last_longterm_compress` of a scope (validated before it names a folder). */
function compressionMarker(root: string, scope: Scope): string {
  return path.join(memoryDirectory(root, assertSafeScope(scope)), '.last_longterm_compress');
}

const SNAPSHOT = /^(\d{8}_\d{6})(?:-(\d+))?\.json$/u;

/** `YYYYMMDD_HHMMSS.json` (seed 001), or `YYYYMMDD_HHMMSS-N.json` past the highest taken in that second. */
async function freeSnapshotName(directory: string, atMs: number): Promise<string> {
  const base = stamp(atMs);
  const names = await readdir(directory).catch(() => [] as string[]);
  let highest = 0;
  for (const name of names) {
    const match = name.match(SNAPSHOT);
    if (match?.[1] === base) highest = Math.max(highest, Number(match[2] ?? 1));
  }
  return path.join(directory, highest === 0 ? `${base}.json` : `${base}-${highest + 1}.json`);
}

/**
 * Remove all but the `POLICY_SNAPSHOTS_KEPT` snapshots written last; other files stay. Written
 * last, not named last: after a clock is set back, the snapshots taken since are named before the
 * older ones, and each holds the only copy of the overrides its write replaced. Write order is
 * the files' modification time (ties by name: time, then counter); `written`, the one just taken,
 * is always kept.
 */
async function pruneSnapshots(directory: string, written: string): Promise<void> {
  const named = (await readdir(directory)).flatMap((name) => {
    const match = name.match(SNAPSHOT);
    return match ? [{ name, stamp: match[1] as string, counter: Number(match[2] ?? 1) }] : [];
  });
  if (named.length <= POLICY_SNAPSHOTS_KEPT) return;
  const snapshots = await Promise.all(named.map(async (entry) => ({ ...entry, writtenMs: entry.name === written ? Infinity : (await stat(path.join(directory, entry.name))).mtimeMs })));
  snapshots.sort((a, b) => a.writtenMs - b.writtenMs || a.stamp.localeCompare(b.stamp) || a.counter - b.counter);
  for (const { name } of snapshots.slice(0, snapshots.length - POLICY_SNAPSHOTS_KEPT)) {
    await rm(path.join(directory, name), { force: true });
  }
}
