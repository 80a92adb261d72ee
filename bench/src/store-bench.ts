/**
 * One backend at one size, in its own process so that peak RSS is its own.
 * Usage: node --import tsx src/store-bench.ts <sqlite|sqlite-vec|sqlite-shuffled|memory|brute> <size>
 * (`sqlite-vec`: the SQLite store with `vectorMirror: false`, searching with sqlite-vec's scan;
 * `sqlite-shuffled`: the SQLite store as shipped, its memories written in no order of age with
 * random version 4 ids, see `WriteOrder`.)
 * Prints one JSON line. `node run.mjs store` runs every combination.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemory, type MemoryStore } from '@memloom/core';
import { createInMemoryStore, seededRandom } from '@memloom/core/testing';
import { createSqliteStore } from '@memloom/store-sqlite';
import Database from 'better-sqlite3';
import { percentiles, type Percentiles } from './bench-report.js';
import { bruteForceTopK } from './brute-force.js';
import { createChange, dataset, DIMENSION, EMBEDDER_ID, lookupEmbedder, NOW_MS, queries, unitVector, userOf, type Query, type WriteOrder } from './store-data.js';

const [backend, sizeText] = process.argv.slice(2);
const size = Number(sizeText);
if (!['sqlite', 'sqlite-vec', 'sqlite-shuffled', 'memory', 'brute'].includes(backend ?? '') || !Number.isInteger(size) || size < 1000) {
  console.error('usage: store-bench.ts <sqlite|sqlite-vec|sqlite-shuffled|memory|brute> <size>');
  process.exit(2);
}

const BATCH = 100;
const FACADE_ADDS = 1000;
/** Query counts: scoped queries are cheap, unscoped ones scan everything. */
const SCOPED_QUERIES = 200;
const UNSCOPED_QUERIES = size >= 100_000 ? 40 : 100;
const AGREEMENT_QUERIES = 10;

const order: WriteOrder = backend === 'sqlite-shuffled' ? 'shuffled' : 'written';
const result: Record<string, unknown> = { backend, size, order, dimension: DIMENSION, vectors: `random unit vectors (seeded), dimension ${DIMENSION} (the default embedder's)` };
const data = dataset(size, 1, order);
const allQueries = queries(Math.max(SCOPED_QUERIES, UNSCOPED_QUERIES));

if (backend === 'brute') {
  runBruteForce();
} else {
  await runStore(backend === 'sqlite-shuffled' ? 'sqlite' : (backend as 'sqlite' | 'sqlite-vec' | 'memory'));
}
result['peakRssMb'] = round(process.resourceUsage().maxRSS / 1024);
process.stdout.write(`${JSON.stringify(result)}\n`);

