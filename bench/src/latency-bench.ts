/**
 * `pnpm bench latency [--sizes 1000,10000,100000] [--adds 100] [--searches 100] [--budget-s 120]
 *   [--systems memloom,mem0,embedder] [--embedder default|lexical|use-lite] [--data <locomo dir>]`
 *
 * Latency of one `add` and one `search` (p50, p95) for memloom's shipped
 * default (createMemory(): SQLite + default embedder) and mem0 OSS
 * (infer: false, its memory vector store, the same embedder), with 1k, 10k
 * and 100k memories already stored in one user's scope.
 *
 * - 1,000: the first 1,000 LoCoMo turns, added through each system's own add.
 * - Larger sizes: synthetic memories (see peers/synthetic.ts) written through
 *   each system's write path with their vectors given (memloom: store.apply
 *   into the file createMemory() then opens; mem0: its own createMemory with
 *   the embedding supplied), because embedding 100,000 texts would take an hour.
 *
 * Then both systems, in the same process and at the same time: 3 warm-up
 * calls each, `--adds` new LoCoMo turns (turns 1,000 onwards, never seen)
 * and `--searches` LoCoMo questions, each call timed alone, embedding
 * included, and the two systems' calls alternating (which goes first flips
 * every time), so that other work on a shared machine slows both alike. A
 * system stops a phase once its calls in it have taken `--budget-s` seconds,
 * and reports how many it measured. One process per size. Writes
 * bench/results/latency-<date>.json.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MemoryChange } from '@memloom/core';
import { createSqliteStore, DEFAULT_SQLITE_PATH } from '@memloom/store-sqlite';
import { describeGit, locomoDir, option, packageFacts, percentiles, printTable, round, runWorker, startRun, writeResults, type Percentiles } from './bench-report.js';
import { loadLocomo, scoredQuestions, turnText } from './locomo.js';
import { createBenchEmbedder, EMBEDDER_NAMES, type EmbedderName } from './peers/locomo-rows.js';
import { createMemloomPeer } from './peers/memloom-peer.js';
import { syntheticMemories } from './peers/synthetic.js';
import { benchRecord, createChange } from './store-data.js';

const args = process.argv.slice(2);
const dataDir = locomoDir(args);
const embedderName = (option(args, '--embedder') ?? 'default') as EmbedderName;
if (!EMBEDDER_NAMES.includes(embedderName)) throw new Error(`--embedder must be one of ${EMBEDDER_NAMES.join(', ')}`);
const adds = Number(option(args, '--adds') ?? 100);
const searches = Number(option(args, '--searches') ?? 100);
const budgetMs = Number(option(args, '--budget-s') ?? 120) * 1000;
/** Sizes up to this are filled with real LoCoMo turns through add; larger ones with synthetic memories. */
const REAL_FILL_MAX = 1000;
const WARM_UP = 3;
const USER = 'bench-user';
/** `embedder`: the shared embedder alone, embedding the same texts: the floor under both systems' times. */
const SYSTEMS = ['memloom', 'mem0', 'embedder'] as const;
type SystemName = (typeof SYSTEMS)[number];
const systems = (option(args, '--systems')?.split(',') ?? [...SYSTEMS]) as SystemName[];
const unknownSystems = systems.filter((system) => !SYSTEMS.includes(system));
if (unknownSystems.length > 0) throw new Error(`unknown systems ${unknownSystems.join(', ')}; systems: ${SYSTEMS.join(', ')}`);

const workerSize = option(args, '--worker');
if (workerSize) {
  console.log(JSON.stringify(await measure(Number(workerSize))));
  process.exit(0);
}

