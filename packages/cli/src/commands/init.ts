import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIG_FILE_NAMES, createMemory, findConfigFile, validateConfig, type MemloomConfig } from 'memloom';
import { flag, requirePositionals, type CommandSpec } from '../command.js';
import { oneLine } from '../format.js';
import { writeFileAtomically } from './shared.js';
import { UsageError } from '../exit-codes.js';

const DEFAULT_STORE = 'sqlite:./.memloom/memory.db';

export const initCommand: CommandSpec = {
  name: 'init',
  summary: 'write memloom.config.json here and create the store',
  usage: ['init [--store <spec>] [--embedder <spec>] [--user <id>] [--force]'],
  description: [
    'Writes memloom.config.json in the current folder with the store, the embedder and the default',
    'scope you give (SQLite at ./.memloom/memory.db and the offline embedder when you give none). It',
    'opens the store with them first, so that it exists and fits the embedder, and writes the file only',
    'when that worked: a failed init leaves the folder\'s configuration as it was. Every memloom command',
    '(and createMemory() in your code) run in this folder or below then uses it.',
  ].join('\n'),
  options: { force: { type: 'boolean', description: 'overwrite an existing memloom.config.* in this folder' } },
  examples: ['memloom init', 'memloom init --store markdown:./memory --user me', 'memloom init --store qdrant:http://localhost:6333 --force'],
  async run(context) {
    requirePositionals(context, []);
    const { globals, io } = context;
    if (globals.config || globals.noConfig) throw new UsageError('init writes the configuration: --config and --no-config do not apply');
    const existing = CONFIG_FILE_NAMES.map((name) => join(io.cwd, name)).find((path) => existsSync(path));
    if (existing && !flag(context.values, 'force')) throw new UsageError(`${existing} already exists: edit it, or run again with --force to replace it`);
    const file = join(io.cwd, 'memloom.config.json');
    const config: MemloomConfig = {
      store: globals.store ?? DEFAULT_STORE,
      embedder: globals.embedder ?? 'default',
      ...(Object.keys(globals.scope).length > 0 ? { scope: globals.scope } : {}),
    };
    validateConfig(config, 'the command line');
    const parent = findConfigFile(io.cwd);

    // Open the store once, the way every later command will, so it exists and fits the embedder;
    // from the configuration in hand, before anything is written: if the store or the embedder
    // cannot be used, the folder keeps the configuration it had (or stays without one).
    const memory = await createMemory({
      cwd: io.cwd,
      env: { ...io.env, MEMLOOM_STORE: undefined, MEMLOOM_EMBEDDER: undefined },
      configFile: false,
      store: config.store!,
      embedder: config.embedder!,
      ...(config.scope ? { scope: config.scope } : {}),
      // A store or embedder it cannot use is said to be wrong in the flag that gave it, or in init's default.
      optionSources: {
        store: globals.store ? '--store' : `init's default store (${DEFAULT_STORE})`,
        embedder: globals.embedder ? '--embedder' : "init's default embedder",
      },
    });
    try {
      await memory.count();
    } finally {
      await memory.close();
    }
    await writeFileAtomically(file, `${JSON.stringify(config, null, 2)}\n`);
    if (globals.json) return context.printJson({ file, config });
    context.print(`Wrote ${oneLine(file)}`);
    // As the flags gave them, shown as text (JSON escapes no C1 control or bidi mark).
    context.print(`  store     ${oneLine(String(config.store))}`);
    context.print(`  embedder  ${oneLine(String(config.embedder))}`);
    if (config.scope) context.print(`  scope     ${oneLine(JSON.stringify(config.scope))}`);
    if (parent && parent !== file && parent !== existing) context.note(context.dim(`It takes the place of ${oneLine(parent)} in this folder and below.`));
    if (existing && existing !== file) context.note(context.dim(`${oneLine(existing)} is now ignored: memloom.config.json comes first.`));
    if (String(config.store).includes('.memloom/')) context.note(context.dim('Add .memloom/ to .gitignore if you do not want the store in git.'));
    context.print('');
    context.print('Next: memloom add "something to remember"   then   memloom search "something"');
  },
};

