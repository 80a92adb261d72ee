import { randomBytes } from 'node:crypto';
import { existsSync, promises as fs, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { MemloomError } from '@memloom/core';
import { isMissing } from './atomic-file.js';
import { refusedPath, storeError, writeError } from './errors.js';

export interface FileLockOptions {
  /** Give up after this long. */
  timeoutMs: number;
  /** A lock whose holder stopped refreshing it for this long is broken. */
  staleMs: number;
}

interface Owner {
  pid: number;
  host: string;
  token: string;
}

/**
 * A cross-process lock: a folder created with mkdir (atomic everywhere),
 * holding its owner's pid, host and a random token. The holder touches it
 * while it works. Another process breaks it when the holder's process is
 * gone (same host) or the lock was not touched for `staleMs`. Breaking goes
 * through a second, short-lived folder so two breakers cannot both win.
 */
export class FileLock {
  private readonly breaker: string;

  constructor(
    private readonly directory: string,
    private readonly options: FileLockOptions,
  ) {
    this.breaker = `${directory}.break`;
  }

  /** Run `task` while holding the lock. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await task();
    } finally {
      await release();
    }
  }

  async acquire(): Promise<() => Promise<void>> {
    const owner: Owner = { pid: process.pid, host: os.hostname(), token: randomBytes(12).toString('hex') };
    const deadline = Date.now() + this.options.timeoutMs;
    let wait = 2;
    try {
      await fs.mkdir(path.dirname(this.directory), { recursive: true });
      for (;;) {
        if (await this.tryCreate(owner)) break;
        await this.breakIfStale();
        if (Date.now() > deadline) {
          throw storeError('TIMEOUT', `could not take the store lock within ${this.options.timeoutMs} ms (held by another process)`, {
            lock: this.directory,
          });
        }
        await sleep(wait + Math.random() * wait);
        wait = Math.min(wait * 2, 50);
      }
    } catch (error) {
      throw lockError(error, this.directory);
    }
    const refresh = setInterval(() => {
      const now = new Date();
      void fs.utimes(this.directory, now, now).catch(() => undefined);
    }, Math.max(100, Math.floor(this.options.staleMs / 3)));
    refresh.unref();
    return async () => {
      clearInterval(refresh);
      const current = await readOwner(this.directory);
      if (current?.token === owner.token) await fs.rm(this.directory, { recursive: true, force: true });
    };
  }

  private async tryCreate(owner: Owner): Promise<boolean> {
    try {
      await fs.mkdir(this.directory);
    } catch (error) {
      if ((error as { code?: string }).code === 'EEXIST') return false;
      throw error;
    }
    await fs.writeFile(path.join(this.directory, 'owner.json'), JSON.stringify(owner));
    return true;
  }

  private async breakIfStale(): Promise<void> {
    if (!(await this.isStale(this.directory))) return;
    try {
      await fs.mkdir(this.breaker);
    } catch (error) {
      if ((error as { code?: string }).code !== 'EEXIST') throw error;
      // Someone else is breaking it; clear their breaker only if it is left over.
      if (await this.isStale(this.breaker, 5_000)) await fs.rm(this.breaker, { recursive: true, force: true });
      return;
    }
    try {
      await fs.writeFile(path.join(this.breaker, 'owner.json'), JSON.stringify({ pid: process.pid, host: os.hostname(), token: 'breaker' }));
      // Check again under the breaker: the lock may have been released and taken anew.
      if (await this.isStale(this.directory)) await fs.rm(this.directory, { recursive: true, force: true });
    } finally {
      await fs.rm(this.breaker, { recursive: true, force: true });
    }
  }

  private async isStale(directory: string, staleMs = this.options.staleMs): Promise<boolean> {
    let stat;
    try {
      stat = await fs.stat(directory);
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
    const owner = await readOwner(directory);
    if (owner && owner.host === os.hostname() && owner.pid !== process.pid && !isAlive(owner.pid)) return true;
    // No owner file yet: the holder is between mkdir and writing it, unless that was long ago.
    return Date.now() - stat.mtimeMs > staleMs;
  }
}

/**
 * A lock that cannot be made (a read-only folder or disk): STORE_ERROR naming the folder as
 * read-only (`writeError`), with the system's reason. Every read takes the lock too (it takes in
 * edits made by hand, which it may write), so a store in a folder this process may not write cannot
 * be opened. A stale lock whose contents this process may not remove is named itself, with who left
 * it (a process of another user only when the folder's owner is known and is not this process's); so
 * is a leftover `lock.break` (a process that broke a stale lock stopped before removing it) whose
 * contents this process may not remove, with who left it. A `lock.break` that cannot be made, or
 * removed from a folder this process may not write, or anything on a read-only disk (EROFS), is the
 * folder's to fix, not the breaker's.
 */
function lockError(error: unknown, directory: string): MemloomError {
  const target = (error as { path?: unknown } | undefined)?.path;
  const inside = (folder: string, file: unknown) => typeof file === 'string' && file.startsWith(`${folder}${path.sep}`);
  const breaker = `${directory}.break`;
  const refused = refusedPath(error);
  const readOnlyDisk = (error as { code?: unknown } | undefined)?.code === 'EROFS';
  if (!readOnlyDisk && (refused === breaker || inside(breaker, refused)) && existsSync(breaker)) {
    const owner = leftBy(breaker);
    return writeError(error, `cannot take the store lock ${directory}`, {
      advice:
        `. ${breaker} is left over from a process that broke a stale lock and stopped before removing it (${owner.text}), and this one may not remove it: ` +
        `no process uses it any more; remove it${owner.otherUser ? ' (as that user or root)' : ''}, and the store can be opened again`,
      details: { lock: directory, breaker, owner: owner.details },
    });
  }
  if (!readOnlyDisk && inside(directory, target)) {
    const owner = leftBy(directory);
    return writeError(error, `cannot take the store lock ${directory}`, {
      advice:
        `. No process holds it any more (its own is gone, or stopped refreshing it), but this one may not remove it ` +
        `(${owner.otherUser ? 'a process of another user left it: ' : ''}${owner.text}): remove it${owner.otherUser ? ' (as that user or root)' : ''}`,
      details: { lock: directory, owner: owner.details },
    });
  }
  return writeError(error, `cannot take the store lock ${directory}`, {
    advice: '. The store takes it to read too (a read takes in edits made by hand, and may write), so that folder must be writable by this process',
    details: { lock: directory },
  });
}

/**
 * Who left a lock folder: the user owning it, and the process its owner.json names (when it can be read);
 * `otherUser` when that user is known and is not this process's.
 */
function leftBy(directory: string): { text: string; otherUser: boolean; details: { uid?: number; pid?: number; host?: string } } {
  let uid: number | undefined;
  try {
    uid = statSync(directory).uid;
  } catch {
    // Gone meanwhile: nothing to name.
  }
  let owner: Partial<Owner> = {};
  try {
    const parsed: unknown = JSON.parse(readFileSync(path.join(directory, 'owner.json'), 'utf8'));
    // A damaged file (`null`, a number) names no one.
    if (typeof parsed === 'object' && parsed !== null) owner = parsed as Partial<Owner>;
  } catch {
    // Not written, or not readable by this process.
  }
  const pid = typeof owner.pid === 'number' ? owner.pid : undefined;
  const host = typeof owner.host === 'string' ? owner.host : undefined;
  // Windows has no process uid (and stat gives 0): no user is named, and no one is called another user.
  const me = process.getuid?.();
  const parts = [
    ...(uid !== undefined && me !== undefined ? [`owned by user id ${uid}${uid === me ? ' (this process\'s)' : ''}`] : []),
    ...(pid !== undefined ? [`made by process ${pid}${host !== undefined ? ` on ${host}` : ''}`] : []),
  ];
  return {
    text: parts.length > 0 ? parts.join(', ') : 'its owner cannot be read',
    otherUser: me !== undefined && uid !== undefined && uid !== me,
    details: { ...(uid !== undefined && me !== undefined ? { uid } : {}), ...(pid !== undefined ? { pid } : {}), ...(host !== undefined ? { host } : {}) },
  };
}

async function readOwner(directory: string): Promise<Owner | undefined> {
  try {
    const owner = JSON.parse(await fs.readFile(path.join(directory, 'owner.json'), 'utf8')) as Owner;
    return typeof owner.pid === 'number' && typeof owner.token === 'string' ? owner : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM';
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
