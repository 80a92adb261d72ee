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

process.exitCode = await runCli(process.argv.slice(2), processIo(interrupt.signal));
