import { MemloomError, type MemloomErrorCode } from '@memloom/core';

/** What `memloom` exits with. Scripts may branch on these; they never change meaning. */
export const EXIT_CODES = {
  /** The command did what it was asked. */
  OK: 0,
  /** It failed while running: the store, the embedder, a file, or a bug. */
  ERROR: 1,
  /** The command line or the input is wrong: unknown command or option, missing argument, invalid value or content. */
  USAGE: 2,
  /** No memory with that id (in the given scope), or no such version. */
  NOT_FOUND: 3,
  /** The configuration cannot be used: invalid file or variable, store package not installed, a configured store that does not exist (for a command that only reads), store built by another embedder, store lacks the feature. */
  CONFIG: 4,
  /** Someone else changed a memory meanwhile, or an import met a memory that differs from the file's. */
  CONFLICT: 5,
  /** Stopped by Ctrl-C (SIGINT); import and reindex resume when run again. */
  INTERRUPTED: 130,
  /** Stopped by SIGTERM, as by Ctrl-C; ended after `TERM_GRACE_MS` if the command had not stopped by then. */
  TERMINATED: 143,
} as const;

/** The exit code of a command stopped by each signal, as shells report them (128 + the signal's number). */
export const SIGNAL_EXIT_CODES = { SIGINT: EXIT_CODES.INTERRUPTED, SIGTERM: EXIT_CODES.TERMINATED } as const;

/** How long a command may take to stop between steps after SIGTERM before the process ends anyway. */
export const TERM_GRACE_MS = 5000;
export type ExitCode = (typeof EXIT_CODES)[keyof typeof EXIT_CODES];

const BY_ERROR_CODE: Partial<Record<MemloomErrorCode, ExitCode>> = {
  INVALID_OPTIONS: EXIT_CODES.USAGE,
  INVALID_INPUT: EXIT_CODES.USAGE,
  EMPTY_CONTENT: EXIT_CODES.USAGE,
  CONTENT_TOO_LONG: EXIT_CODES.USAGE,
  INVALID_SCOPE: EXIT_CODES.USAGE,
  NOT_FOUND: EXIT_CODES.NOT_FOUND,
  VERSION_NOT_FOUND: EXIT_CODES.NOT_FOUND,
  INVALID_CONFIG: EXIT_CODES.CONFIG,
  MISSING_RESOURCE: EXIT_CODES.CONFIG,
  EMBEDDER_MISMATCH: EXIT_CODES.CONFIG,
  DIMENSION_MISMATCH: EXIT_CODES.CONFIG,
  NOT_SUPPORTED: EXIT_CODES.CONFIG,
  SCHEMA_TOO_NEW: EXIT_CODES.CONFIG,
  CONFLICT: EXIT_CODES.CONFLICT,
};

/** The exit code for a failure: by MemloomError code, 1 for anything else. */
export function exitCodeFor(error: unknown): ExitCode {
  if (error instanceof UsageError) return EXIT_CODES.USAGE;
  if (error instanceof InterruptedError) return EXIT_CODES.INTERRUPTED;
  if (MemloomError.isInstance(error)) return BY_ERROR_CODE[error.code] ?? EXIT_CODES.ERROR;
  return EXIT_CODES.ERROR;
}

/** A mistake on the command line; the message says what to type instead. */
export class UsageError extends Error {
  constructor(
    message: string,
    /** The command whose usage to point at. */
    readonly command?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The reason the CLI's interrupt signal is aborted with: which signal stopped the command. */
export class StopSignal extends Error {
  constructor(readonly signal: keyof typeof SIGNAL_EXIT_CODES) {
    super(`stopped by ${signal}`);
    this.name = 'StopSignal';
  }
}

/** Ctrl-C during a long command; the message says how far it got and how to resume. */
export class InterruptedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InterruptedError';
  }
}
