import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { MemloomError } from '@memloom/core';
import { createMemory, resolveMemloomConfig, type MemloomOptions } from 'memloom';
import { COMMANDS, findCommand } from './commands/index.js';
import { UNREADABLE_SHOWN } from './commands/shared.js';
import type { CommandContext, CommandSpec, GlobalOptions, OptionSpec, OptionValues } from './command.js';
import { EXIT_CODES, exitCodeFor, SIGNAL_EXIT_CODES, StopSignal, UsageError, type ExitCode } from './exit-codes.js';
import { oneLine, withoutControls } from './format.js';
import { commandHelp, mainHelp } from './help.js';
import { styles, type CliIo } from './io.js';
import { Progress } from './progress.js';

/** Options every command takes, listed once in each command's --help. */
export const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  user: { type: 'string', value: 'id', description: 'scope: the user whose memories to use' },
  agent: { type: 'string', value: 'id', description: 'scope: the agent' },
  session: { type: 'string', value: 'id', description: 'scope: the session' },
  json: { type: 'boolean', description: 'print JSON on stdout for scripts (errors as JSON on stderr)' },
  config: { type: 'string', value: 'file', description: 'use this configuration file instead of the nearest memloom.config.*' },
  'no-config': { type: 'boolean', description: 'read no configuration file (environment and options only)' },
  store: { type: 'string', value: 'spec', description: 'store to use, over the configuration: sqlite:./memory.db, markdown:./memory, qdrant:http://host:6333, memory:' },
  embedder: { type: 'string', value: 'spec', description: 'embedder to use, over the configuration: default, lexical, use-lite, transformers:<model>' },
  quiet: { type: 'boolean', short: 'q', description: 'no progress or notes on stderr' },
  verbose: { type: 'boolean', description: 'on failure, print the stack trace and causes' },
  help: { type: 'boolean', short: 'h', description: 'show this help' },
};