async function runStore(kind: 'sqlite' | 'sqlite-vec' | 'memory'): Promise<void> {
  const folder = kind === 'memory' ? undefined : mkdtempSync(join(tmpdir(), 'memloom-bench-'));
  const path = folder ? join(folder, 'memory.db') : undefined;
  const store: MemoryStore = path ? createSqliteStore({ path, vectorMirror: kind === 'sqlite' }) : createInMemoryStore();
  try {
    await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });

    // Add throughput, vectors given: store.apply in batches (one transaction each).
    let started = performance.now();
    for (let start = 0; start < size; start += BATCH) {
      await store.apply(data.records.slice(start, start + BATCH).map((memory, offset) => createChange(memory, data.vectors[start + offset]!)));
    }
    const loadMs = performance.now() - started;
    result['addBatchPerSecond'] = Math.round(size / (loadMs / 1000));
    result['loadSeconds'] = round(loadMs / 1000);

    // The first searches after the load: the SQLite store answers the first with sqlite-vec, reads
    // one user's vectors into its in-memory copy at the second (in that user's scope), and every
    // vector at the third (without a user).
    const firstSearches: [string, { userId?: string }][] = [['firstSearchMs', {}], ['userLoadSearchMs', { userId: userOf(0) }], ['allLoadSearchMs', {}]];
    for (const [key, scope] of firstSearches) {
      started = performance.now();
      await store.vectorSearch({ vector: Array.from(allQueries[0]!.vector), limit: 10, scope });
      result[key] = round(performance.now() - started);
    }

    // Exactness check against the brute-force scan, on the loaded data only.
    // Memories are named by their source (`turn-<n>`), the same whichever order they were written in.
    const agreement: string[][] = [];
    for (const query of allQueries.slice(0, AGREEMENT_QUERIES)) {
      agreement.push((await store.vectorSearch({ vector: Array.from(query.vector), limit: 10 })).map((hit) => hit.memory.sources[0]!));
    }
    result['top10'] = agreement;

    const chosen = new Map<string, Float32Array>();
    for (const query of allQueries) chosen.set(query.text, query.vector);
    const next = seededRandom(4242);
    const extra = Array.from({ length: FACADE_ADDS }, (_, index) => ({ text: `a brand new fact number ${index} for the facade`, vector: unitVector(next), userId: userOf(index) }));
    for (const add of extra) chosen.set(add.text, add.vector);
    const memory = createMemory({ store, embedder: lookupEmbedder(chosen), clock: { now: () => NOW_MS } });

    // Add throughput through the facade, one memory at a time (merge-candidate search + one transaction each).
    started = performance.now();
    for (const add of extra) await memory.add(add.text, { scope: { userId: add.userId } });
    result['addFacadePerSecond'] = Math.round(FACADE_ADDS / ((performance.now() - started) / 1000));

    const scoped = allQueries.slice(0, SCOPED_QUERIES);
    result['memoriesAtSearch'] = await store.count({});
    const unscoped = allQueries.slice(0, UNSCOPED_QUERIES);
    const search: Record<string, Percentiles> = {};
    search['vectorScoped'] = await measure(scoped, (query) => store.vectorSearch({ vector: Array.from(query.vector), limit: 50, scope: { userId: query.userId } }));
    search['vectorUnscoped'] = await measure(unscoped, (query) => store.vectorSearch({ vector: Array.from(query.vector), limit: 50 }));
    search['textScoped'] = await measure(scoped, (query) => store.textSearch!({ text: query.text, limit: 50, scope: { userId: query.userId } }));
    search['textUnscoped'] = await measure(unscoped, (query) => store.textSearch!({ text: query.text, limit: 50 }));
    search['hybridScoped'] = await measure(scoped, (query) => memory.search(query.text, { scope: { userId: query.userId } }));
    search['hybridUnscoped'] = await measure(unscoped, (query) => memory.search(query.text));
    result['search'] = search;

    // One maintenance pass over everything, at the data set's "now". Time spent inside the store's
    // methods is counted apart, so the rest is core's own work (planning, compressing text, versions).
    const inStore = timeStoreCalls(store, ['count', 'list', 'listPage', 'apply']);
    started = performance.now();
    const report = await memory.maintain({ now: NOW_MS });
    const maintenanceMs = performance.now() - started;
    inStore.stop();
    result['maintenance'] = {
      seconds: round(maintenanceMs / 1000),
      storeSeconds: Object.fromEntries(Object.entries(inStore.ms).map(([name, ms]) => [name, round(ms / 1000)])),
      coreSeconds: round((maintenanceMs - Object.values(inStore.ms).reduce((sum, ms) => sum + ms, 0)) / 1000),
      scanned: report.scanned,
      compressed: report.compressed,
      decayed: report.decayed,
      deleted: report.deleted,
      unchanged: report.unchanged,
    };
    await store.close();
    if (path) {
      const bytes = ['', '-wal', '-shm'].reduce((total, suffix) => total + fileSize(path + suffix), 0);
      result['fileMb'] = round(bytes / 1024 / 1024);
      result['fileMbByTable'] = fileBreakdown(path);
    }
  } finally {
    if (folder) rmSync(folder, { recursive: true, force: true });
  }
}

