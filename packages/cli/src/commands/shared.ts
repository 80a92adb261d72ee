import { existsSync, statSync } from 'node:fs';
import { open, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { isEmptyScope, MemloomError, scopeDescription, type MemoryStore } from '@memloom/core';
import type { MarkdownStore } from '@memloom/store-markdown';
import { MEMORY_CATEGORIES, MEMORY_LEVELS, MEMORY_TYPES, type Memory, type MemoryFilter, type Scope } from 'memloom';
import { choiceList, type CommandContext, type OpenedMemory, type OpenOptions, type OptionSpec, type OptionValues } from '../command.js';
import { UsageError } from '../exit-codes.js';

/** --category / --type / --level, comma-separated or repeated. */
export const FILTER_OPTIONS: Record<string, OptionSpec> = {
  category: { type: 'string', multiple: true, value: 'name', description: `only these categories: ${MEMORY_CATEGORIES.join(', ')}` },
  type: { type: 'string', multiple: true, value: 'name', description: `only these types: ${MEMORY_TYPES.join(', ')}` },
  level: { type: 'string', multiple: true, value: 'name', description: `only these levels: ${MEMORY_LEVELS.join(', ')}` },
};

export function filterFrom(values: OptionValues): MemoryFilter | undefined {
  const filter: MemoryFilter = {};
  const category = choiceList(values, 'category', MEMORY_CATEGORIES);
  const type = choiceList(values, 'type', MEMORY_TYPES);
  const level = choiceList(values, 'level', MEMORY_LEVELS);
  if (category.length > 0) filter.category = category;
  if (type.length > 0) filter.type = type;
  if (level.length > 0) filter.level = level;
  return Object.keys(filter).length > 0 ? filter : undefined;
}

/** How the commands that only read (or change only memories that exist) open the memory: they never create a store. */
export const EXISTING_STORE: OpenOptions = { mustExist: true };

/** What a command does about the files of its store that it cannot read (see unreadableFiles). */
export interface UnreadableFiles {
  /**
   * `fail`: the command fails (exit 1) after printing what it read (or doing its work); `fail-first`: it fails
   * before `work` runs (the store is read once to find them), for a command whose output would pass for whole
   * (an export piped into an import) or whose writes could lose or hide what they hold; `not-found`: a memory not
   * found is said to be maybe in them.
   */
  unreadable?: 'fail' | 'fail-first' | 'not-found';
  /** With `fail-first`: why the command does nothing, for the error (default: what an export says). */
  refusal?: string;
  /** The error says too that the files may be deleted or moved out of the store (to forget a scope, the data is not wanted). */
  orRemove?: boolean;
  /**
   * The scope whose files count: the one the command acts on (effectiveScope), or with `given`, the one given by
   * --user/--agent/--session alone (an import writes each memory in its own scope, not into the configured one).
   */
  checkedScope?: 'given';
}

/**
 * How the commands that read a scope (list, search, index, stats, export) open the memory: as EXISTING_STORE,
 * and failing when the store has files it cannot read that may hold memories of the scope.
 */
export const READS: OpenOptions & UnreadableFiles = { ...EXISTING_STORE, unreadable: 'fail' };

/** How an export opens the memory: as READS, but failing before it writes a line (an export piped into an import must not look whole). */
export const EXPORTS: OpenOptions & UnreadableFiles = { ...EXISTING_STORE, unreadable: 'fail-first' };

/**
 * How the commands that read or change one memory (show, history, restore, forget <id>) open it: a memory not found
 * may be in a file the store cannot read. A change to one found is written to its own file, never to such a file.
 */
export const LOOKUPS: OpenOptions & UnreadableFiles = { ...EXISTING_STORE, unreadable: 'not-found' };

/**
 * How forget --scope opens the memory: failing before it counts or deletes anything when the scope has a file
 * the store cannot read (its whole memory/ folder would go, the file unread; the store refuses that too).
 */
export const SCOPE_DELETIONS: OpenOptions & UnreadableFiles = {
  ...EXISTING_STORE,
  unreadable: 'fail-first',
  refusal: 'nothing was counted or forgotten (the whole scope would go, with what the store cannot read)',
  orRemove: true,
};

/**
 * How an import opens the memory (it may create the store): failing before its first write (once it has read the
 * export's header and first memories: a failed import creates no store) when the scopes it
 * writes to have a file the store cannot read (a memory of the export held there would be written a second time
 * elsewhere, and --merge would not find the memories it holds to merge into).
 */
export const IMPORTS: OpenOptions & UnreadableFiles = {
  unreadable: 'fail',
  checkedScope: 'given',
  refusal: 'nothing was imported (a memory of the export held there would be written a second time, and --merge could not merge into what is there)',
};

/** How many of the files a store cannot read are listed on stderr, before "… and N more". */
export const UNREADABLE_SHOWN = 10;

/** Open the configured memory, run `work`, and close it whatever happens; `unreadable` as UnreadableFiles says. */
export async function withMemory<T>(context: CommandContext, work: (opened: OpenedMemory) => Promise<T>, options?: OpenOptions & UnreadableFiles): Promise<T> {
  const opened = await context.openMemory(options);
  try {
    if (options?.unreadable === 'fail-first' && readsFiles(opened)) {
      // A look at the store makes it read its files, and find those it cannot (only a Markdown store: opening a SQLite file may create it).
      await openStore(opened.memory);
      refuseUnreadable(context, opened, options);
    }
    const result = await work(opened);
    const unreadable = options?.unreadable === 'fail' || options?.unreadable === 'fail-first' ? unreadableFiles(context, opened, options) : undefined;
    if (unreadable) throw unreadable;
    return result;
  } catch (error) {
    // Only a memory not found may be in such a file. VERSION_NOT_FOUND (restore <id> 7) is of a memory found: its
    // versions are kept beside the Markdown files (.history/), so the file does not hold the one missing.
    const notFound = MemloomError.hasCode(error, 'NOT_FOUND');
    throw (notFound && options?.unreadable && unreadableFiles(context, opened, options, { notFound: error })) || error;
  } finally {
    await opened.memory.close().catch(() => undefined);
  }
}

/**
 * A `fail-first` command's first look: the files of the store it cannot read, as STORE_CORRUPT (see unreadableFiles)
 * saying why the command does nothing. Only a store that can have such files (the Markdown store) is opened for it:
 * opening another (a SQLite file) may create it.
 */
export function refuseUnreadable(context: CommandContext, opened: OpenedMemory, options: UnreadableFiles): void {
  const unreadable = unreadableFiles(context, opened, options, { refusal: options.refusal });
  if (unreadable) throw unreadable;
}

/** The store, when it is one that can have files it cannot read (the Markdown store); else undefined. */
function readsFiles(opened: OpenedMemory): (MemoryStore & Pick<MarkdownStore, 'problems' | 'root'>) | undefined {
  const store = opened.memory.store as MemoryStore & Partial<Pick<MarkdownStore, 'problems' | 'root'>>;
  return typeof store.problems === 'function' && typeof store.root === 'string' ? (store as MemoryStore & Pick<MarkdownStore, 'problems' | 'root'>) : undefined;
}

/**
 * The files of the store it cannot read (a Markdown file saved as GBK or UTF-16, a broken `<!-- memloom … -->`
 * line, a symbolic link) that may hold memories of the command's scope, as STORE_CORRUPT (exit 1): the memories
 * in them are missing from what the command read, which would otherwise look complete, or empty. Undefined when
 * there is none, or the store cannot tell (only the Markdown store has such files). `details.problems` lists
 * them all (`file` as shown, `path` in the store); the CLI prints the first UNREADABLE_SHOWN (see hintFor).
 */
function unreadableFiles(
  context: CommandContext,
  opened: OpenedMemory,
  options: UnreadableFiles,
  { notFound, refusal }: { notFound?: MemloomError; refusal?: string | undefined } = {},
): MemloomError | undefined {
  const store = readsFiles(opened);
  if (!store) return undefined;
  const scope = options.checkedScope === 'given' ? context.globals.scope : effectiveScope(context, opened);
  const problems = store.problems(scope);
  if (problems.length === 0) return undefined;
  const files = new Set(problems.map((problem) => problem.path)).size;
  const where = isEmptyScope(scope) ? '' : ` with memories of ${scopeDescription(scope)}`;
  const has = `the store has ${files === 1 ? 'a file' : `${files} files`}${where} it cannot read`;
  const them = files === 1 ? 'it' : 'them';
  const reading = notFound ? `${notFound.reason}; ${has}, which may hold it` : `${has}: ${refusal ?? `what was read leaves out the memories in ${them}`}`;
  const root = store.root;
  return new MemloomError({
    code: 'STORE_CORRUPT',
    backend: store.name,
    message: `${reading}; fix ${them} as each problem says${options.orRemove ? `, or delete ${them} or move ${them} out of the store` : ''}, and run the command again`,
    ...(notFound ? { cause: notFound } : {}),
    details: { scope, problems: problems.map(({ path, line, message }) => ({ file: shownFile(context, join(root, path)), path, line, message })) },
  });
}

/** A file as the person finds it: relative to the working directory when inside it, else absolute. */
function shownFile(context: CommandContext, file: string): string {
  const inside = relative(context.io.cwd, file);
  return inside.startsWith('..') || isAbsolute(inside) ? file : inside;
}

/** The scope of a command: --user/--agent/--session when given (the configured default scope fills the rest). */
export function scopeOption(context: CommandContext) {
  return Object.keys(context.globals.scope).length > 0 ? { scope: context.globals.scope } : {};
}

/** The scope a command acts on: the configured default scope, with --user/--agent/--session over it. */
export function effectiveScope(context: CommandContext, opened: OpenedMemory): Scope {
  return { ...opened.resolved.engine.scope, ...context.globals.scope };
}

/** How an import's or add-turns' checkpoint file starts (both write `source` first): `removeLeftovers` checks it. */
export const CHECKPOINT_HEAD = '{"source":';

/** Write an import's or add-turns' checkpoint, `source` first (see CHECKPOINT_HEAD). */
export function writeCheckpoint<T extends { source: string }>(path: string, checkpoint: T): Promise<void> {
  return writeFileAtomically(path, JSON.stringify(checkpoint));
}

/**
 * Remove the files `<target>.<pid>.<suffix>` that processes gone since left beside `target` (a
 * `writeFileAtomically` temporary, an export's partial file: a process killed with kill -9 removes
 * neither), and say so in a note naming `what` left them. Only a file whose name holds a pid in
 * digits and whose text starts with `head` (what memloom writes there first) is one of them; a file
 * of a process that still runs (on this machine: the pid is all the name holds) is left alone.
 */
export async function removeLeftovers(context: CommandContext, target: string, suffix: string, what: string, head: string): Promise<void> {
  const prefix = `${basename(target)}.`;
  const names = await readdir(dirname(target)).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith(`.${suffix}`)) continue;
    const digits = name.slice(prefix.length, -suffix.length - 1);
    if (!/^[1-9][0-9]*$/u.test(digits)) continue;
    const pid = Number(digits);
    if (!Number.isSafeInteger(pid) || pid === process.pid || isRunning(pid)) continue;
    const file = join(dirname(target), name);
    if (!(await startsWith(file, head))) continue;
    await rm(file, { force: true });
    context.note(`removed ${name}, left by ${what} that was stopped (process ${pid} is gone)`);
  }
}

