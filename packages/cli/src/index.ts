// The memloom CLI, callable in process (tests, other tools): runCli(argv, io) returns the exit code.
export { runCli, cliVersion, GLOBAL_OPTIONS } from './cli.js';
export { EXIT_CODES, exitCodeFor, UsageError, InterruptedError } from './exit-codes.js';
export type { ExitCode } from './exit-codes.js';
export { processIo } from './io.js';
export type { CliIo, OutputStream } from './io.js';
export { COMMANDS } from './commands/index.js';
export type { CommandSpec, CommandContext, OptionSpec, GlobalOptions } from './command.js';
export { EXPORT_FORMAT, parseHeader, parseLine } from './export-format.js';
export type { ExportHeader, ExportLine } from './export-format.js';
export type { ImportCounts } from './import-exact.js';
export { exportMemories, importMemories } from './transfer.js';
export type { ExportOptions, ImportOptions, ImportResult } from './transfer.js';
