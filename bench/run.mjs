#!/usr/bin/env node
// Benchmark dispatcher: `pnpm bench <command> [options]` (the root script builds first).
//   store [--sizes 10000,100000]   SQLite store (as shipped, and searching with sqlite-vec only) vs in-memory store vs a brute-force JS scan
//   markdown [options]              the Markdown store (see src/markdown-bench.ts)
//   embeddings [options]            embedders: speed, load, RSS, LoCoMo and Chinese recall (see src/embeddings-bench.ts)
//     [--data <locomo dir>] [--only a,b] [--skip-speed] [--skip-quality] [--model-path <dir>] [--retrieval <json>]
//   locomo [options]                LoCoMo recall side by side: memloom (default, each store), mem0 OSS, LangChain, BM25
//     [--data <locomo dir>] [--only row,row] [--embedder default|lexical|use-lite] (see src/locomo-bench.ts)
//   latency [options]               one add / one search, memloom vs mem0, at 1k, 10k, 100k memories
//     [--sizes 1000,10000,100000] [--adds 100] [--searches 100] [--budget-s 120] [--systems memloom,mem0,embedder] (see src/latency-bench.ts)
//   approximate [options]           the approximate merge lookup against the exact scan: agreement and speed
//     [--sizes 5000,10000,20000,100000] [--queries 1000] [--share 0.005] [--data <locomo dir>] (see src/approximate-bench.ts)
//   merge [--data <pairs file>]     labelled merges: what the offline merge keeps and drops, directly and through add (see src/merge-bench.ts)
//   peers                           locomo, then latency, with their defaults
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const [command, ...rest] = process.argv.slice(2);
const commands = { store: runStore, markdown: runMarkdown, embeddings: runEmbeddings, locomo: runLocomoBench, latency: runLatencyBench, approximate: runApproximateBench, merge: runMergeBench, peers: runPeers };

if (!commands[command]) {
  console.error(`usage: pnpm bench <${Object.keys(commands).join('|')}> [options]`);
  process.exit(2);
}
await commands[command](rest);

function runMarkdown(args) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', join('src', 'markdown-bench.ts'), ...args], { cwd: here, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

function runEmbeddings(args) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', join('src', 'embeddings-bench.ts'), ...args], { cwd: here, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

function runLocomoBench(args) {
  runScript('locomo-bench.ts', args);
}

function runLatencyBench(args) {
  runScript('latency-bench.ts', args);
}

function runApproximateBench(args) {
  runScript('approximate-bench.ts', args);
}

function runMergeBench(args) {
  runScript('merge-bench.ts', args);
}

function runPeers(args) {
  runScript('locomo-bench.ts', args);
  runScript('latency-bench.ts', args.filter((arg, index) => arg !== '--only' && args[index - 1] !== '--only'));
}

