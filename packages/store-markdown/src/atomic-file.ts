import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';

/** How hard writes try to reach the disk. */
export interface Durability {
  /** fsync files and their folders. */
  fsync: boolean;
}

/**
 * A temp file next to `target` (same folder, so the rename is atomic), hidden
 * and recognisable so that readers skip it and recovery can remove it.
 */
export function tempPathFor(target: string, tag = randomBytes(6).toString('hex')): string {
  return path.join(path.dirname(target), `.${path.basename(target)}.${tag}.tmp`);
}

/**
 * The names `tempPathFor` gives: `.<name>.<tag>.tmp`, the tag being its own
 * 12 hex digits or a Transaction's id (`<base-36 time>-<8 hex digits>`).
 */
const TEMP_NAME = /^\..+\.(?:[0-9a-f]{12}|[0-9a-z]+-[0-9a-f]{8})\.tmp$/u;

/** True for names this package uses for temp files (and not for a person's own `.notes.tmp`). */
export function isTempName(name: string): boolean {
  return TEMP_NAME.test(name);
}

/** Identity of a file's content as the filesystem sees it: changes with any write or replace. */
export function signatureOf(stat: { ino: number | bigint; size: number | bigint; mtimeMs: number }): string {
  return `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
}

/** Write `data` to `file` and fsync it (no rename). Returns the written file's signature. */
export async function writeDurable(file: string, data: string | Uint8Array, durability: Durability): Promise<string> {
  const handle = await fs.open(file, 'w');
  try {
    await handle.writeFile(data);
    if (durability.fsync) await handle.sync();
    return signatureOf(await handle.stat());
  } finally {
    await handle.close();
  }
}

/**
 * Replace `target` atomically: write a temp file in the same folder, fsync
 * it, rename it over the target, fsync the folder. A crash at any point
 * leaves either the old file or the new one, never half of one.
 */
export async function writeFileAtomic(target: string, data: string | Uint8Array, durability: Durability): Promise<void> {
  await fs.mkdir(path.dirname(target), { recursive: true });
  const temp = tempPathFor(target);
  try {
    await writeDurable(temp, data, durability);
    await fs.rename(temp, target);
  } catch (error) {
    await fs.rm(temp, { force: true }).catch(() => undefined);
    throw error;
  }
  await syncDirectory(path.dirname(target), durability);
}

/** Append bytes and fsync. Returns the file's signature after the append. */
export async function appendDurable(file: string, data: string | Uint8Array, durability: Durability): Promise<string> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  const handle = await fs.open(file, 'a');
  try {
    await handle.appendFile(data);
    if (durability.fsync) await handle.sync();
    return signatureOf(await handle.stat());
  } finally {
    await handle.close();
  }
}

/** fsync a folder so that renames and new names inside it survive a crash. */
export async function syncDirectory(directory: string, durability: Durability): Promise<void> {
  if (!durability.fsync || process.platform === 'win32') return;
  let handle;
  try {
    handle = await fs.open(directory, 'r');
    await handle.sync();
  } catch {
    // Some filesystems refuse fsync on folders; the rename is still atomic.
  } finally {
    await handle?.close();
  }
}

/** Size of a file, or undefined when it does not exist. */
export async function sizeOf(file: string): Promise<number | undefined> {
  try {
    return (await fs.stat(file)).size;
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

/**
 * Read a file as UTF-8, or undefined when it does not exist. A byte order mark at its start (Notepad saves UTF-8
 * with one) is dropped, as in the Markdown: JSON.parse would refuse the file for it.
 */
export async function readIfExists(file: string): Promise<string | undefined> {
  const text = (await readBytesIfExists(file))?.toString('utf8');
  return text?.startsWith('\uFEFF') ? text.slice(1) : text;
}

/** Read a file's bytes, or undefined when it does not exist. */
export async function readBytesIfExists(file: string): Promise<Buffer | undefined> {
  try {
    return await fs.readFile(file);
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

export function isMissing(error: unknown): boolean {
  const code = (error as { code?: string } | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** Remove `directory` and its parents up to (not including) `root` while they hold nothing but scope value files. */
export async function removeEmptyFolders(directory: string, root: string): Promise<void> {
  let current = directory;
  while (current.startsWith(root) && current !== root) {
    try {
      const names = (await fs.readdir(current)).filter((name) => name !== '.scope-value');
      if (names.length > 0) return;
      await fs.rm(current, { recursive: true, force: true });
    } catch {
      return;
    }
    current = path.dirname(current);
  }
}