/** Whether a file's first bytes are `head` (false when it cannot be read). */
async function startsWith(file: string, head: string): Promise<boolean> {
  const expected = Buffer.from(head, 'utf8');
  const handle = await open(file, 'r').catch(() => undefined);
  if (!handle) return false;
  try {
    const buffer = Buffer.alloc(expected.length);
    const { bytesRead } = await handle.read(buffer, 0, expected.length, 0);
    return bytesRead === expected.length && buffer.equals(expected);
  } finally {
    await handle.close();
  }
}

/** Whether a process of this pid runs (EPERM: it runs as another user). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Write a file whole or not at all: a temporary file beside it, then a rename (the temporary removed on failure). */
export async function writeFileAtomically(file: string, text: string): Promise<void> {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    await writeFile(temporary, text);
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/**
 * Crash tests: when MEMLOOM_CLI_FAILPOINT is `<point>:<count>` (such as `add-turns-stored:3`), the
 * process kills itself with SIGKILL there (no cleanup, as a power cut or kill -9 would). Unset in normal use.
 */
export function failpoint(context: CommandContext, point: string, count: number): void {
  if (context.io.env.MEMLOOM_CLI_FAILPOINT === `${point}:${count}`) process.kill(process.pid, 'SIGKILL');
}

/** A `<file | ->` argument: the file's absolute path (it must exist, and not be a folder), or undefined for `-` (stdin). */
export function inputPath(context: CommandContext, input: string): string | undefined {
  if (input === '-') return undefined;
  const path = resolve(context.io.cwd, input);
  if (!existsSync(path)) throw new UsageError(`${input} does not exist`);
  if (statSync(path).isDirectory()) throw new UsageError(`${input} is a folder; give a file, or - to read stdin`);
  return path;
}

/** Force the store open (it opens lazily on first use) so that later store calls may go to it directly. */
export async function openStore(memory: Memory): Promise<void> {
  await memory.count();
}