/**
 * Run the CLI on `argv` (without `node` and the script) and return the exit
 * code. Never throws: every failure is printed and mapped to a code.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const [first, ...rest] = argv;
  if (first === undefined) {
    io.stderr.write(mainHelp(COMMANDS));
    return EXIT_CODES.USAGE;
  }
  if (first === '--help' || first === '-h') {
    io.stdout.write(mainHelp(COMMANDS));
    return EXIT_CODES.OK;
  }
  if (first === '--version' || first === '-v') {
    io.stdout.write(`${cliVersion()}\n`);
    return EXIT_CODES.OK;
  }
  if (first === 'help') {
    const command = rest[0] === undefined ? undefined : findCommand(rest[0]);
    if (rest[0] !== undefined && !command) return usageFailure(io, new UsageError(`unknown command "${rest[0]}"`), false);
    if (rest.length > 1) return usageFailure(io, new UsageError(`unexpected argument "${rest[1]}": memloom help [command]`), false);
    io.stdout.write(command ? commandHelp(command, GLOBAL_OPTIONS) : mainHelp(COMMANDS));
    return EXIT_CODES.OK;
  }
  const command = findCommand(first);
  if (!command) {
    const hint = first.startsWith('-') ? 'the command comes first: memloom <command> [options]' : `unknown command "${first}"`;
    return usageFailure(io, new UsageError(hint), rest.includes('--json'));
  }

  let values: OptionValues;
  let positionals: string[];
  const options = { ...GLOBAL_OPTIONS, ...command.options };
  try {
    const parsed = parseArgs({
      args: withNegativeValues(rest, options),
      options: toParseArgs(options),
      allowPositionals: true,
      strict: true,
      tokens: true,
    });
    ({ values, positionals } = parsed as { values: OptionValues; positionals: string[] });
    assertOptionValues(parsed.tokens, options);
  } catch (error) {
    return usageFailure(io, new UsageError(cleanParseError(error), command.name), rest.includes('--json'));
  }
  if (values.help === true) {
    io.stdout.write(commandHelp(command, GLOBAL_OPTIONS));
    return EXIT_CODES.OK;
  }

  let globals: GlobalOptions;
  try {
    globals = readGlobals(values);
  } catch (error) {
    return usageFailure(io, new UsageError((error as Error).message, command.name), values.json === true);
  }
  const context = createContext(io, globals, values, positionals);
  try {
    return (await command.run(context)) ?? EXIT_CODES.OK;
  } catch (error) {
    return reportFailure(io, command, globals, error);
  }
}

export function cliVersion(): string {
  const require = createRequire(import.meta.url);
  return (require('../package.json') as { version: string }).version;
}

function createContext(io: CliIo, globals: GlobalOptions, values: OptionValues, positionals: string[]): CommandContext {
  const out = styles(io.stdout, io.env);
  const memloomOptions = (embedder?: string): MemloomOptions => ({
    cwd: io.cwd,
    env: io.env,
    ...(globals.noConfig ? { configFile: false } : globals.config ? { configFile: resolve(io.cwd, globals.config) } : {}),
    ...(globals.store ? { store: globals.store } : {}),
    ...((embedder ?? globals.embedder) ? { embedder: embedder ?? globals.embedder } : {}),
    // A wrong value is said to be in the flag that gave it; reindex's <embedder> is named as such.
    optionSources: { store: '--store', embedder: embedder ? '<embedder>' : '--embedder' },
    // Not memloom's warnings on stderr: the commands that read say themselves which files of the store they could
    // not read, for their scope (see READS in commands/shared.ts), and a write into such a file fails.
    logger: {},
  });
  // With --json, stderr holds the JSON error and nothing else: no progress, no notes.
  const quiet = globals.quiet || globals.json;
  return {
    io,
    positionals,
    values,
    globals,
    print: (text = '') => void io.stdout.write(`${text}\n`),
    printJson: (value) => void io.stdout.write(`${JSON.stringify(value, null, 2)}\n`),
    note: (text) => {
      if (!quiet) io.stderr.write(`${text}\n`);
    },
    openMemory: async ({ embedder, mustExist = false } = {}) => {
      const options = memloomOptions(embedder);
      // Resolved once, for the command and for createMemory: a memloom.config.ts is loaded once.
      const resolved = await resolveMemloomConfig(options);
      if (!mustExist) return { memory: await createMemory(options, resolved), resolved };
      // A configured store that does not exist is MISSING_RESOURCE from the store itself, at first use.
      const memory = await createMemory({ ...options, mustExist: true }, resolved);
      if (!resolved.defaultStore) return { memory, resolved };
      // Nothing configured: the default store, not made yet, reads as an empty one (and is not made now).
      // Asked of the store, not the memory: that would open it for the embedder, which reindex must not
      // do (the store holds another embedder's vectors then), and which every other command does itself.
      try {
        await memory.store.count({});
        return { memory, resolved };
      } catch (error) {
        await memory.close().catch(() => undefined);
        if (!MemloomError.hasCode(error, 'MISSING_RESOURCE') || error.details.mustExist !== true) throw error;
        // An empty SQLite store in process memory in its place, with the configured embedder and engine: a store
        // object given to createMemory is used whatever the configuration says, which is then not read again.
        // Imported here only: a command on another store never loads SQLite's native module.
        const { createSqliteStore } = await import('@memloom/store-sqlite');
        const empty = createSqliteStore({ path: ':memory:' });
        return { memory: await createMemory({ ...options, store: empty }, resolved), resolved, missingStore: String(error.details.path) };
      }
    },
    progress: (label) => new Progress(io.stderr, label, !quiet),
    bold: out.bold,
    dim: out.dim,
  };
}

function readGlobals(values: OptionValues): GlobalOptions {
  const text = (name: string) => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
  const scope: GlobalOptions['scope'] = {};
  if (text('user') !== undefined) scope.userId = text('user');
  if (text('agent') !== undefined) scope.agentId = text('agent');
  if (text('session') !== undefined) scope.sessionId = text('session');
  if (values.config !== undefined && values['no-config'] === true) throw new UsageError('--config and --no-config cannot be used together');
  return {
    json: values.json === true,
    verbose: values.verbose === true,
    quiet: values.quiet === true,
    noConfig: values['no-config'] === true,
    scope,
    ...(text('config') !== undefined ? { config: text('config') } : {}),
    ...(text('store') !== undefined ? { store: text('store') } : {}),
    ...(text('embedder') !== undefined ? { embedder: text('embedder') } : {}),
  };
}

function toParseArgs(options: Record<string, OptionSpec>) {
  const config: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }> = {};
  for (const [name, spec] of Object.entries(options)) {
    config[name] = { type: spec.type, ...(spec.short ? { short: spec.short } : {}), ...(spec.multiple ? { multiple: true } : {}) };
  }
  return config;
}

/**
 * `--limit -1` read as `--limit=-1`: parseArgs refuses a value that starts with a dash (it calls it
 * ambiguous, in three lines of its own), so a negative number is handed to the option's own check,
 * which says what the option takes, as for any other wrong number.
 */
