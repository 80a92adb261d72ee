import { promises as fs } from 'node:fs';
import path from 'node:path';
import { isMissing, writeFileAtomic, type Durability } from './atomic-file.js';
import { RetrySignal } from './errors.js';
import { statSignature } from './loader.js';

/** `YYYYMMDD_HHMMSS` in UTC, as in seed 001's backup and snapshot names. */
export function stamp(atMs: number): string {
  const iso = new Date(atMs).toISOString();
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}_${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}`;
}

const BACKUP = /^(\d{8}_\d{6})(?:-(\d+))?_(.+)$/u;

/**
 * A free name `<stamp>_<file>` in `directory` (`<stamp>-2_<file>`, … when
 * several writes fall in the same second).
 */
export async function freeStampedName(directory: string, atMs: number, suffix: string): Promise<string> {
  const base = stamp(atMs);
  let highest = 0;
  for (const name of await listNames(directory)) {
    const match = name.match(BACKUP);
    if (match?.[1] === base && match[3] === suffix) highest = Math.max(highest, Number(match[2] ?? 1));
  }
  // Past the highest counter, never into a gap left by pruning, so names keep their order.
  const counter = highest + 1;
  return path.join(directory, counter === 1 ? `${base}_${suffix}` : `${base}-${counter}_${suffix}`);
}

/** Backups of one file, oldest first. */
export async function backupsOf(directory: string, fileName: string): Promise<string[]> {
  return (await listNames(directory))
    .map((name) => ({ name, match: name.match(BACKUP) }))
    .filter((entry) => entry.match?.[3] === fileName)
    .sort((a, b) => {
      const [, stampA = '', counterA = '1'] = a.match as RegExpMatchArray;
      const [, stampB = '', counterB = '1'] = b.match as RegExpMatchArray;
      return stampA.localeCompare(stampB) || Number(counterA) - Number(counterB);
    })
    .map((entry) => path.join(directory, entry.name));
}

/** Delete the oldest backups of `fileName` beyond `keep`. */
export async function pruneBackups(directory: string, fileName: string, keep: number): Promise<void> {
  const all = await backupsOf(directory, fileName);
  for (const file of all.slice(0, Math.max(0, all.length - keep))) await fs.rm(file, { force: true });
}

async function listNames(directory: string): Promise<string[]> {
  try {
    return await fs.readdir(directory);
  } catch (error) {
    if (isMissing(error)) return [];
    throw error;
  }
}

/**
 * Copy `file` to `backups/<stamp>_<name>` before it is overwritten, after
 * checking it is still the version that was read (else RetrySignal: someone
 * saved it meanwhile). Returns false when there was no file to back up.
 */
export async function backUp(
  file: string,
  expected: string | undefined,
  directory: string,
  name: string,
  atMs: number,
  durability: Durability,
): Promise<boolean> {
  const before = statSignature(file);
  if (before !== expected) throw new RetrySignal(`${file} changed while it was being written`);
  if (before === undefined) return false;
  await copyToBackups(file, directory, name, atMs, durability);
  if (statSignature(file) !== expected) throw new RetrySignal(`${file} changed while it was being backed up`);
  return true;
}

/** Copy `file` as it is now to `backups/<stamp>_<name>`; returns the copy's path. */
export async function copyToBackups(file: string, directory: string, name: string, atMs: number, durability: Durability): Promise<string> {
  const data = await fs.readFile(file);
  const copy = await freeStampedName(directory, atMs, name);
  await writeFileAtomic(copy, data, durability);
  return copy;
}
