import type { CommandSpec, OptionSpec } from './command.js';
import { EXIT_CODES, TERM_GRACE_MS } from './exit-codes.js';

const EXIT_CODE_TEXT: Array<[number, string]> = [
  [EXIT_CODES.OK, 'done'],
  [EXIT_CODES.ERROR, 'failed while running (store, embedder, file, or a bug)'],
  [EXIT_CODES.USAGE, 'wrong command line or input (unknown option, missing argument, invalid value)'],
  [EXIT_CODES.NOT_FOUND, 'no memory with that id in the scope, or no such version'],
  [EXIT_CODES.CONFIG, 'configuration unusable (invalid, package missing, store not found by a read, store built by another embedder, feature not supported)'],
  [EXIT_CODES.CONFLICT, 'a memory changed meanwhile, or an import met a different copy'],
  [EXIT_CODES.INTERRUPTED, 'stopped by Ctrl-C (import and reindex resume when run again)'],
  [EXIT_CODES.TERMINATED, `stopped by SIGTERM (timeout, docker stop), as by Ctrl-C; ended after ${TERM_GRACE_MS / 1000} s if the command had not stopped`],
];

export function mainHelp(commands: readonly CommandSpec[]): string {
  const width = Math.max(...commands.map((command) => command.name.length)) + 2;
  return [
    'memloom: long-term memory for LLM agents, from the command line',
    '',
    'Usage: memloom <command> [arguments] [options]',
    '',
    'Commands:',
    ...commands.map((command) => `  ${command.name.padEnd(width)}${command.summary}`),
    '',
    'Every command takes --user/--agent/--session (scope), --json, --config <file>, --store <spec>,',
    '--embedder <spec>, --quiet, --verbose and --help. Without --store, the store comes from the nearest',
    'memloom.config.json (or .mjs/.js/.ts), then MEMLOOM_STORE, then SQLite at .memloom/memory.db.',
    'Commands that only read (and forget, restore, reindex) never create a store: a configured one that does',
    'not exist is exit 4; the default one not made yet reads as empty.',
    '',
    'Exit codes:',
    ...EXIT_CODE_TEXT.map(([code, text]) => `  ${String(code).padEnd(5)}${text}`),
    '',
    'Run "memloom <command> --help" for a command\'s options and examples.',
    '',
  ].join('\n');
}

export function commandHelp(command: CommandSpec, globals: Record<string, OptionSpec>): string {
  const lines = [
    ...command.usage.map((usage, index) => `${index === 0 ? 'Usage: ' : '       '}memloom ${usage}`),
    '',
    ...command.description.split('\n'),
    '',
  ];
  if (command.options && Object.keys(command.options).length > 0) lines.push('Options:', ...optionLines(command.options), '');
  lines.push('Scope and configuration:', ...optionLines(globals), '');
  lines.push('Examples:', ...command.examples.map((example) => `  ${example}`), '');
  return lines.join('\n');
}

function optionLines(options: Record<string, OptionSpec>): string[] {
  const entries = Object.entries(options).map(([name, spec]) => {
    const short = spec.short ? `-${spec.short}, ` : '';
    return [`${short}--${name}${spec.value ? ` <${spec.value}>` : ''}`, spec.description + (spec.multiple ? ' (repeatable)' : '')] as const;
  });
  const width = Math.max(...entries.map(([left]) => left.length)) + 2;
  return entries.map(([left, right]) => `  ${left.padEnd(width)}${right}`);
}
