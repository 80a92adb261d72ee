import type { CommandSpec } from '../command.js';
import { addCommand } from './add.js';
import { addTurnsCommand } from './add-turns.js';
import { exportCommand } from './export.js';
import { forgetCommand } from './forget.js';
import { importCommand } from './import.js';
import { indexCommand, statsCommand } from './info.js';
import { initCommand } from './init.js';
import { maintainCommand } from './maintain.js';
import { historyCommand, listCommand, restoreCommand, searchCommand, showCommand } from './read.js';
import { reindexCommand } from './reindex.js';

/** Every command, in the order `memloom --help` lists them. */
export const COMMANDS: readonly CommandSpec[] = [
  initCommand,
  addCommand,
  addTurnsCommand,
  searchCommand,
  listCommand,
  showCommand,
  historyCommand,
  restoreCommand,
  forgetCommand,
  maintainCommand,
  indexCommand,
  statsCommand,
  exportCommand,
  importCommand,
  reindexCommand,
];

export function findCommand(name: string): CommandSpec | undefined {
  return COMMANDS.find((command) => command.name === name);
}