function withNegativeValues(args: readonly string[], options: Record<string, OptionSpec>): string[] {
  const longName = (arg: string) =>
    arg.startsWith('--') ? arg.slice(2) : Object.keys(options).find((name) => arg.length === 2 && options[name]!.short === arg.slice(1));
  const result: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!;
    const name = longName(arg);
    const next = args[index + 1];
    if (arg === '--') return [...result, ...args.slice(index)];
    if (name !== undefined && options[name]?.type === 'string' && next !== undefined && /^-\.?\d/.test(next)) {
      result.push(`--${name}=${next}`);
      index++;
    } else {
      result.push(arg);
    }
  }
  return result;
}

/**
 * An option that takes a value, given an empty one (`--store ""`), is refused: read as not given, it
 * would silently fall back to the configured or default value. One that takes one value, given twice
 * (`--category a --category b`), is refused: parseArgs would keep the last one without a word.
 * Repeatable options (`--tag`) may be given twice; switches are not concerned.
 */
function assertOptionValues(tokens: ReturnType<typeof parseArgs>['tokens'], options: Record<string, OptionSpec>): void {
  const seen = new Map<string, string | undefined>();
  for (const token of tokens ?? []) {
    if (token.kind !== 'option' || options[token.name]?.type !== 'string') continue;
    if (token.value === '') throw new UsageError(`--${token.name} was given an empty value: give it one, or leave the option out`);
    if (options[token.name]?.multiple) continue;
    if (seen.has(token.name)) {
      throw new UsageError(`--${token.name} was given twice ("${seen.get(token.name)}", then "${token.value}"): it takes one value`);
    }
    seen.set(token.name, token.value);
  }
}

function cleanParseError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  // Node appends advice about "--" that reads oddly here; keep the first sentence.
  return message.split('. To specify')[0]!.replace(/\.$/, '');
}

function usageFailure(io: CliIo, error: UsageError, json: boolean): ExitCode {
  if (json) {
    // As given (JSON escapes what would break a line); a script reads it, not a terminal.
    io.stderr.write(`${JSON.stringify({ error: { code: 'USAGE', message: error.message, exitCode: EXIT_CODES.USAGE } })}\n`);
  } else {
    const where = error.command ? `memloom ${error.command}` : 'memloom';
    // The message may quote an argument (an unknown command, a bad value): shown as text, on one line.
    io.stderr.write(`${where}: ${oneLine(error.message)}\nRun "${where} --help" for usage.\n`);
  }
  return EXIT_CODES.USAGE;
}

function reportFailure(io: CliIo, command: CommandSpec, globals: GlobalOptions, error: unknown): ExitCode {
  // An interruption exits with its signal's code, as the process does when it is ended (bin.ts aborts with a StopSignal naming it).
  const byCode = exitCodeFor(error);
  const interrupted = byCode === EXIT_CODES.INTERRUPTED;
  const stop = io.signal?.reason instanceof StopSignal ? io.signal.reason : undefined;
  const exitCode = interrupted && stop ? SIGNAL_EXIT_CODES[stop.signal] : byCode;
  if (error instanceof UsageError) return usageFailure(io, new UsageError(error.message, error.command ?? command.name), globals.json);
  const memloomError = MemloomError.isInstance(error) ? error : undefined;
  const message = error instanceof Error ? error.message : String(error);
  if (globals.json) {
    // Only the JSON on stderr, so that a script can parse all of it; --verbose adds the stack trace in it.
    const code = memloomError?.code ?? (interrupted ? 'INTERRUPTED' : 'ERROR');
    const stack = globals.verbose ? { stack: stackTrace(error) } : {};
    io.stderr.write(`${JSON.stringify({ error: { code, message, exitCode, ...(memloomError ? { details: memloomError.details } : {}), ...stack } })}\n`);
    return exitCode;
  }
  // A file the system refused (EACCES, ENOENT, ENOSPC…) is said as it is, not as a bug to report.
  const expected = memloomError || interrupted || isSystemError(error);
  // An error may name what a store or a file holds (an id from an export): shown as stored text is.
  io.stderr.write(`${expected ? 'memloom' : 'memloom: unexpected error'}: ${withoutControls(message.replace(/^\[memloom\] /, ''))}\n`);
  const hint = memloomError ? hintFor(memloomError) : undefined;
  if (hint) io.stderr.write(`${hint}\n`);
  if (globals.verbose) {
    io.stderr.write(stackTrace(error));
  } else if (!expected) {
    io.stderr.write('Run again with --verbose for the stack trace.\n');
  }
  return exitCode;
}

