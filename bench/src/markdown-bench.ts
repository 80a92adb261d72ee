/**
 * Markdown store benchmark: add throughput, search latency, cold open with
 * and without the derived index, full rebuild. Not a test: it prints a
 * table and writes JSON to bench/results/.
 *
 *   pnpm bench markdown [--sizes 1000,10000] [--queries 200] [--single 100] [--embedder default|test]
 *
 * Vectors come from the default offline embedder's vector space without its
 * cache (`createOfflineEmbedder()`), so every rebuild embeds every text again;
 * `--embedder test` uses core's test embedder (384 dimensions, a hashed bag
 * of words) to see the store's own share alone.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { MemoryChange } from '@memloom/core';
import { createTestEmbedder } from '@memloom/core/testing';
import { createOfflineEmbedder } from '@memloom/embeddings';
import { createMarkdownStore, type MarkdownStore } from '@memloom/store-markdown';
import { describeGit, packageFacts, percentiles, startRun, writeResults } from './bench-report.js';
import { benchRecord, createChange } from './store-data.js';

const BATCH = 500;
const scope = { userId: 'alice' };

const args = parseArgs(process.argv.slice(2));
const sizes = (args.sizes ?? '1000,10000').split(',').map(Number);
const queryCount = Number(args.queries ?? 200);
const singleCount = Number(args.single ?? 100);
const embedderName = args.embedder ?? 'default';
if (embedderName !== 'default' && embedderName !== 'test') throw new Error('--embedder must be default or test');
const embedder = embedderName === 'test' ? createTestEmbedder({ dimension: 384, id: 'memloom/test-embedder-384' }) : createOfflineEmbedder();
const DIMENSION = embedder.dimension;

interface SizeResult {
  size: number;
  bulkAddPerSecond: number;
  singleAddPerSecond: number;
  singleAddMs: Stats;
  vectorSearchMs: Stats;
  textSearchMs: Stats;
  coldOpenIndexPresentMs: Stats;
  coldOpenIndexMissingMs: Stats;
  rebuildIndexMs: Stats;
  memoryFileBytes: number;
}

interface Stats {
  p50: number;
  p95: number;
  runs: number;
}


async function benchSize(size: number): Promise<SizeResult> {
  const root = await mkdtemp(path.join(os.tmpdir(), `memloom-md-bench-${size}-`));
  try {
    const texts = Array.from({ length: size + singleCount }, (_, index) => sentence(index));
    const vectors = await embedder.embed(texts);
    const open = async (store: MarkdownStore) => {
      await store.open({ dimension: DIMENSION, embedderId: embedder.id });
      return store;
    };

    // Bulk import: apply in batches of BATCH (one Markdown rewrite per batch).
    const store = await open(createMarkdownStore({ root, embedder }));
    let started = performance.now();
    for (let start = 0; start < size; start += BATCH) {
      const changes: MemoryChange[] = [];
      for (let index = start; index < Math.min(size, start + BATCH); index++) changes.push(create(index, texts[index]!, vectors[index]!));
      await store.apply(changes);
    }
    const bulkSeconds = (performance.now() - started) / 1000;

    // Single adds at this size: one apply per memory, as the Memory facade does.
    const singleTimes: number[] = [];
    for (let index = size; index < size + singleCount; index++) {
      const begin = performance.now();
      await store.apply([create(index, texts[index]!, vectors[index]!)]);
      singleTimes.push(performance.now() - begin);
    }

    // Search with the index warm (the default checks the files before each read).
    const queries = Array.from({ length: queryCount }, (_, index) => sentence(size * 7 + index * 13, 6));
    const queryVectors = await embedder.embed(queries, { purpose: 'query' });
    for (let index = 0; index < 10; index++) await store.vectorSearch({ vector: queryVectors[index]!, scope, limit: 10 });
    const vectorTimes: number[] = [];
    for (const vector of queryVectors) {
      const begin = performance.now();
      await store.vectorSearch({ vector, scope, limit: 10 });
      vectorTimes.push(performance.now() - begin);
    }
    const textTimes: number[] = [];
    for (const query of queries) {
      const begin = performance.now();
      await store.textSearch({ text: query, scope, limit: 10 });
      textTimes.push(performance.now() - begin);
    }
    await store.close();
    const memoryFileBytes = (await stat(path.join(root, 'users', 'alice', 'memory', 'MEMORY.md'))).size;

    // Cold open with the index present: a new store, open, first read.
    const coldPresent: number[] = [];
    for (let run = 0; run < 3; run++) {
      const begin = performance.now();
      const cold = await open(createMarkdownStore({ root }));
      await cold.count({});
      coldPresent.push(performance.now() - begin);
      await cold.close();
    }

    // Cold open with the index missing: the vectors are rebuilt from the Markdown by the embedder.
    const coldMissing: number[] = [];
    for (let run = 0; run < 3; run++) {
      await rm(path.join(root, 'users', 'alice', 'memory', '.index'), { recursive: true, force: true });
      const begin = performance.now();
      const cold = await open(createMarkdownStore({ root, embedder }));
      await cold.count({});
      coldMissing.push(performance.now() - begin);
      const sample = await cold.getVector(id(0));
      if (!sample) throw new Error('rebuild left memories without vectors');
      await cold.close();
    }

    // rebuildIndex on an open store: re-embed everything and rewrite the vector logs.
    const rebuilds: number[] = [];
    const warm = await open(createMarkdownStore({ root, embedder }));
    await warm.count({});
    for (let run = 0; run < 3; run++) {
      const begin = performance.now();
      await warm.rebuildIndex();
      rebuilds.push(performance.now() - begin);
    }
    await warm.close();

    const singleSeconds = singleTimes.reduce((sum, value) => sum + value, 0) / 1000;
    return {
      size,
      bulkAddPerSecond: Math.round(size / bulkSeconds),
      singleAddPerSecond: Math.round(singleCount / singleSeconds),
      singleAddMs: stats(singleTimes),
      vectorSearchMs: stats(vectorTimes),
      textSearchMs: stats(textTimes),
      coldOpenIndexPresentMs: stats(coldPresent),
      coldOpenIndexMissingMs: stats(coldMissing),
      rebuildIndexMs: stats(rebuilds),
      memoryFileBytes,
    };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

function id(index: number): string {
  return `bench-${index.toString().padStart(6, '0')}`;
}

function create(index: number, content: string, vector: number[]): MemoryChange {
  const at = new Date(Date.UTC(2024, 0, 1) + index * 60_000).toISOString();
  return createChange(benchRecord({ id: id(index), content, scope, at, sources: [`turn-${index}`] }), vector, 'bench');
}

const WORDS = (
  'user likes coffee tea latte espresso project deadline march april meeting friday monday running marathon hiking ' +
  'morning evening work python typescript rust memory agent store lyon paris madrid sister brother dog cat garden ' +
  'piano cello guitar novel poetry travel train flight hotel budget invoice client design review release sprint ' +
  'allergy peanuts vegetarian doctor dentist gym swimming cycling birthday anniversary gift recipe pasta curry'
).split(' ');

/** A deterministic sentence of `length` words (PRNG seeded by index). */
function sentence(seed: number, length = 14 + (seed % 9)): string {
  let state = (seed + 1) * 2654435761;
  const next = () => {
    state = (state ^ (state << 13)) >>> 0;
    state = (state ^ (state >>> 17)) >>> 0;
    state = (state ^ (state << 5)) >>> 0;
    return state;
  };
  const words = Array.from({ length }, () => WORDS[next() % WORDS.length]);
  return `The ${words.join(' ')} (note ${seed}).`;
}

