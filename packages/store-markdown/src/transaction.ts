import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { MemloomError } from '@memloom/core';
import { appendDurable, isMissing, readIfExists, sizeOf, syncDirectory, tempPathFor, writeDurable, writeFileAtomic, type Durability } from './atomic-file.js';
import { copyToBackups } from './backups.js';
import { storeError, writeError } from './errors.js';
import { statSignature } from './loader.js';

interface JournalEntry {
  txid: string;
  state: 'prepare' | 'commit';
  /** Logs appended to, with their size before, to cut them back on rollback. */
  appends: Array<{ file: string; size: number }>;
  /**
   * Temp files renamed over their targets at commit. For a file a person may edit (`backups` set), the
   * target's signature when the write began (null: no file): if it differs when the rename comes, the
   * target is copied to `backups` first.
   */
  writes: Array<{ temp: string; target: string; signature?: string | null; backups?: string }>;
  /** Files or folders removed at commit (moved to trash first). */
  removes: Array<{ target: string; trash: string }>;
}

/**
 * All the file changes of one write, applied all together or not at all,
 * even across a crash. Logs are appended and new files written to temp
 * files first; a journal (written atomically) then flips from `prepare` to
 * `commit`, and only then are temps renamed over their targets and removed
 * paths moved away. Recovery cuts logs back (prepare) or finishes the
 * renames (commit). Callers hold the store lock.
 */