/** Run a bench script from bench/, with --data made absolute against the folder `pnpm bench` was called from. */
function runScript(script, args) {
  const absolute = args.map((arg, index) => (args[index - 1] === '--data' ? resolve(process.env.INIT_CWD ?? process.cwd(), arg) : arg));
  const result = spawnSync(process.execPath, ['--import', 'tsx', join('src', script), ...absolute], { cwd: here, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

async function runStore(args) {
  const sizesArg = valueOf(args, '--sizes') ?? '10000,100000';
  const sizes = sizesArg.split(',').map(Number);
  const runs = [];
  const { startRun, describeGit, packageFacts, writeResults } = await benchReport();
  // Other work on the same cores skews every number: the stamp says how busy the machine was.
  const benchRun = startRun('store', ['--sizes', sizesArg]);
  for (const size of sizes) {
    for (const backend of ['sqlite', 'sqlite-vec', 'sqlite-shuffled', 'memory', 'brute']) {
      process.stderr.write(`store bench: ${backend} at ${size.toLocaleString('en')} memories ...\n`);
      const child = spawnSync(process.execPath, ['--import', 'tsx', join('src', 'store-bench.ts'), backend, String(size)], {
        cwd: here,
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      });
      if (child.status !== 0) {
        process.stderr.write(child.stderr);
        throw new Error(`store bench ${backend} ${size} failed with ${child.status ?? child.signal}`);
      }
      runs.push(JSON.parse(child.stdout.trim().split('\n').at(-1)));
    }
  }
  for (const size of sizes) {
    const of = (backend) => runs.find((run) => run.size === size && run.backend === backend);
    const brute = of('brute');
    // Both searches are exact: their top 10 should be the brute-force top 10 (up to float32 rounding).
    for (const run of [of('sqlite'), of('sqlite-vec'), of('sqlite-shuffled')]) {
      const overlap = run.top10.map((ids, index) => ids.filter((id) => brute.top10[index].includes(id)).length / 10);
      run.top10AgreementWithBruteForce = overlap.reduce((sum, value) => sum + value, 0) / overlap.length;
    }
  }
  const report = {
    // Versions and installed sizes, as the peer benchmarks report them.
    ...benchRun.stamp(packageFacts(['@memloom/core', '@memloom/store-sqlite', 'better-sqlite3', 'sqlite-vec'])),
    versions: versions(),
    data: {
      sizes,
      users: 100,
      perUser: sizes.map((size) => size / 100),
      vectors: `seeded random unit vectors, dimension ${runs[0]?.dimension} (the default embedder's; no embedder runs)`,
      text: '8-17 words from a 162-word vocabulary, Zipf-like',
      ages: 'uniform over the 200 days before the maintenance instant',
      order:
        "sqlite, sqlite-vec, memory: written oldest first with time-ordered ids (UUID version 7), as add leaves a store; sqlite-shuffled: the SQLite store as shipped, the same memories written in no order of age with random version 4 ids (an import of unordered history, or ids from elsewhere)",
    },
    runs: runs.map(({ top10, ...run }) => run),
  };
  const file = writeResults('store', benchRun.started, report);
  printStoreTable(report, describeGit(benchRun.git));
  console.log(`\nwritten to ${file}`);
}

function printStoreTable(report, code) {
  const { machine, versions: v } = report;
  console.log(`\nstore bench, ${report.date}: ${machine.cores} cores, ${machine.ramGiB} GiB, Node ${machine.node}; SQLite ${v.sqlite}, sqlite-vec ${v.sqliteVec}`);
  console.log(`load average (1 min) before / after: ${machine.loadAverage1mBeforeAfter.join(' / ')}`);
  console.log(`code: ${code}`);
  for (const size of report.data.sizes) {
    const of = (backend) => report.runs.find((run) => run.size === size && run.backend === backend);
    const [sqlite, sqliteVec, shuffled, memory, brute] = [of('sqlite'), of('sqlite-vec'), of('sqlite-shuffled'), of('memory'), of('brute')];
    console.log(`\n${size.toLocaleString('en')} memories (100 users x ${(size / 100).toLocaleString('en')}), ${report.runs[0]?.dimension}-dim random unit vectors`);
    console.log('sqlite: as shipped (vectors searched in an in-memory copy); sqlite-vec: the same store with vectorMirror: false');
    console.log('memories written oldest first with time-ordered ids, as add leaves a store; shuffled: the SQLite store as shipped, the same memories written in no order of age with random v4 ids');
    const rows = [['metric', 'sqlite', 'sqlite-vec', 'sqlite, shuffled', 'in-memory', 'brute-force JS', 'sqlite / sqlite-vec', 'sqlite / brute']];
    const ratio = (a, b) => (a === undefined || b === undefined || b === 0 ? '' : `${(a / b).toFixed(2)}x`);
    const row = (label, key) => [label, sqlite[key], sqliteVec[key], shuffled[key], memory[key], '', ratio(sqlite[key], sqliteVec[key]), ''];
    rows.push(row('add, store.apply x100 (memories/s)', 'addBatchPerSecond'));
    rows.push(row('add, memory.add one by one (/s)', 'addFacadePerSecond'));
    rows.push(row('first vector search after the load (ms)', 'firstSearchMs'));
    rows.push(row('second, one user (sqlite: reads their vectors) (ms)', 'userLoadSearchMs'));
    rows.push(row('third, everyone (sqlite: reads every vector) (ms)', 'allLoadSearchMs'));
    for (const key of ['vectorScoped', 'vectorUnscoped', 'textScoped', 'textUnscoped', 'hybridScoped', 'hybridUnscoped']) {
      const cell = (run) => (run?.search?.[key] ? `${run.search[key].p50} / ${run.search[key].p95}` : '');
      rows.push([
        `${key} p50 / p95 (ms)`,
        cell(sqlite),
        cell(sqliteVec),
        cell(shuffled),
        cell(memory),
        cell(brute),
        ratio(sqlite.search[key]?.p50, sqliteVec.search[key]?.p50),
        ratio(sqlite.search[key]?.p50, brute.search?.[key]?.p50),
      ]);
    }
    rows.push(['maintenance pass (s)', sqlite.maintenance.seconds, sqliteVec.maintenance.seconds, shuffled.maintenance.seconds, memory.maintenance.seconds, '', ratio(sqlite.maintenance.seconds, sqliteVec.maintenance.seconds), '']);
    rows.push(['file size (MB)', sqlite.fileMb, sqliteVec.fileMb, shuffled.fileMb, '', '', '', '']);
    rows.push(['peak RSS (MB)', sqlite.peakRssMb, sqliteVec.peakRssMb, shuffled.peakRssMb, memory.peakRssMb, brute.peakRssMb, ratio(sqlite.peakRssMb, sqliteVec.peakRssMb), '']);
    rows.push(['top-10 agreement with brute force', sqlite.top10AgreementWithBruteForce, sqliteVec.top10AgreementWithBruteForce, shuffled.top10AgreementWithBruteForce, '', '', '', '']);
    const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => String(row[column] ?? '').length)));
    for (const row of rows) console.log(row.map((cell, column) => String(cell ?? '').padEnd(widths[column])).join('  '));
    const m = sqlite.maintenance;
    console.log(`maintenance changed: ${m.compressed} compressed, ${m.decayed} decayed, ${m.deleted} deleted, ${m.unchanged} unchanged of ${m.scanned}`);
    for (const [name, run] of [['sqlite', sqlite], ['sqlite-vec', sqliteVec], ['sqlite, shuffled', shuffled], ['in-memory', memory]]) {
      const inStore = Object.entries(run.maintenance.storeSeconds).map(([method, seconds]) => `${method} ${seconds}s`).join(', ');
      console.log(`maintenance time (${name}): ${run.maintenance.seconds}s = core ${run.maintenance.coreSeconds}s + inside the store ${inStore}`);
    }
    if (sqlite.fileMbByTable) console.log(`file by table (MB): ${Object.entries(sqlite.fileMbByTable).map(([name, mb]) => `${name} ${mb}`).join(', ')}`);
    if (size >= 100_000) {
      const goals = [
        ['scoped search p50 < 10 ms (hybrid, one user)', sqlite.search.hybridScoped.p50 < 10],
        ['unscoped hybrid p50 < 50 ms', sqlite.search.hybridUnscoped.p50 < 50],
        ['add >= 2,000 memories/s with vectors given (store.apply)', sqlite.addBatchPerSecond >= 2000],
        ['maintenance pass < 5 s', sqlite.maintenance.seconds < 5],
        ['maintenance pass < 5 s, memories written shuffled with random ids', shuffled.maintenance.seconds < 5],
      ];
      for (const [goal, met] of goals) console.log(`goal ${met ? 'MET   ' : 'MISSED'} ${goal}`);
    }
  }
}

function versions() {
  const require = createRequire(join(here, 'package.json'));
  // Direct dependencies are linked under bench/node_modules; some packages do not export their package.json.
  const version = (name) => JSON.parse(readFileSync(join(here, 'node_modules', name, 'package.json'), 'utf8')).version;
  const Database = require('better-sqlite3');
  const sqliteVec = require('sqlite-vec');
  const database = new Database(':memory:');
  sqliteVec.load(database);
  const row = database.prepare('SELECT sqlite_version() AS sqlite, vec_version() AS vec').get();
  database.close();
  return {
    '@memloom/core': version('@memloom/core'),
    '@memloom/store-sqlite': version('@memloom/store-sqlite'),
    'better-sqlite3': version('better-sqlite3'),
    'sqlite-vec': version('sqlite-vec'),
    sqlite: row.sqlite,
    sqliteVec: row.vec,
  };
}

/** src/bench-report.ts, the stamps every benchmark shares (the commit, package versions). */
async function benchReport() {
  const { tsImport } = await import('tsx/esm/api');
  return tsImport('./src/bench-report.ts', import.meta.url);
}

function valueOf(args, name) {
  const index = args.indexOf(name);
  return index >= 0 ? args[index + 1] : undefined;
}
