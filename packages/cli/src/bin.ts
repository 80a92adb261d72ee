#!/usr/bin/env node
import { runCli } from './cli.js';
import { processIo } from './io.js';

// The first Ctrl-C asks the running command to stop between batches (import
// and reindex then say how to resume); a second one ends the process at once.
const interrupt = new AbortController();
process.on('SIGINT', () => {
  if (interrupt.signal.aborted) process.exit(130);
  interrupt.abort();
});

// A reader that stops early (`memloom list --all | head -1`) closes the pipe: later writes fail
// with EPIPE. Nobody reads the rest, so stop quietly and successfully, as other command lines do.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

process.exitCode = await runCli(process.argv.slice(2), processIo(interrupt.signal));
