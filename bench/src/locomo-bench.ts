/**
 * `pnpm bench locomo [--data <locomo dir>] [--only row,row] [--embedder default|lexical|use-lite]`
 *
 * LoCoMo retrieval side by side, on the same turns, in one run: memloom's
 * shipped default and each memloom store, mem0 OSS (infer: false), LangChain's
 * in-memory vector store and plain BM25, every embedding row with the same
 * embedder. Per row: recall@5 and @10 overall and per category, memories
 * stored after ingest, ingest time, search p50/p95, peak RSS. Each row runs in
 * a process of its own; a row that cannot run says why. Writes
 * bench/results/locomo-<date>.json.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  describeGit,
  displayPath,
  locomoDir,
  option,
  packageFacts,
  percentiles,
  printTable,
  round,
  runWorker,
  startRun,
  writeResults,
  type Percentiles,
} from './bench-report.js';
import { describeEvidence, evidenceReport, loadLocomo, runLocomo, type LocomoRetriever, type LocomoRun } from './locomo.js';
import { createBenchEmbedder, EMBEDDER_NAMES, LOCOMO_ROWS, type EmbedderName, type LocomoRow } from './peers/locomo-rows.js';

const args = process.argv.slice(2);
const dataDir = locomoDir(args);
const embedderName = (option(args, '--embedder') ?? 'default') as EmbedderName;
if (!EMBEDDER_NAMES.includes(embedderName)) throw new Error(`--embedder must be one of ${EMBEDDER_NAMES.join(', ')}`);

const workerRow = option(args, '--worker');
if (workerRow) {
  const row = LOCOMO_ROWS.find((candidate) => candidate.name === workerRow);
  if (!row) throw new Error(`unknown row ${workerRow}`);
  console.log(JSON.stringify(await measureRow(row)));
  process.exit(0);
}

const only = option(args, '--only')?.split(',');
const unknown = only?.filter((name) => !LOCOMO_ROWS.some((row) => row.name === name)) ?? [];
if (unknown.length > 0) throw new Error(`unknown rows ${unknown.join(', ')}; rows: ${LOCOMO_ROWS.map((row) => row.name).join(', ')}`);
if (!existsSync(dataDir)) throw new Error(`LoCoMo data not found at ${dataDir}: pass --data <dir> (a folder of conv-*.json files)`);

const { started, git, stamp } = startRun('locomo', args);
const conversations = await loadLocomo(dataDir);
const rows: RowReport[] = [];
for (const row of LOCOMO_ROWS.filter((candidate) => !only || only.includes(candidate.name))) {
  const reason = row.unavailable?.(process.env);
  const base = { name: row.name, group: row.group, label: row.label, description: row.description };
  if (reason) {
    process.stderr.write(`locomo: ${row.name}: ${reason}\n`);
    rows.push({ ...base, status: 'not run', reason });
    continue;
  }
  process.stderr.write(`locomo: ${row.name} ...\n`);
  const outcome = runWorker(fileURLToPath(import.meta.url), ['--worker', row.name, '--data', dataDir, '--embedder', embedderName]);
  if (outcome.ok) rows.push({ ...base, status: 'ran', ...(outcome.value as WorkerResult) });
  else {
    process.stderr.write(`locomo: ${row.name} failed: ${outcome.error}\n`);
    rows.push({ ...base, status: 'failed', reason: outcome.error });
  }
}

const report = {
  ...stamp(packageFacts(['memloom', '@memloom/core', '@memloom/embeddings', '@memloom/store-sqlite', '@memloom/store-markdown', '@memloom/langchain-memory', 'mem0ai', '@langchain/classic', '@langchain/core'])),
  data: {
    dir: displayPath(dataDir),
    conversations: conversations.map((conversation) => conversation.id),
    turns: conversations.reduce((sum, conversation) => sum + conversation.turns.length, 0),
    /** How the evidence ids were read (normalised, dropped, questions excluded): the same for every row. */
    evidence: evidenceReport(conversations),
    metric: 'shared/data/locomo/README.md: every turn one memory "<speaker>: <text>" (+ image caption), questions of categories 1-4, recall@k = share of evidence dia_ids among the sources of the top k',
  },
  embedder: embedderName,
  rows,
  goals: goals(rows),
};
const file = writeResults('locomo', started, report);
printReport();
console.log(`\nwritten to ${file}`);

// ---------------------------------------------------------------------------

interface WorkerResult extends LocomoRun {
  /** Milliseconds per search call, the query's embedding included. */
  search: Percentiles;
  /** Milliseconds per turn ingested, embedding included (the embedder's first load is not: see warmUpMs). */
  ingestPerTurnMs: number;
  /** The id of the embedder the row's retrievers used, as they report it (for the default rows, the one createMemory built). */
  embedderId?: string;
  peakRssMb: number;
}

type RowReport = { name: string; group: string; label: string; description: string } & (
  | ({ status: 'ran' } & WorkerResult)
  | { status: 'not run' | 'failed'; reason: string }
);

async function measureRow(row: LocomoRow): Promise<WorkerResult> {
  const conversationsHere = await loadLocomo(dataDir);
  let embedder: ReturnType<typeof createBenchEmbedder> | undefined;
  const context = {
    embedder: () => (embedder ??= createBenchEmbedder(embedderName)),
    embedderName,
    env: process.env,
  };
  const searchTimes: number[] = [];
  const embedderIds = new Set<string>();
  const run = await runLocomo(conversationsHere, async (conversation) => {
    const retriever = await row.create(conversation, context);
    if (retriever.embedderId) embedderIds.add(retriever.embedderId);
    return timed(retriever, searchTimes);
  });
  await (embedder as { close?: () => Promise<void> } | undefined)?.close?.();
  return {
    ...run,
    search: percentiles(searchTimes),
    ingestPerTurnMs: round(run.ingestMs / run.turns, 2),
    ...(row.embeds ? { embedderId: [...embedderIds].join(' | ') || 'not reported' } : {}),
    peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
  };
}

