import { existsSync, statSync } from 'node:fs';
import { MEMORY_CATEGORIES, MEMORY_LEVELS, MEMORY_TYPES, type ResolvedConfig, type Scope } from 'memloom';
import { describeScope, numberOption, requirePositionals, type CommandSpec, type OpenedMemory } from '../command.js';
import { oneLine } from '../format.js';
import { effectiveScope, FILTER_OPTIONS, filterFrom, READS, scopeOption, withMemory } from './shared.js';

export const indexCommand: CommandSpec = {
  name: 'index',
  summary: 'print the MEMORY.md index (with freshness notes when configured)',
  usage: ['index [options]'],
  description: 'The index an agent gets in its prompt when there is no query: the most recently updated memories, grouped by category, each with seed 000\'s "last updated N days ago" note when it is stale and the configuration sets "freshness" (off without it; "freshness": {} for the 24 h default).',
  options: {
    limit: { type: 'string', short: 'n', value: 'n', description: 'most memories read (default 1000)' },
    ...FILTER_OPTIONS,
  },
  examples: ['memloom index --user alice', 'memloom index --user alice > MEMORY.md'],
  async run(context) {
    requirePositionals(context, []);
    const limit = numberOption(context.values, 'limit', { min: 1, integer: true });
    const filter = filterFrom(context.values);
    await withMemory(context, async ({ memory }) => {
      const index = await memory.renderIndex({ ...scopeOption(context), ...(limit ? { limit } : {}), ...(filter ? { filter } : {}) });
      if (context.globals.json) return context.printJson({ index });
      context.io.stdout.write(index.endsWith('\n') ? index : `${index}\n`);
    }, READS);
  },
};

export const statsCommand: CommandSpec = {
  name: 'stats',
  summary: 'which store and embedder are configured, from where, and what they hold',
  usage: ['stats [options]'],
  description: 'Shows the store (and where it is), the embedder, the configuration source of each, and counts by level, category and type in the scope (--user/--agent/--session over the configured default scope).',
  examples: ['memloom stats', 'memloom stats --user alice --json', 'MEMLOOM_STORE=markdown:./notes memloom stats'],
  async run(context) {
    requirePositionals(context, []);
    await withMemory(context, async (opened) => {
      // The scope the counts are of: the configured default one too (core fills it in), as the listing and the export see it.
      const stats = await collectStats(opened, effectiveScope(context, opened));
      if (context.globals.json) return context.printJson(stats);
      const { bold } = context;
      // Paths, sources, ids and scope ids come from flags, variables and files: shown as text, on one line each.
      const { store, embedder } = stats;
      context.print(`${bold('store')}      ${oneLine(store.name)}${store.location ? ` at ${oneLine(store.location)}` : ''}${store.bytes !== undefined ? ` (${formatBytes(store.bytes)})` : ''}`);
      context.print(`           from ${oneLine(store.source)}`);
      if (stats.store.exists === false) {
        context.print('           not made yet: nothing is stored ("memloom add", "memloom import" or "memloom init" creates it)');
      } else {
        context.print(`           ${Object.entries(stats.store.capabilities).map(([name, on]) => `${name} ${on ? 'yes' : 'no'}`).join(', ')}`);
      }
      context.print(`${bold('embedder')}   ${oneLine(embedder.id)} (${embedder.dimension} dimensions)`);
      context.print(`           from ${oneLine(embedder.source)}`);
      context.print(`${bold('config')}     ${stats.configFile ? oneLine(stats.configFile) : 'no configuration file'}`);
      context.print(`${bold('memories')}   ${stats.total}${Object.keys(stats.scope).length > 0 ? ` in scope ${oneLine(describeScope(stats.scope))}` : ''}`);
      if (stats.total === 0) return;
      context.print(`  by level     ${pairs(stats.byLevel)}`);
      context.print(`  by category  ${pairs(stats.byCategory)}`);
      context.print(`  by type      ${pairs(stats.byType)}`);
      if (stats.oldestUpdate) context.print(`  updated      ${stats.oldestUpdate.slice(0, 10)} .. ${stats.newestUpdate?.slice(0, 10)}`);
    }, READS);
  },
};

export interface Stats {
  /** `exists: false` (and no capabilities) when nothing is configured and the default store has not been made yet. */
  store: { name: string; location?: string; bytes?: number; exists?: false; source: string; capabilities: Record<string, boolean> };
  embedder: { id: string; dimension: number; source: string };
  configFile?: string;
  scope: Scope;
  total: number;
  byLevel: Record<string, number>;
  byCategory: Record<string, number>;
  byType: Record<string, number>;
  oldestUpdate?: string;
  newestUpdate?: string;
}

async function collectStats({ memory, resolved, missingStore }: OpenedMemory, scope: Scope): Promise<Stats> {
  const scoped = Object.keys(scope).length > 0 ? { scope } : {};
  const countBy = async <T extends string>(field: 'level' | 'category' | 'type', names: readonly T[]) => {
    const counts: Record<string, number> = {};
    for (const name of names) {
      const count = await memory.count({ ...scoped, filter: { [field]: name } });
      if (count > 0) counts[name] = count;
    }
    return counts;
  };
  const [oldest] = await memory.list({ ...scoped, orderBy: 'updatedAt', direction: 'asc', limit: 1 });
  const [newest] = await memory.list({ ...scoped, orderBy: 'updatedAt', direction: 'desc', limit: 1 });
  const location = storeLocation(resolved);
  return {
    store: {
      name: memory.store.name,
      ...location,
      // The memory read is an empty one in process: its capabilities are not the store's.
      ...(missingStore ? { location: missingStore, exists: false as const } : {}),
      source: resolved.store.source,
      capabilities: missingStore ? {} : { ...memory.store.capabilities },
    },
    embedder: { id: memory.embedder.id, dimension: memory.embedder.dimension, source: resolved.embedder.source },
    ...(resolved.configFile ? { configFile: resolved.configFile } : {}),
    scope,
    total: await memory.count(scoped),
    byLevel: await countBy('level', MEMORY_LEVELS),
    byCategory: await countBy('category', MEMORY_CATEGORIES),
    byType: await countBy('type', MEMORY_TYPES),
    ...(oldest ? { oldestUpdate: oldest.updatedAt } : {}),
    ...(newest ? { newestUpdate: newest.updatedAt } : {}),
  };
}

/** Where the configured store keeps its data, as far as the configuration says. */
function storeLocation(resolved: ResolvedConfig): { location?: string; bytes?: number } {
  // A SQLite file, wherever its path came from (configuration, MEMLOOM_SQLITE_PATH or the default).
  if (resolved.sqliteFile) {
    const { path } = resolved.sqliteFile;
    return { location: path, ...(existsSync(path) ? { bytes: statSync(path).size } : {}) };
  }
  if (resolved.markdownRoot) return { location: resolved.markdownRoot };
  const parsed = resolved.store.parsed;
  return parsed?.type === 'qdrant' ? { location: parsed.url ?? '(the Qdrant default: QDRANT_URL or localhost)' } : {};
}

function pairs(counts: Record<string, number>): string {
  return Object.entries(counts).map(([name, count]) => `${name} ${count}`).join(', ') || '-';
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
