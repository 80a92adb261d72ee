import { toEpochMs } from '@memloom/core';
import type { Memory, ResolvedConfig, Scope } from 'memloom';
import { UsageError, type ExitCode } from './exit-codes.js';
import type { CliIo } from './io.js';
import type { Progress } from './progress.js';

/** One option of a command, as `util.parseArgs` takes it plus what `--help` shows. */
export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  /** The value's name in `--help` (`--limit <n>`). */
  value?: string;
  description: string;
}

export type OptionValues = Record<string, string | boolean | string[] | undefined>;

/** The options every command takes. */
export interface GlobalOptions {
  json: boolean;
  verbose: boolean;
  quiet: boolean;
  config?: string;
  noConfig: boolean;
  store?: string;
  embedder?: string;
  /** From --user, --agent and --session; empty when none is given. */
  scope: Scope;
}

export interface OpenedMemory {
  memory: Memory;
  resolved: ResolvedConfig;
  /**
   * Opened with `mustExist` when no store is configured and the default one has not been made yet:
   * its path. `memory` is then an empty store in process memory (so the command answers as for an
   * empty store), and nothing was created on disk.
   */
  missingStore?: string;
}

/** How a command opens the memory. */
export interface OpenOptions {
  /** The embedder to use instead of the configured one (reindex). */
  embedder?: string;
  /**
   * For commands that only read, or change only memories that exist: never create the store. A
   * store configured (--store, MEMLOOM_STORE, MEMLOOM_SQLITE_PATH, a configuration file) that does
   * not exist is MISSING_RESOURCE from the store (exit 4); the default one not made yet reads as an
   * empty store (`OpenedMemory.missingStore`).
   */
  mustExist?: boolean;
}

export interface CommandContext {
  io: CliIo;
  positionals: string[];
  values: OptionValues;
  globals: GlobalOptions;
  /** Write a line to stdout. */
  print(text?: string): void;
  /** Write a value as JSON to stdout. */
  printJson(value: unknown): void;
  /** Write a note to stderr (suppressed by --quiet and --json). */
  note(text: string): void;
  /** Open the configured memory (with --store / --embedder / --config applied); closed by the caller. */
  openMemory(options?: OpenOptions): Promise<OpenedMemory>;
  /** A progress line on stderr (off with --quiet and --json). */
  progress(label: string): Progress;
  bold(text: string): string;
  dim(text: string): string;
}

export interface CommandSpec {
  name: string;
  /** One line for `memloom --help`. */
  summary: string;
  /** Synopsis lines after `memloom `. */
  usage: string[];
  /** Paragraphs for `memloom <command> --help`. */
  description: string;
  options?: Record<string, OptionSpec>;
  examples: string[];
  run(context: CommandContext): Promise<ExitCode | void>;
}

// ---------------------------------------------------------------------------
// Reading option values
// ---------------------------------------------------------------------------

export function stringOption(values: OptionValues, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

export function listOption(values: OptionValues, name: string): string[] {
  const value = values[name];
  return Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
}

export function flag(values: OptionValues, name: string): boolean {
  return values[name] === true;
}

export interface NumberCheck {
  min?: number;
  max?: number;
  /** Digits only (`12`, `-3`): not `1.0`, `1e3` or `0x10`, which Number() reads as whole numbers too. */
  integer?: boolean;
}

export function numberOption(values: OptionValues, name: string, check: NumberCheck = {}): number | undefined {
  const raw = stringOption(values, name);
  return raw === undefined ? undefined : parseNumber(raw, `--${name}`, check);
}

/** A number written in decimals (`0.5`, `-2`, `1e-3`; no `0x10` or `Infinity`), else a usage error naming `label` (`--limit`, `<version>`). */
export function parseNumber(raw: string, label: string, check: NumberCheck = {}): number {
  const value = Number(raw);
  const ok =
    (check.integer ? /^-?\d+$/u : /^-?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?$/iu).test(raw) &&
    Number.isFinite(value) &&
    (check.min === undefined || value >= check.min) &&
    (check.max === undefined || value <= check.max);
  if (!ok) {
    const range = [check.integer ? 'an integer' : 'a number', check.min !== undefined ? `>= ${check.min}` : '', check.max !== undefined ? `<= ${check.max}` : '']
      .filter(Boolean)
      .join(' ');
    throw new UsageError(`${label} must be ${range}, got "${raw}"`);
  }
  return value;
}

export function choiceOption<T extends string>(values: OptionValues, name: string, choices: readonly T[]): T | undefined {
  const raw = stringOption(values, name);
  if (raw === undefined) return undefined;
  if (!(choices as readonly string[]).includes(raw)) throw new UsageError(`--${name} must be one of ${choices.join(', ')}, got "${raw}"`);
  return raw as T;
}

export function choiceList<T extends string>(values: OptionValues, name: string, choices: readonly T[]): T[] {
  const list = listOption(values, name).flatMap((item) => item.split(',')).map((item) => item.trim()).filter(Boolean);
  for (const item of list) {
    if (!(choices as readonly string[]).includes(item)) throw new UsageError(`--${name} must be one of ${choices.join(', ')}, got "${item}"`);
  }
  return list as T[];
}

/** A date or date-time (`2024-05-01`, `2024-05-01T09:00:00Z`), as an ISO string. */
export function dateOption(values: OptionValues, name: string): string | undefined {
  const raw = stringOption(values, name);
  if (raw === undefined) return undefined;
  let ms: number;
  try {
    // As core reads times: 2024-02-30, which Date.parse takes as March 1, is refused.
    ms = toEpochMs(raw);
  } catch {
    throw new UsageError(`--${name} must be a date such as 2024-05-01 or 2024-05-01T09:00:00Z, got "${raw}"`);
  }
  return new Date(ms).toISOString();
}

/** Exactly `count` positionals named `names`, else a usage error. */
export function requirePositionals(context: CommandContext, names: string[]): string[] {
  const { positionals } = context;
  if (positionals.length < names.length) {
    throw new UsageError(`missing ${names.slice(positionals.length).map((name) => `<${name}>`).join(' ')}`);
  }
  if (positionals.length > names.length) throw new UsageError(`unexpected argument "${positionals[names.length]}"`);
  return positionals;
}

export function describeScope(scope: Scope): string {
  const parts = [scope.userId && `user ${scope.userId}`, scope.agentId && `agent ${scope.agentId}`, scope.sessionId && `session ${scope.sessionId}`].filter(Boolean);
  return parts.length > 0 ? parts.join(', ') : 'no scope';
}