/** The same retriever, each search call timed. */
function timed(retriever: LocomoRetriever, samples: number[]): LocomoRetriever {
  return {
    ...(retriever.warmUp ? { warmUp: () => (retriever.warmUp as () => Promise<void>)() } : {}),
    ingest: (turns) => retriever.ingest(turns),
    async search(question, k) {
      const start = performance.now();
      const result = await retriever.search(question, k);
      samples.push(performance.now() - start);
      return result;
    },
    size: () => retriever.size(),
    ...(retriever.close ? { close: () => (retriever.close as () => Promise<void>)() } : {}),
  };
}

interface GoalCheck {
  goal: string;
  met: boolean | 'not measured';
  detail: string;
}

function goals(list: RowReport[]): GoalCheck[] {
  const recall = (name: string) => {
    const row = list.find((candidate) => candidate.name === name);
    return row?.status === 'ran' ? (row.overall[10] as number) : undefined;
  };
  const ours = recall('memloom-default');
  const checks: GoalCheck[] = [];
  for (const [name, label] of [
    ['mem0', 'mem0 OSS (infer: false)'],
    ['langchain', 'LangChain MemoryVectorStore'],
    ['bm25', 'plain BM25'],
  ] as const) {
    const theirs = recall(name);
    checks.push({
      goal: `memloom default recall@10 beats ${label}`,
      met: ours === undefined || theirs === undefined ? 'not measured' : ours > theirs,
      detail: ours === undefined || theirs === undefined ? 'not measured in this run (row not run or not selected)' : `${ours.toFixed(3)} vs ${theirs.toFixed(3)}`,
    });
  }
  const bm25 = recall('bm25');
  for (const [name, label] of [
    ['memloom-default', 'memloom default (addTurns)'],
    ['memloom-default-add', 'memloom default, each turn added alone'],
  ] as const) {
    const score = recall(name);
    checks.push({
      goal: `${label} recall@10 >= plain BM25 + 0.10`,
      met: score === undefined || bm25 === undefined ? 'not measured' : score >= bm25 + 0.1,
      detail: score === undefined || bm25 === undefined ? 'not measured in this run (row not run or not selected)' : `${score.toFixed(3)} vs ${(bm25 + 0.1).toFixed(3)} needed (BM25 ${bm25.toFixed(3)})`,
    });
  }
  return checks;
}

function printReport(): void {
  const { machine } = report;
  console.log(`\nLoCoMo retrieval, ${report.date}: ${machine.cores} cores (${machine.cpu}), ${machine.ramGiB} GiB, Node ${machine.node}, load average ${machine.loadAverage1mBeforeAfter.join(' -> ')}`);
  console.log(`code: ${describeGit(report.git)}`);
  console.log(`data: ${report.data.dir} (${report.data.conversations.length} conversations, ${report.data.turns} turns); embedder for every embedding row: ${embedderName}`);
  console.log(describeEvidence(report.data.evidence));
  console.log(`packages: ${Object.entries(report.packages).map(([name, fact]) => `${name}@${fact.version}`).join(', ')}`);
  const ran = rows.filter((row): row is Extract<RowReport, { status: 'ran' }> => row.status === 'ran');
  const categories = ran[0] ? Object.keys(ran[0].byCategory) : [];
  const header = ['row', 'R@5', 'R@10', ...categories.map((category) => `${category} R@10`), 'memories', 'ingest s', 'search p50/p95 ms'];
  const body = rows.map((row) =>
    row.status === 'ran'
      ? [
          row.label,
          fixed(row.overall[5]),
          fixed(row.overall[10]),
          ...categories.map((category) => fixed(row.byCategory[category]?.recall[10])),
          `${row.memories}/${row.turns}`,
          round(row.ingestMs / 1000, 1),
          `${row.search.p50} / ${row.search.p95}`,
        ]
      : [row.label, ...header.slice(1, -1).map(() => '-'), row.status.toUpperCase()],
  );
  console.log();
  printTable([header, ...body]);
  for (const row of rows) if (row.status !== 'ran') console.log(`${row.label}: ${row.reason}`);
  if (ran[0]) {
    console.log(
      `(${ran[0].questions} questions; memories = memories after ingest / turns ingested; ingest includes embedding every turn, after one warm-up embedding outside the timer, each row's store made and opened before it; search times include embedding the question)`,
    );
  }
  const conversations = ran[0] ? Object.keys(ran[0].byConversation) : [];
  if (conversations.length > 1) {
    console.log('\nR@10 per conversation (questions):');
    printTable([
      ['row', ...conversations.map((id) => `${id} (${ran[0]?.byConversation[id]?.questions ?? 0})`)],
      ...ran.map((row) => [row.label, ...conversations.map((id) => fixed(row.byConversation[id]?.recall[10]))]),
    ]);
  }
  console.log();
  for (const check of report.goals) console.log(`goal ${check.met === true ? 'MET   ' : check.met === false ? 'MISSED' : 'N/A   '} ${check.goal}: ${check.detail}`);
}

function fixed(value: number | undefined): string {
  return value === undefined ? '' : value.toFixed(3);
}