function runBruteForce(): void {
  const flat = new Float32Array(size * DIMENSION);
  data.vectors.forEach((vector, index) => flat.set(vector, index * DIMENSION));
  const byUser = new Map<string, number[]>();
  data.records.forEach((record, index) => {
    const list = byUser.get(record.scope.userId!) ?? [];
    list.push(index);
    byUser.set(record.scope.userId!, list);
  });
  const all = Array.from({ length: size }, (_, index) => index);
  const search: Record<string, Percentiles> = {};
  search['vectorScoped'] = measureSync(allQueries.slice(0, SCOPED_QUERIES), (query) => bruteForceTopK(flat, query.vector, byUser.get(query.userId)!, 50));
  search['vectorUnscoped'] = measureSync(allQueries.slice(0, UNSCOPED_QUERIES), (query) => bruteForceTopK(flat, query.vector, all, 50));
  result['search'] = search;
  result['top10'] = allQueries.slice(0, AGREEMENT_QUERIES).map((query) => bruteForceTopK(flat, query.vector, all, 10).map((index) => data.records[index]!.sources[0]!));
}

async function measure(list: Query[], task: (query: Query) => Promise<unknown>): Promise<Percentiles> {
  for (const query of list.slice(0, 3)) await task(query);
  const times: number[] = [];
  for (const query of list) {
    const started = performance.now();
    await task(query);
    times.push(performance.now() - started);
  }
  return percentiles(times);
}

function measureSync(list: Query[], task: (query: Query) => unknown): Percentiles {
  for (const query of list.slice(0, 3)) task(query);
  const times = list.map((query) => {
    const started = performance.now();
    task(query);
    return performance.now() - started;
  });
  return percentiles(times);
}

/** Wrap store methods to add up the time spent inside them; `stop` puts the originals back. */
function timeStoreCalls(store: MemoryStore, names: ('count' | 'list' | 'listPage' | 'apply')[]) {
  const ms: Record<string, number> = {};
  // A method the store lacks (listPage is optional) stays absent.
  const originals = names.filter((name) => typeof store[name] === 'function').map((name) => [name, store[name]] as const);
  for (const [name, original] of originals) {
    ms[name] = 0;
    (store as unknown as Record<string, unknown>)[name] = async (...args: unknown[]) => {
      const started = performance.now();
      try {
        return await (original as (...args: unknown[]) => Promise<unknown>).apply(store, args);
      } finally {
        ms[name]! += performance.now() - started;
      }
    };
  }
  return {
    ms,
    stop: () => {
      for (const [name, original] of originals) (store as unknown as Record<string, unknown>)[name] = original;
    },
  };
}

/** Megabytes per table and index (sqlite-vec's and FTS5's shadow tables grouped under their table), free pages apart. */
function fileBreakdown(path: string): Record<string, number> {
  const database = new Database(path, { readonly: true });
  try {
    const rows = database.prepare('SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name').all() as { name: string; bytes: number }[];
    const groups: Record<string, number> = {};
    for (const row of rows) {
      const group = /^memory_vectors_\d+/.exec(row.name)?.[0] ?? (row.name.startsWith('memory_text') ? 'memory_text (FTS5)' : row.name);
      groups[group] = (groups[group] ?? 0) + row.bytes;
    }
    const pageSize = database.pragma('page_size', { simple: true }) as number;
    groups['(free pages)'] = (database.pragma('freelist_count', { simple: true }) as number) * pageSize;
    return Object.fromEntries(
      Object.entries(groups)
        .filter(([, bytes]) => bytes >= 512 * 1024)
        .sort((a, b) => b[1] - a[1])
        .map(([name, bytes]) => [name, round(bytes / 1024 / 1024)]),
    );
  } finally {
    database.close();
  }
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
