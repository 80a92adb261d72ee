/**
 * `pnpm bench approximate [--sizes 5000,10000,20000,100000] [--queries 1000] [--share 0.005] [--data <locomo dir>]`
 *
 * What the approximate merge lookup (core's `FlatVectorIndex`, bit codes,
 * used by the SQLite store for users with at least `vectorApproximateFrom`
 * memories) gives up against the exact scan, on text that reads like a
 * conversation, embedded with the default embedder:
 *
 * - The pool of one user's memories: the LoCoMo turns of every conversation
 *   but the last, and made-up turns up to the size, each one of those turns'
 *   first half joined to another's second half (seeded), so that vocabulary,
 *   length and how alike the turns are follow real chat.
 * - Queries, as `add` makes them, from the last conversation, which the pool
 *   never saw: each turn looked up as it is (a new memory: its nearest is
 *   whatever is closest), and its near twin (the turn with one word in eight
 *   dropped, the kind of restatement that merges) looked up while the turn
 *   itself is in the pool.
 * - For each: the nearest memory by exact scan and by the approximate search,
 *   and the seed-004 decision each leads to (merge at >= 0.85, keep both at
 *   >= 0.6, else new: core's defaults).
 *
 * Prints a table and writes bench/results/approximate-<date>.json.
 */
import { decideUpdate, FlatVectorIndex, strategyConfigSchema, type Embedder } from '@memloom/core';
import { seededRandom } from '@memloom/core/testing';
import { createDefaultEmbedder } from '@memloom/embeddings';
import { describeGit, locomoDir, option, packageFacts, percentiles, printTable, round, startRun, writeResults, type Percentiles } from './bench-report.js';
import { loadLocomo, turnText } from './locomo.js';

const args = process.argv.slice(2);
const sizes = (option(args, '--sizes') ?? '5000,10000,20000,100000').split(',').map(Number);
const queryCount = Number(option(args, '--queries') ?? 1000);
/** FlatVectorIndex's approximateShare; the default when not given. */
const share = option(args, '--share') === undefined ? undefined : Number(option(args, '--share'));
if (sizes.some((size) => !Number.isInteger(size) || size < 1000) || !Number.isInteger(queryCount) || queryCount < 1) {
  throw new Error('--sizes takes integers of at least 1000, --queries a positive integer');
}
/** Core's seed-004 thresholds as they ship (merge at highSimilarity, keep both at mediumSimilarity). */
const STRATEGY = strategyConfigSchema.parse({});
const MEDIUM = STRATEGY.mediumSimilarity;

const { started, git, stamp } = startRun('approximate', args);
const dataDir = locomoDir(args);
const conversations = await loadLocomo(dataDir);
if (conversations.length < 2) throw new Error('the approximate bench needs at least two LoCoMo conversations: the last one gives the queries');
const turns = conversations.slice(0, -1).flatMap((conversation) => conversation.turns.map(turnText));
const heldOut = (conversations.at(-1)?.turns ?? []).map(turnText);
const embedder: Embedder = createDefaultEmbedder();
const random = seededRandom(2026);

/** A made-up turn: the first half of one real turn and the second half of another. */
function spliced(): string {
  const first = (turns[Math.floor(random() * turns.length)] as string).split(' ');
  const second = (turns[Math.floor(random() * turns.length)] as string).split(' ');
  return [...first.slice(0, Math.ceil(first.length / 2)), ...second.slice(Math.floor(second.length / 2))].join(' ');
}

/** The turn with every eighth word (from a random start) left out. */
function twinOf(text: string): string {
  const words = text.split(' ');
  const start = Math.floor(random() * 8);
  return words.filter((_, index) => index < 3 || (index - start) % 8 !== 0).join(' ');
}

async function embedAll(texts: string[]): Promise<number[][]> {
  const vectors: number[][] = [];
  for (let start = 0; start < texts.length; start += 2000) {
    vectors.push(...(await embedder.embed(texts.slice(start, start + 2000))));
    process.stderr.write(`\r  embedded ${vectors.length.toLocaleString('en')} / ${texts.length.toLocaleString('en')}`);
  }
  process.stderr.write('\n');
  return vectors;
}

/** The decision `add` takes on a nearest memory of this score (core's own rule; the level only matters for upgrades). */
const decision = (score: number | undefined): string =>
  decideUpdate(score === undefined ? undefined : { id: 'nearest', level: 'full', similarity: score }, STRATEGY).strategy;

interface Outcome {
  queries: number;
  sameNearest: number;
  sameDecision: number;
  /** Exact nearest at or above 0.6 (keep both or merge): how many, and how many the approximate search found. */
  nearestAtLeastMedium: number;
  nearestAtLeastMediumFound: number;
  exactMs: Percentiles;
  approximateMs: Percentiles;
}

interface SizeResult {
  size: number;
  realTurns: number;
  madeUp: number;
  candidatesScored: number;
  firstApproximateSearchMs: number;
  turnsAsQueries: Outcome;
  nearTwins: Outcome;
}