/**
 * The files a read command's store cannot read (see unreadableFiles in commands/shared.ts), one line each
 * (`file:line: what to do`), the first UNREADABLE_SHOWN of them; undefined for a STORE_CORRUPT without them.
 */
function unreadableLines(error: MemloomError): string | undefined {
  const problems = (error.details as { problems?: { file: string; line: number; message: string }[] }).problems;
  if (!Array.isArray(problems)) return undefined;
  const lines = problems.slice(0, UNREADABLE_SHOWN).map(({ file, line, message }) => `  ${oneLine(`${file}:${line}: ${message}`)}`);
  if (problems.length > UNREADABLE_SHOWN) lines.push(`  … and ${problems.length - UNREADABLE_SHOWN} more`);
  return lines.join('\n');
}

/** An error from a system call (a file that cannot be opened, written or read), which names its code and path; or one saying where it met one. */
function isSystemError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code, syscall } = error as NodeJS.ErrnoException;
  return (typeof code === 'string' && typeof syscall === 'string') || isSystemError(error.cause);
}

/** The stack trace of an error and of its causes (five deep). */
function stackTrace(error: unknown): string {
  let text = '';
  let current: unknown = error;
  for (let depth = 0; current && depth < 5; depth++) {
    if (current instanceof Error && current.stack) text += `${depth === 0 ? '' : 'caused by: '}${current.stack}\n`;
    current = current instanceof Error ? current.cause : undefined;
  }
  return text;
}

function hintFor(error: MemloomError): string | undefined {
  switch (error.code) {
    case 'EMBEDDER_MISMATCH':
    case 'DIMENSION_MISMATCH':
      // A Markdown store cannot re-index in place (reindex exits 4): it re-embeds from its files instead.
      return error.backend === 'markdown'
        ? 'The store holds vectors from another embedder: configure that embedder again, or delete the store\'s .memloom/store.json to embed every memory again from the Markdown with this one.'
        : 'The store holds vectors from another embedder: configure that embedder again, or move the store to this one with "memloom reindex <embedder>".';
    case 'NOT_FOUND':
      return '"memloom list" shows the memories and their ids (add --user/--agent/--session for a scope).';
    case 'MISSING_RESOURCE':
      // A store opened by a command that only reads: say where it was looked for and how to make it.
      if (error.details.mustExist !== true) return undefined;
      return error.backend === 'qdrant'
        ? 'Commands that only read never create a store. If the collection and the URL are right, "memloom add", "memloom import" or "memloom init" creates the collection; otherwise check --store, MEMLOOM_STORE, QDRANT_URL, MEMLOOM_QDRANT_COLLECTION and the configuration file.'
        : 'Commands that only read never create a store. If the path is right, "memloom add", "memloom import" or "memloom init" creates it; otherwise check --store, MEMLOOM_STORE, MEMLOOM_SQLITE_PATH and the configuration file.';
    case 'STORE_CORRUPT':
      return unreadableLines(error);
    case 'CONFLICT':
      // An import's conflict says itself what to do (--on-conflict); running it again would meet it again.
      return error.backend === 'cli' ? undefined : 'Someone changed the memory meanwhile; run the command again.';
    default:
      return undefined;
  }
}