/** Nearest-rank p50 / p95 (bench-report's percentiles, as every bench), with the count as `runs`. */
function stats(values: number[]): Stats {
  const { p50, p95, n } = percentiles(values);
  return { p50, p95, runs: n };
}

function printTable(rows: SizeResult[]): void {
  const lines: Array<[string, ...string[]]> = [
    ['metric', ...rows.map((row) => `${row.size} memories`)],
    ['bulk add (batches of 500), memories/s', ...rows.map((row) => String(row.bulkAddPerSecond))],
    ['single add (1 per apply), memories/s', ...rows.map((row) => String(row.singleAddPerSecond))],
    ['single add p50 / p95 ms', ...rows.map((row) => `${row.singleAddMs.p50} / ${row.singleAddMs.p95}`)],
    ['vector search p50 / p95 ms (warm)', ...rows.map((row) => `${row.vectorSearchMs.p50} / ${row.vectorSearchMs.p95}`)],
    ['text search p50 / p95 ms (warm)', ...rows.map((row) => `${row.textSearchMs.p50} / ${row.textSearchMs.p95}`)],
    ['cold open, index present, median ms', ...rows.map((row) => String(row.coldOpenIndexPresentMs.p50))],
    ['cold open, index missing (rebuild), median ms', ...rows.map((row) => String(row.coldOpenIndexMissingMs.p50))],
    ['rebuildIndex() on an open store, median ms', ...rows.map((row) => String(row.rebuildIndexMs.p50))],
    ['MEMORY.md size, KB', ...rows.map((row) => String(Math.round(row.memoryFileBytes / 1024)))],
  ];
  const widths = lines[0]!.map((_, column) => Math.max(...lines.map((line) => (line[column] ?? '').length)));
  for (const [index, line] of lines.entries()) {
    console.log(line.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  '));
    if (index === 0) console.log(widths.map((width) => '-'.repeat(width)).join('  '));
  }
}

async function saveResults(rows: SizeResult[]): Promise<string> {
  const report = {
    // The embedder's package too: the default's vectors come from @memloom/embeddings.
    ...run.stamp(packageFacts(['@memloom/core', '@memloom/store-markdown', '@memloom/embeddings'])),
    embedder:
      embedderName === 'test'
        ? `${embedder.id} (core test embedder, ${DIMENSION} dims: the store's own share alone)`
        : `${embedder.id} (the default embedder's vector space without its cache, ${DIMENSION} dims: every rebuild embeds every text)`,
    settings: { fsync: true, checkIntervalMs: 0, batch: BATCH, queries: queryCount, singleAdds: singleCount, scopes: 1 },
    results: rows,
  };
  return writeResults('markdown', run.started, report);
}

function parseArgs(list: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let index = 0; index < list.length; index++) {
    const key = list[index];
    if (key?.startsWith('--')) out[key.slice(2)] = list[index + 1] ?? '';
    if (key?.startsWith('--')) index++;
  }
  return out;
}

// Other work on the same cores skews every timing: the stamp says how busy the machine was.
const run = startRun('markdown', process.argv.slice(2));
const results: SizeResult[] = [];
for (const size of sizes) results.push(await benchSize(size));
console.log(`code: ${describeGit(run.git)}`);
printTable(results);
const written = await saveResults(results);
console.log(`\nresults written to ${written}`);