const results: SizeResult[] = [];
for (const size of sizes) {
  process.stderr.write(`approximate bench: ${size.toLocaleString('en')} memories in one user\n`);
  const texts = [...turns.slice(0, size)];
  while (texts.length < size) texts.push(spliced());
  const vectors = await embedAll(texts);
  const index = new FlatVectorIndex(embedder.dimension, { approximateFrom: 1, ...(share !== undefined ? { approximateShare: share } : {}) });
  index.reserveFor(size + 1);
  vectors.forEach((vector, key) => index.set(key, vector, 'user'));
  const queries = heldOut.slice(0, queryCount);
  const queryVectors = await embedder.embed(queries);

  const firstStarted = performance.now();
  index.nearest(vectors[0] as number[], 1, 'user', { approximate: true });
  const firstApproximateSearchMs = round(performance.now() - firstStarted);

  // A turn the pool never saw.
  const turnsAsQueries = compare(queryVectors.map((vector) => ({ vector })), index);
  // Its near twin, with the turn in the pool (under key `size`) while the twin is looked up.
  const twinVectors = await embedder.embed(queries.map(twinOf));
  const nearTwins = compare(
    twinVectors.map((vector, at) => ({ vector, withTurn: queryVectors[at] as number[] })),
    index,
  );
  results.push({
    size,
    realTurns: Math.min(turns.length, size),
    madeUp: size - Math.min(turns.length, size),
    candidatesScored: Math.max(256, Math.ceil(size * index.approximateShare)),
    firstApproximateSearchMs,
    turnsAsQueries,
    nearTwins,
  });
}

function compare(queries: { vector: number[]; withTurn?: number[] }[], index: FlatVectorIndex): Outcome {
  const outcome = { queries: 0, sameNearest: 0, sameDecision: 0, nearestAtLeastMedium: 0, nearestAtLeastMediumFound: 0 };
  const exactTimes: number[] = [];
  const approximateTimes: number[] = [];
  for (const query of queries) {
    if (query.withTurn) index.set(index.size, query.withTurn, 'user');
    let at = performance.now();
    const [exact] = index.nearest(query.vector, 1, 'user');
    exactTimes.push(performance.now() - at);
    at = performance.now();
    const [approximate] = index.nearest(query.vector, 1, 'user', { approximate: true });
    approximateTimes.push(performance.now() - at);
    if (query.withTurn) index.delete(index.size - 1);
    outcome.queries++;
    if (exact?.key === approximate?.key) outcome.sameNearest++;
    if (decision(exact?.score) === decision(approximate?.score)) outcome.sameDecision++;
    if ((exact?.score ?? 0) >= MEDIUM) {
      outcome.nearestAtLeastMedium++;
      if (exact?.key === approximate?.key) outcome.nearestAtLeastMediumFound++;
    }
  }
  return { ...outcome, exactMs: percentiles(exactTimes), approximateMs: percentiles(approximateTimes) };
}

const percent = (part: number, whole: number) => (whole === 0 ? '-' : `${round((100 * part) / whole, 1)} %`);
const rows: (string | number)[][] = [['size', 'queries', 'same nearest', 'same decision', 'nearest >= 0.6 found', 'exact p50 ms', 'approximate p50 ms']];
for (const result of results) {
  for (const [name, outcome] of [
    ['new turns', result.turnsAsQueries],
    ['near twins', result.nearTwins],
  ] as const) {
    rows.push([
      `${result.size.toLocaleString('en')} (${name})`,
      outcome.queries,
      percent(outcome.sameNearest, outcome.queries),
      percent(outcome.sameDecision, outcome.queries),
      `${percent(outcome.nearestAtLeastMediumFound, outcome.nearestAtLeastMedium)} of ${outcome.nearestAtLeastMedium}`,
      outcome.exactMs.p50,
      outcome.approximateMs.p50,
    ]);
  }
}
console.log(`code: ${describeGit(git)}`);
printTable(rows);

const report = {
  ...stamp(packageFacts(['@memloom/core', '@memloom/embeddings'])),
  setup: {
    pool: "one user's memories: the LoCoMo turns of every conversation but the last, then made-up turns (the first half of one of those turns joined to the second half of another, seeded) up to the size; the default embedder",
    queries: `up to ${queryCount} turns of the last LoCoMo conversation (never in the pool, nor spliced into it), each looked up as it is, and a near twin of each (one word in eight dropped) looked up while the turn is in the pool`,
    compared: `the nearest memory by exact scan and by FlatVectorIndex's approximate search (bit codes, then exact scores for the closest codes), and the decision each leads to (core's decideUpdate with its shipped thresholds: merge >= ${STRATEGY.highSimilarity}, keep both >= ${MEDIUM}, else new)`,
    timing: 'each search alone, the index in memory; the first approximate search makes every code and is timed apart',
  },
  results,
};
const file = writeResults('approximate', started, report);
console.log(`\nwritten to ${file}`);