export class Transaction {
  /** Also names its temp files: keep in step with the names `isTempName` recognises. */
  private readonly txid = `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
  private readonly appends = new Map<string, Array<string | Buffer>>();
  private readonly writes = new Map<string, string | Buffer>();
  /** Backup folders of the written files a person may edit (Markdown). */
  private readonly backupFolders = new Map<string, string>();
  private readonly removes = new Set<string>();
  /** Signature of each written or appended file once committed. */
  readonly signatures = new Map<string, string>();

  constructor(
    private readonly journalFile: string,
    private readonly trashDirectory: string,
    private readonly durability: Durability,
    /** Time for the names of backups made while rolling forward. */
    private readonly now: () => number = Date.now,
  ) {}

  get isEmpty(): boolean {
    return this.appends.size === 0 && this.writes.size === 0 && this.removes.size === 0;
  }

  append(file: string, data: string | Buffer): void {
    const chunks = this.appends.get(file) ?? [];
    chunks.push(data);
    this.appends.set(file, chunks);
  }

  /** Replace `file`; give `backups` for a file a person may edit, to keep a copy should they save it meanwhile. */
  write(file: string, content: string | Buffer, backups?: string): void {
    this.removes.delete(file);
    this.writes.set(file, content);
    if (backups) this.backupFolders.set(file, backups);
  }

  remove(target: string): void {
    this.writes.delete(target);
    this.appends.delete(target);
    this.removes.add(target);
  }

  /** Files this transaction will write (targets). */
  get writtenFiles(): string[] {
    return [...this.writes.keys()];
  }

  /**
   * Run the transaction. `beforeCommit` runs after every temp file is on
   * disk and before the commit point (backups go there). `operation` says
   * what was asked for (`cannot delete the scope`), for the error of a write
   * refused past its commit point.
   */
  async commit(operation: string, beforeCommit?: () => Promise<void>): Promise<void> {
    if (this.isEmpty) return;
    const journal: JournalEntry = {
      txid: this.txid,
      state: 'prepare',
      appends: [],
      writes: [],
      removes: [],
    };
    for (const file of this.appends.keys()) journal.appends.push({ file, size: (await sizeOf(file)) ?? -1 });
    for (const target of this.writes.keys()) {
      const temp = tempPathFor(target, this.txid);
      const backups = this.backupFolders.get(target);
      journal.writes.push(backups ? { temp, target, signature: statSignature(target) ?? null, backups } : { temp, target });
    }
    for (const [index, target] of [...this.removes].entries()) {
      journal.removes.push({ target, trash: path.join(this.trashDirectory, `${this.txid}-${index}`) });
    }
    await writeFileAtomic(this.journalFile, JSON.stringify(journal), this.durability);
    failpoint('after-journal');
    try {
      for (const [file, chunks] of this.appends) {
        const data = Buffer.concat(chunks.map((chunk) => (typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk)));
        this.signatures.set(file, await appendDurable(file, data, this.durability));
      }
      for (const { temp, target } of journal.writes) {
        await fs.mkdir(path.dirname(target), { recursive: true });
        // A rename keeps inode, size and mtime, so the temp's signature is the target's.
        this.signatures.set(target, await writeDurable(temp, this.writes.get(target) as string | Buffer, this.durability));
      }
      failpoint('before-backup');
      await beforeCommit?.();
      failpoint('before-commit');
    } catch (error) {
      await rollBack(journal).catch(() => undefined);
      await fs.rm(this.journalFile, { force: true });
      throw error;
    }
    journal.state = 'commit';
    await writeFileAtomic(this.journalFile, JSON.stringify(journal), this.durability);
    failpoint('after-commit');
    try {
      await rollForward(journal, this.durability, this.now());
    } catch (error) {
      throw unfinished(error, journal.state, this.journalFile, operation);
    }
    await fs.rm(this.journalFile, { force: true });
  }
}

/** What recovery did with a journal a crashed process left; `backups` are the files a person changed meanwhile, and their copies. */
export interface Recovery {
  outcome: 'none' | 'rolled-back' | 'rolled-forward';
  backups: Array<{ file: string; backup: string }>;
}

/** Finish or undo a transaction a crashed process left behind. Call under the store lock. */
export async function recoverJournal(journalFile: string, durability: Durability, atMs: number): Promise<Recovery> {
  const text = await readIfExists(journalFile);
  if (text === undefined) return { outcome: 'none', backups: [] };
  let journal: JournalEntry;
  try {
    journal = JSON.parse(text) as JournalEntry;
  } catch (error) {
    // The journal is written atomically, so this is damage from outside.
    throw storeError('STORE_CORRUPT', `the write journal ${journalFile} cannot be read; move it away to continue`, { path: journalFile }, error);
  }
  let backups: Recovery['backups'] = [];
  try {
    if (journal.state === 'commit') backups = await rollForward(journal, durability, atMs);
    else await rollBack(journal);
  } catch (error) {
    throw unfinished(error, journal.state, journalFile);
  }
  await fs.rm(journalFile, { force: true });
  return { outcome: journal.state === 'commit' ? 'rolled-forward' : 'rolled-back', backups };
}

async function rollBack(journal: JournalEntry): Promise<void> {
  for (const { file, size } of journal.appends) {
    if (size < 0) await fs.rm(file, { force: true });
    else await fs.truncate(file, size).catch((error: unknown) => (isMissing(error) ? undefined : Promise.reject(error)));
  }
  for (const { temp } of journal.writes) await fs.rm(temp, { force: true });
}

/** Rename the temps over their targets; a target a person changed since the write began is backed up first. */
async function rollForward(journal: JournalEntry, durability: Durability, atMs: number): Promise<Recovery['backups']> {
  const folders = new Set<string>();
  const backups: Recovery['backups'] = [];
  for (const { temp, target, signature, backups: folder } of journal.writes) {
    // Only Markdown files have backups (and a person who edits them). A temp that is gone was renamed
    // already, by an earlier, interrupted roll-forward: there is nothing to back up, and the rename below skips it.
    if (folder && statSignature(temp) !== undefined) {
      const current = statSignature(target);
      if (current !== undefined && current !== signature) {
        backups.push({ file: target, backup: await copyToBackups(target, folder, path.basename(target), atMs, durability) });
      }
    }
    try {
      await fs.rename(temp, target);
      folders.add(path.dirname(target));
      failpoint('after-first-rename');
    } catch (error) {
      // Already renamed by an earlier, interrupted roll-forward.
      if (!isMissing(error)) throw error;
    }
  }
  for (const { target, trash } of journal.removes) {
    try {
      await fs.mkdir(path.dirname(trash), { recursive: true });
      await fs.rename(target, trash);
      folders.add(path.dirname(target));
    } catch (error) {
      if (!isMissing(error)) throw error;
    }
  }
  for (const folder of folders) await syncDirectory(folder, durability);
  for (const { trash } of journal.removes) await fs.rm(trash, { recursive: true, force: true });
  return backups;
}

/**
 * A journal that could not be finished (`commit`) or undone (`prepare`): it stays, and every call of the
 * store tries again and fails alike until a process that may make the change does. One refused for want
 * of permission (`writeError`) names the folder and says so. `operation`: the write that was refused
 * itself (what its caller asked for), not one found unfinished.
 */
function unfinished(error: unknown, state: JournalEntry['state'], journalFile: string, operation?: string): MemloomError {
  const what =
    operation !== undefined
      ? `${operation}: the write is left unfinished past its commit point`
      : state === 'commit'
        ? 'cannot finish a write left unfinished past its commit point'
        : 'cannot undo a write left unfinished before its commit point';
  return writeError(error, `${what} (${journalFile})`, {
    advice: '. Every call of the store fails until a process that may write that folder does it (opening the store does): open the store once as a user who may, or make the folder writable for this process',
    details: { journal: journalFile },
  });
}

/**
 * Crash tests: when MEMLOOM_MARKDOWN_FAILPOINT names this point, the
 * process kills itself there with SIGKILL (no cleanup, like a power cut
 * for the process). Unset in normal use.
 */
function failpoint(name: string): void {
  if (process.env.MEMLOOM_MARKDOWN_FAILPOINT === name) process.kill(process.pid, 'SIGKILL');
}
