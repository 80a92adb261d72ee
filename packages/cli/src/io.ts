import { addAbortSignal, type Readable } from 'node:stream';
import { InterruptedError } from './exit-codes.js';

/** Where a command writes: a stream with `write`, and whether a person is watching it. */
export interface OutputStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/** Everything the CLI touches outside itself, so that tests can run it in process. */
export interface CliIo {
  stdout: OutputStream;
  stderr: OutputStream;
  stdin: Readable & { isTTY?: boolean };
  env: Record<string, string | undefined>;
  cwd: string;
  /** Fires when the user asks the command to stop (Ctrl-C). */
  signal?: AbortSignal;
}

/** The real process. */
export function processIo(signal?: AbortSignal): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env, cwd: process.cwd(), ...(signal ? { signal } : {}) };
}

/**
 * One turn of the event loop. With SQLite and an offline embedder a long command need not wait for
 * I/O at all: awaiting this between its steps lets the Ctrl-C (SIGINT) and SIGTERM handlers run.
 */
export function yieldToSignals(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Read all of a stream as UTF-8. When `signal` aborts (Ctrl-C, SIGTERM) the wait ends, the stream is
 * closed and `command` is interrupted having stored nothing: one Ctrl-C stops `memloom add -` typed
 * at a terminal by mistake.
 */
export async function readAll(stream: Readable, command: string, signal?: AbortSignal): Promise<string> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of signal ? addAbortSignal(signal, stream) : stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  } catch (error) {
    if (signal?.aborted) throw new InterruptedError(`${command} interrupted while reading stdin; nothing was stored`);
    throw error;
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Bold and dim only for a terminal that shows them, never for pipes or NO_COLOR. */
export function styles(stream: OutputStream, env: Record<string, string | undefined>) {
  const on = Boolean(stream.isTTY) && !env.NO_COLOR && env.TERM !== 'dumb';
  return {
    bold: (text: string) => (on ? `\u001b[1m${text}\u001b[22m` : text),
    dim: (text: string) => (on ? `\u001b[2m${text}\u001b[22m` : text),
  };
}