const sizesArg = option(args, '--sizes') ?? '1000,10000,100000';
const sizes = sizesArg.split(',').map(Number);
const { started, git, stamp } = startRun('latency', args);
const runs: RunReport[] = [];
for (const size of sizes) {
  process.stderr.write(`latency: ${systems.join(' and ')} at ${size.toLocaleString('en')} memories ...\n`);
  const loadAtStart = round(loadavg()[0] as number, 2);
  const outcome = runWorker(
    fileURLToPath(import.meta.url),
    ['--worker', String(size), '--systems', systems.join(','), '--data', dataDir, '--embedder', embedderName, '--adds', String(adds), '--searches', String(searches), '--budget-s', String(budgetMs / 1000)],
    // mem0's search reads every stored vector into JS arrays: give the process room.
    { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --max-old-space-size=8192`.trim() },
  );
  if (outcome.ok) {
    const value = outcome.value as { results: WorkerResult[]; loadAverage1mAfter: number };
    for (const result of value.results) runs.push({ size, status: 'ran', loadAverage1mAtStart: loadAtStart, loadAverage1mAfter: value.loadAverage1mAfter, ...result });
  } else {
    process.stderr.write(`latency: ${size} failed: ${outcome.error}\n`);
    for (const system of systems) runs.push({ system, size, status: 'failed', reason: outcome.error, loadAverage1mAtStart: loadAtStart });
  }
}

const report = {
  ...stamp(packageFacts(['memloom', '@memloom/core', '@memloom/embeddings', '@memloom/store-sqlite', '@memloom/langchain-memory', 'mem0ai', 'better-sqlite3', 'sqlite-vec'])),
  embedder: embedderName,
  setup: {
    scope: `every memory in one user's scope (${USER}); both systems scoped to it`,
    fill: `sizes <= ${REAL_FILL_MAX}: the first LoCoMo turns through each system's add; larger: synthetic memories (chat-like text, random unit vectors of the embedder's dimension) written through each system's write path with their vectors given; the fill's seconds time the writes only, each system's store being made and opened before`,
    measured: `${WARM_UP} warm-up calls each, then up to ${adds} adds of new LoCoMo turns and ${searches} searches with LoCoMo questions (limit 10), each call timed alone, embedding included, the systems' calls alternating in one process; a system stops a phase after its calls took ${budgetMs / 1000} s`,
    memloom: 'createMemory() from memloom (SQLite at .memloom/memory.db in a temp folder, default embedder): add decides merge / keep both / new against the nearest memory',
    embedder: 'the same embedder alone (its own instance): embed([text]) for each add, embed([query]) for each search; what both systems pay at least',
    mem0: "mem0ai/oss Memory, add(text, { userId, infer: false }) (stores as is, no merge), 'memory' vector store file in a temp folder, SQLite history, the same embedder via the langchain provider; search(query, { filters: { user_id }, topK: 10 })",
    heap: '--max-old-space-size=8192',
  },
  runs,
};
const file = writeResults('latency', started, report);
printReport();
console.log(`\nwritten to ${file}`);

// ---------------------------------------------------------------------------

interface WorkerResult {
  system: SystemName;
  fill: { kind: 'locomo turns via add' | 'synthetic, vectors given'; seconds: number };
  stored: { beforeMeasuring: number; after: number };
  add: Percentiles & { stoppedByBudget: boolean };
  search: Percentiles & { stoppedByBudget: boolean };
  /** memloom only: what add decided for the measured adds. */
  decisions?: Record<string, number>;
}

type RunReport = { system: SystemName; size: number; loadAverage1mAtStart: number } & (
  | ({ status: 'ran'; loadAverage1mAfter: number } & WorkerResult)
  | { status: 'failed'; reason: string }
);

interface Operations {
  add(text: string, diaId: string): Promise<string | undefined>;
  search(query: string): Promise<unknown>;
  count(): Promise<number>;
  close(): Promise<void>;
}

/** The real fill of a size up to REAL_FILL_MAX: the first LoCoMo turns through the system's own add. */
type TurnFill = (operations: Operations) => Promise<void>;

/** A system's operations over its filled store, and the seconds the fill took: the writes only, its store built before. */
interface Filled {
  operations: Operations;
  fillSeconds: number;
}

interface Subject {
  system: SystemName;
  operations: Operations;
  fillSeconds: number;
  beforeMeasuring: number;
  addTimes: number[];
  searchTimes: number[];
  decisions: Record<string, number>;
}

async function measure(size: number): Promise<{ results: WorkerResult[]; loadAverage1mAfter: number }> {
  const conversations = await loadLocomo(dataDir);
  const turns = conversations.flatMap((conversation) => conversation.turns);
  const questions = conversations.flatMap((conversation) => scoredQuestions(conversation)).map((question) => question.question);
  const realFill = size <= REAL_FILL_MAX;
  if (turns.length < REAL_FILL_MAX + WARM_UP + adds) throw new Error(`${dataDir} holds ${turns.length} turns; the latency bench needs ${REAL_FILL_MAX + WARM_UP + adds}`);

  const subjects: Subject[] = [];
  const fillWithTurns: TurnFill = async (operations) => {
    for (const turn of turns.slice(0, size)) await operations.add(turnText(turn), turn.diaId);
  };
  for (const system of systems) {
    const { operations, fillSeconds } =
      system === 'memloom' ? await openMemloom(size, realFill ? fillWithTurns : undefined) : system === 'mem0' ? await openMem0(size, realFill ? fillWithTurns : undefined) : { operations: openEmbedderOnly(), fillSeconds: 0 };
    subjects.push({ system, operations, fillSeconds, beforeMeasuring: await operations.count(), addTimes: [], searchTimes: [], decisions: {} });
  }
  for (const subject of subjects) {
    for (const turn of turns.slice(REAL_FILL_MAX, REAL_FILL_MAX + WARM_UP)) await subject.operations.add(turnText(turn), turn.diaId);
    for (const question of questions.slice(searches, searches + WARM_UP)) await subject.operations.search(question);
  }

  const spent = (times: number[]) => times.reduce((sum, time) => sum + time, 0);
  const measuredTurns = turns.slice(REAL_FILL_MAX + WARM_UP, REAL_FILL_MAX + WARM_UP + adds);
  for (const [index, turn] of measuredTurns.entries()) {
    for (const subject of alternate(subjects, index)) {
      if (spent(subject.addTimes) > budgetMs) continue;
      const start = performance.now();
      const decision = await subject.operations.add(turnText(turn), turn.diaId);
      subject.addTimes.push(performance.now() - start);
      if (decision) subject.decisions[decision] = (subject.decisions[decision] ?? 0) + 1;
    }
  }
  for (const [index, question] of questions.slice(0, searches).entries()) {
    for (const subject of alternate(subjects, index)) {
      if (spent(subject.searchTimes) > budgetMs) continue;
      const start = performance.now();
      await subject.operations.search(question);
      subject.searchTimes.push(performance.now() - start);
    }
  }

  const results: WorkerResult[] = [];
  for (const subject of subjects) {
    const after = await subject.operations.count();
    await subject.operations.close();
    results.push({
      system: subject.system,
      fill: { kind: realFill ? 'locomo turns via add' : 'synthetic, vectors given', seconds: subject.fillSeconds },
      stored: { beforeMeasuring: subject.beforeMeasuring, after },
      add: { ...percentiles(subject.addTimes), stoppedByBudget: subject.addTimes.length < measuredTurns.length },
      search: { ...percentiles(subject.searchTimes), stoppedByBudget: subject.searchTimes.length < Math.min(searches, questions.length) },
      ...(subject.system === 'memloom' ? { decisions: subject.decisions } : {}),
    });
  }
  return { results, loadAverage1mAfter: round(loadavg()[0] as number, 2) };
}

/** The subjects in order on even calls and reversed on odd ones, so neither always goes first. */
function alternate<T>(items: readonly T[], index: number): readonly T[] {
  return index % 2 === 0 ? items : [...items].reverse();
}

/** The bench embedder alone (a fresh instance, so nothing is cached): add embeds the text, search the query. */
function openEmbedderOnly(): Operations {
  const embedder = createBenchEmbedder(embedderName);
  return {
    async add(text) {
      await embedder.embed([text], { purpose: 'document' });
      return undefined;
    },
    search: (query) => embedder.embed([query], { purpose: 'query' }),
    count: async () => 0,
    close: async () => (embedder as { close?: () => Promise<void> }).close?.(),
  };
}

/**
 * memloom's shipped default, its store made and opened before the fill is timed (as mem0's is). With
 * `fillWithTurns`, filled through its add; otherwise the file createMemory() then opens is filled first
 * with synthetic memories through the SQLite store.
 */
async function openMemloom(size: number, fillWithTurns: TurnFill | undefined): Promise<Filled> {
  const folder = mkdtempSync(join(tmpdir(), 'memloom-latency-'));
  const peerOptions = { store: 'default', folder, ...(embedderName === 'default' ? {} : { embedderConfig: embedderName }) } as const;
  if (fillWithTurns) {
    const operations = memloomOperations(await createMemloomPeer(peerOptions));
    return { operations, fillSeconds: await secondsOf(() => fillWithTurns(operations)) };
  }
  // The embedder createMemory() will build: its id and dimension bind the file's vectors (no model is loaded for them).
  const embedder = createBenchEmbedder(embedderName);
  mkdirSync(join(folder, '.memloom'), { recursive: true });
  const store = createSqliteStore({ path: join(folder, DEFAULT_SQLITE_PATH) });
  await store.open({ dimension: embedder.dimension, embedderId: embedder.id });
  const fillSeconds = await secondsOf(async () => {
    let batch: MemoryChange[] = [];
    for (const memory of syntheticMemories(size, embedder.dimension, Date.now())) {
      batch.push(syntheticChange(memory.id, memory.text, memory.at, memory.vector));
      if (batch.length === 1000) {
        await store.apply(batch);
        batch = [];
      }
    }
    if (batch.length > 0) await store.apply(batch);
    await store.close();
  });
  return { operations: memloomOperations(await createMemloomPeer(peerOptions)), fillSeconds };
}

function memloomOperations(peer: Awaited<ReturnType<typeof createMemloomPeer>>): Operations {
  const scope = { userId: USER };
  return {
    async add(text, diaId) {
      return (await peer.memory.add(text, { scope, sources: [diaId] })).decision.strategy;
    },
    search: (query) => peer.memory.search(query, { scope, limit: 10 }),
    count: () => peer.memory.count({ scope }),
    close: () => peer.dispose(),
  };
}

/** mem0 with the same embedder, its store built before the fill is timed. With `fillWithTurns`, filled through its add; otherwise through its own createMemory with each embedding given. */
async function openMem0(size: number, fillWithTurns: TurnFill | undefined): Promise<Filled> {
  const { createMem0Peer } = await import('./peers/mem0-peer.js');
  const embedder = createBenchEmbedder(embedderName);
  const peer = await createMem0Peer(embedder);
  const internals = peer.memory as unknown as {
    createMemory(data: string, existingEmbeddings: Record<string, number[] | Float32Array>, metadata: Record<string, unknown>): Promise<string>;
    vectorStore: { db: { exec(sql: string): void; prepare(sql: string): { get(): { n: number } } } };
    db: { db?: { exec(sql: string): void } };
  };
  const operations: Operations = {
    async add(text) {
      await peer.memory.add(text, { userId: USER, infer: false });
      return undefined;
    },
    search: (query) => peer.memory.search(query, { filters: { user_id: USER }, topK: 10 }),
    count: async () => internals.vectorStore.db.prepare('SELECT COUNT(*) AS n FROM vectors').get().n,
    close: () => peer.dispose(),
  };
  if (fillWithTurns) return { operations, fillSeconds: await secondsOf(() => fillWithTurns(operations)) };
  const fillSeconds = await secondsOf(async () => {
    // One transaction per 1,000 writes, as memloom's fill: mem0's calls are synchronous better-sqlite3 underneath.
    const transaction = (sql: string) => {
      internals.vectorStore.db.exec(sql);
      internals.db.db?.exec(sql);
    };
    let written = 0;
    transaction('BEGIN');
    for (const memory of syntheticMemories(size, embedder.dimension, Date.now())) {
      await internals.createMemory(memory.text, { [memory.text]: memory.vector }, { user_id: USER });
      if (++written % 1000 === 0) {
        transaction('COMMIT');
        transaction('BEGIN');
      }
    }
    transaction('COMMIT');
  });
  return { operations, fillSeconds };
}

/** Seconds `work` takes, to a tenth. */
async function secondsOf(work: () => Promise<void>): Promise<number> {
  const start = performance.now();
  await work();
  return round((performance.now() - start) / 1000, 1);
}

function syntheticChange(id: string, content: string, at: string, vector: Float32Array): MemoryChange {
  return createChange(benchRecord({ id, content, scope: { userId: USER }, at, sources: [id] }), vector, 'latency bench fill');
}

function printReport(): void {
  const { machine } = report;
  console.log(`\nadd / search latency, ${report.date}: ${machine.cores} cores (${machine.cpu}), ${machine.ramGiB} GiB, Node ${machine.node}, load average ${machine.loadAverage1mBeforeAfter.join(' -> ')}`);
  console.log(`code: ${describeGit(report.git)}`);
  console.log(`embedder: ${embedderName} (the same for both); ${report.setup.fill}; calls alternate between the systems in one process`);
  const cell = (value: Percentiles & { stoppedByBudget: boolean }) => `${value.p50} / ${value.p95} (n=${value.n}${value.stoppedByBudget ? ', budget' : ''})`;
  printTable([
    ['stored', 'system', 'fill', 'add p50 / p95 ms', 'search p50 / p95 ms', 'memories before -> after', 'add decisions', 'load start -> end'],
    ...runs.map((run) =>
      run.status === 'ran'
        ? [
            run.size.toLocaleString('en'),
            run.system,
            run.system === 'embedder' ? '' : `${run.fill.kind === 'locomo turns via add' ? 'real' : 'synthetic'} ${run.fill.seconds}s`,
            cell(run.add),
            cell(run.search),
            run.system === 'embedder' ? '' : `${run.stored.beforeMeasuring} -> ${run.stored.after}`,
            run.decisions ? Object.entries(run.decisions).map(([strategy, count]) => `${strategy} ${count}`).join(', ') : run.system === 'mem0' ? 'none (stored as is)' : '',
            `${run.loadAverage1mAtStart} -> ${run.loadAverage1mAfter}`,
          ]
        : [run.size.toLocaleString('en'), run.system, 'FAILED', run.reason],
    ),
  ]);
  console.log();
  for (const size of sizes) {
    const memloom = runs.find((run) => run.system === 'memloom' && run.size === size);
    const mem0 = runs.find((run) => run.system === 'mem0' && run.size === size);
    if (memloom?.status !== 'ran') continue;
    console.log(`goal ${memloom.add.p50 < 20 ? 'MET   ' : 'MISSED'} memloom add p50 < 20 ms at ${size.toLocaleString('en')}: ${memloom.add.p50} ms`);
    if (mem0?.status === 'ran') console.log(`goal ${memloom.add.p50 <= mem0.add.p50 ? 'MET   ' : 'MISSED'} memloom add p50 no slower than mem0's at ${size.toLocaleString('en')}: ${memloom.add.p50} vs ${mem0.add.p50} ms`);
  }
}
