import { existsSync, statSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
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
