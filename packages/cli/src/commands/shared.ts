import { existsSync, statSync } from 'node:fs';
import { open, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
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

/** Open the configured memory, run `work`, and close it whatever happens. */
export async function withMemory<T>(context: CommandContext, work: (opened: OpenedMemory) => Promise<T>, options?: OpenOptions): Promise<T> {
  const opened = await context.openMemory(options);
  try {
    return await work(opened);
  } finally {
    await opened.memory.close().catch(() => undefined);
  }
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
