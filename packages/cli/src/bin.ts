#!/usr/bin/env node
import { runCli } from './cli.js';
import { SIGNAL_EXIT_CODES, StopSignal, TERM_GRACE_MS } from './exit-codes.js';
import { processIo } from './io.js';

// The first Ctrl-C (SIGINT) or SIGTERM (timeout, docker stop, systemd) asks the running command to stop
// between batches (import and reindex then say how to resume; export -o leaves no partial file); a second
// one ends the process at once, and so does the end of a grace period after SIGTERM. Exit 130 for SIGINT,
// 143 for SIGTERM, as shells report them.
const interrupt = new AbortController();
const stop = (signal: keyof typeof SIGNAL_EXIT_CODES) => {
  if (interrupt.signal.aborted) process.exit(SIGNAL_EXIT_CODES[signal]);
  // The reason names the signal: an interruption by SIGTERM is reported as exit 143 in --json too.
  interrupt.abort(new StopSignal(signal));
  // A supervisor (timeout, docker stop) sends one SIGTERM: a command waiting on a model, an embedder or a
  // store's server, which never reaches a step where it stops, must still end.
  if (signal === 'SIGTERM') setTimeout(() => process.exit(SIGNAL_EXIT_CODES.SIGTERM), TERM_GRACE_MS).unref();
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);

// A reader that stops early (`memloom list --all | head -1`) closes the pipe: later writes fail
// with EPIPE. Nobody reads the rest, so stop quietly and successfully, as other command lines do.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});
// Stderr holds only progress and notes (`memloom import backup.jsonl 2>&1 | head -1`): when its reader
// stops early they are dropped, and the command goes on to the end and exits with its own code.
process.stderr.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
});

// An interrupted command's code names the signal (130 or 143): runCli reads it from the abort's StopSignal.
process.exitCode = await runCli(process.argv.slice(2), processIo(interrupt.signal));
