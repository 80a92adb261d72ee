import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
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
export async function run(cwd: string, args: string[], options: { env?: Record<string, string | undefined>; stdin?: string; tty?: boolean; signal?: AbortSignal } = {}): Promise<RunResult> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    cwd,
    env: { MEMLOOM_EMBEDDER: 'lexical', ...options.env },
    stdin: Readable.from(options.stdin === undefined ? [] : [options.stdin]),
    stdout: { write: (text: string) => void (stdout += text), isTTY: options.tty ?? false, columns: 100 },
    stderr: { write: (text: string) => void (stderr += text), isTTY: options.tty ?? false },
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

export const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'bin.js');

/** Run the built `memloom` binary as a child process. */
export function runBin(cwd: string, args: string[], env: Record<string, string | undefined> = {}, stdin?: string): Promise<RunResult> {
  return new Promise((resolvePromise) => {
    const child = execFile(
      process.execPath,
      [BIN, ...args],
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
