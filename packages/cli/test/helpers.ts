import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { createRecord } from '@memloom/core/testing';
import { runCli } from '../src/index.js';

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A folder of its own for one test, removed by `cleanup`. */
export function tempFolder(prefix = 'memloom-cli-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Run the CLI in process, with an environment of our own (no MEMLOOM_* from
 * the machine) and a fast deterministic embedder unless the test sets one.
 */
export async function run(
  cwd: string,
  args: string[],
  options: { env?: Record<string, string | undefined>; stdin?: string | Readable; tty?: boolean; signal?: AbortSignal; onStderr?: (text: string) => void } = {},
): Promise<RunResult> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    cwd,
    env: { MEMLOOM_EMBEDDER: 'lexical', ...options.env },
    stdin: options.stdin instanceof Readable ? options.stdin : Readable.from(options.stdin === undefined ? [] : [options.stdin]),
    stdout: { write: (text: string) => void (stdout += text), isTTY: options.tty ?? false, columns: 100 },
    stderr: {
      write: (text: string) => {
        stderr += text;
        options.onStderr?.(text);
      },
      isTTY: options.tty ?? false,
    },
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return { code, stdout, stderr };
}

/** Parse stdout of a --json run (failing the test with stderr when it is not JSON). */
export function json<T = any>(result: RunResult): T {
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${result.code}):\n${result.stdout}\n--- stderr ---\n${result.stderr}`);
  }
}

/**
 * The memories `memloom list --all --json` reads from the SQLite file `file` in `dir` (`args` added),
 * or none when the file was never made: a command that only reads makes no store (it exits 4).
 */
export async function storedIn(dir: string, file: string, args: string[] = []): Promise<any[]> {
  if (!existsSync(join(dir, file))) return [];
  return json(await run(dir, ['list', '--all', '--no-config', '--store', `sqlite:./${file}`, '--json', ...args]));
}

export const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'bin.js');

/** Run the built `memloom` binary as a child process (after the command prefix `as`, such as `unprivileged()`). */
export function runBin(cwd: string, args: string[], env: Record<string, string | undefined> = {}, stdin?: string, as: readonly string[] = []): Promise<RunResult> {
  const [command, ...rest] = [...as, process.execPath, BIN, ...args];
  return new Promise((resolvePromise) => {
    const child = execFile(
      command!,
      rest,
      { cwd, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolvePromise({ code, stdout, stderr });
      },
    );
    if (stdin !== undefined) child.stdin?.end(stdin);
    else child.stdin?.end();
  });
}

/**
 * The command prefix that runs the binary as a user file permissions bind (`runBin`'s `as`): none for a
 * user other than root; for root, which they do not bind, setpriv as nobody (uid and gid 65534).
 * Undefined when that cannot be done (root without setpriv, or a checkout nobody may read): the test is skipped.
 */
export function unprivileged(): string[] | undefined {
  if (process.getuid?.() !== 0) return [];
  const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => existsSync(path));
  const as = setpriv ? [setpriv, '--reuid=65534', '--regid=65534', '--clear-groups'] : undefined;
  // nobody must be able to read this checkout (not so under a private home folder).
  const readable = as && spawnSync(as[0]!, [...as.slice(1), process.execPath, '-e', `const fs = require('node:fs'); fs.accessSync(${JSON.stringify(BIN)}, fs.constants.R_OK)`]).status === 0;
  return readable ? as : undefined;
}

/**
 * A memloom export of `count` memories (one version each, no vectors), as `memloom export` writes
 * it: a quick way to fill a store with many memories (`memloom import`) or to make a broken file.
 */
export function syntheticExport(count: number, scope: Record<string, string> = { userId: 'alice' }): { header: string; lines: string[]; text: string } {
  const start = Date.parse('2024-01-01T00:00:00.000Z');
  const lines = Array.from({ length: count }, (_, index) => {
    const at = new Date(start + index * 60_000).toISOString();
    const record = createRecord(
      { id: `00000000-0000-7000-8000-${String(index).padStart(12, '0')}`, content: `Note number ${index} about topic ${index % 17} and place ${index % 5}`, scope, atIso: at, verified: false },
      { importance: 1, category: 'fact', type: 'user' },
    );
    const version = { memoryId: record.id, version: 1, at, trigger: 'user_mention', action: 'create', reason: 'new', before: null, after: record };
    return JSON.stringify({ memory: record, versions: [version] });
  });
  const header = JSON.stringify({
    memloom: 'export',
    format: 1,
    exportedAt: '2024-06-01T00:00:00.000Z',
    store: 'sqlite',
    embedder: { id: 'test/none', dimension: 8 },
    scope: {},
    count,
    vectors: false,
  });
  return { header, lines, text: `${[header, ...lines].join('\n')}\n` };
}
