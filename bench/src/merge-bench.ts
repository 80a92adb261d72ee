/**
 * `pnpm bench merge [--data <pairs file>]`
 *
 * How well the offline merge keeps what is still true and drops what the new
 * statement made stale, on labelled pairs (bench/data/merge-pairs.json: an old
 * memory, a new statement, substrings to keep, to drop, to hold at most once).
 * For each pair:
 *
 * - direct: `mergeDeterministic(old, new, 'full', 10_000)`, the merge alone;
 * - through add: `createMemory` with the default embedder and an in-memory
 *   store, `add(old)` then `add(new)` for one user; the decision (strategy,
 *   similarity) and every memory the user then holds, scored together (the
 *   merged memory when add merged; both memories when it kept both or made a
 *   new one).
 *
 * Prints a table and writes bench/results/merge-<date>.json with each failure.
 */
import { createMemory, hasCjk, mergeDeterministic, type Embedder, type UpdateDecision } from '@memloom/core';
import { createInMemoryStore } from '@memloom/core/testing';
import { createDefaultEmbedder } from '@memloom/embeddings';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchDir, describeGit, displayPath, option, packageFacts, percentiles, printTable, round, startRun, writeResults } from './bench-report.js';

export interface MergePair {
  id: string;
  /** The reviewer set the pair comes from (a key of the file's `sets`). */
  set: string;
  old: string;
  new: string;
  /** Substrings the merged text must hold. */
  keep: string[];
  /** Substrings the new statement made stale: the merged text must not hold them. */
  drop: string[];
  /** Substrings the merged text may hold at most once. */
  once: string[];
}

export interface MergePairsFile {
  about: string;
  sets: Record<string, string>;
  pairs: MergePair[];
}

export const DEFAULT_PAIRS_FILE = join(benchDir, 'data', 'merge-pairs.json');

/** What a merged text gets wrong against a pair's labels; empty when it passes. */
export function mergeFailures(text: string, labels: Pick<MergePair, 'keep' | 'drop' | 'once'>): string[] {
  return [
    ...labels.keep.filter((keep) => !text.includes(keep)).map((keep) => `lost "${keep}"`),
    ...labels.drop.filter((drop) => text.includes(drop)).map((drop) => `kept stale "${drop}"`),
    ...labels.once.filter((once) => text.split(once).length > 2).map((once) => `repeats "${once}"`),
  ];
}

/** What is wrong with a pairs file's shape (ids unique, fields typed, labels non-empty strings); empty when nothing. */
export function pairsFileProblems(file: unknown): string[] {
  const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
  if (!isObject(file) || typeof file.about !== 'string' || !isObject(file.sets) || !Array.isArray(file.pairs)) {
    return ['a pairs file is an object with about (string), sets (object) and pairs (array)'];
  }
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const [index, pair] of (file.pairs as unknown[]).entries()) {
    const at = `pairs[${index}]`;
    if (!isObject(pair)) {
      problems.push(`${at} is not an object`);
      continue;
    }
    for (const key of ['id', 'set', 'old', 'new'] as const) {
      if (typeof pair[key] !== 'string' || pair[key] === '') problems.push(`${at}.${key} is not a non-empty string`);
    }
    for (const key of ['keep', 'drop', 'once'] as const) {
      const labels = pair[key];
      if (!Array.isArray(labels) || labels.some((label) => typeof label !== 'string' || label.trim() === '')) problems.push(`${at}.${key} is not a list of non-empty strings`);
    }
    if (Array.isArray(pair.keep) && pair.keep.length === 0) problems.push(`${at}.keep is empty`);
    if (typeof pair.set === 'string' && !Object.hasOwn(file.sets, pair.set)) problems.push(`${at}.set "${pair.set}" is not one of sets`);
    if (typeof pair.id === 'string') {
      if (seen.has(pair.id)) problems.push(`${at}.id "${pair.id}" is not unique`);
      seen.add(pair.id);
    }
  }
  return problems;
}

export function readPairsFile(path: string): MergePairsFile {
  const file: unknown = JSON.parse(readFileSync(path, 'utf8'));
  const problems = pairsFileProblems(file);
  if (problems.length > 0) throw new Error(`${displayPath(path)}: ${problems.slice(0, 5).join('; ')}`);
  return file as MergePairsFile;
}

/** Repeats of each direct merge, timed together (one merge takes tens of microseconds). */
const REPEATS = 50;

interface PairResult {
  id: string;
  set: string;
  language: 'en' | 'zh';
  direct: { text: string; failures: string[]; ms: number };
  add: { strategy: UpdateDecision['strategy']; similarity: number; stored: string[]; failures: string[] };
}

async function runPair(pair: MergePair, embedder: Embedder): Promise<PairResult> {
  const text = mergeDeterministic(pair.old, pair.new, 'full', 10_000);
  const started = performance.now();
  for (let repeat = 0; repeat < REPEATS; repeat++) mergeDeterministic(pair.old, pair.new, 'full', 10_000);
  const ms = (performance.now() - started) / REPEATS;

  const memory = createMemory({ store: createInMemoryStore(), embedder });
  const scope = { userId: 'merge-bench' };
  await memory.add(pair.old, { scope });
  const { decision } = await memory.add(pair.new, { scope });
  const stored = (await memory.list({ scope })).map((record) => record.content);
  await memory.close();
  return {
    id: pair.id,
    set: pair.set,
    language: hasCjk(pair.old + pair.new) ? 'zh' : 'en',
    direct: { text, failures: mergeFailures(text, pair), ms },
    add: { strategy: decision.strategy, similarity: round(decision.similarity, 3), stored, failures: mergeFailures(stored.join('\n'), pair) },
  };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const given = option(args, '--data');
  const dataFile = given ? resolve(process.env.INIT_CWD ?? process.cwd(), given) : DEFAULT_PAIRS_FILE;
  const { started, git, stamp } = startRun('merge', args);
  const { pairs, sets } = readPairsFile(dataFile);
  const embedder = createDefaultEmbedder();

  const results: PairResult[] = [];
  for (const pair of pairs) results.push(await runPair(pair, embedder));

  const groups: [string, PairResult[]][] = [
    ['all pairs', results],
    ['add merged', results.filter((result) => result.add.strategy === 'merge_update')],
    ['English', results.filter((result) => result.language === 'en')],
    ['Chinese', results.filter((result) => result.language === 'zh')],
    // One row per set, in the file's order: which reviewer wrote a pair, and whether it was written blind.
    ...Object.keys(sets).map((set): [string, PairResult[]] => [`set ${set}`, results.filter((result) => result.set === set)]),
  ];
  const summary = groups.map(([name, group]) => ({
    name,
    pairs: group.length,
    passDirect: group.filter((result) => result.direct.failures.length === 0).length,
    passThroughAdd: group.filter((result) => result.add.failures.length === 0).length,
    // Taken in microseconds: percentiles rounds to 0.01, and a merge takes hundredths of a millisecond.
    directMergeMsMedian: group.length === 0 ? null : percentiles(group.map((result) => result.direct.ms * 1000)).p50 / 1000,
  }));
  const percent = (part: number, whole: number) => (whole === 0 ? '-' : `${part} (${round((100 * part) / whole, 1)} %)`);
  console.log(`merge bench, ${displayPath(dataFile)}; code: ${describeGit(git)}`);
  printTable([
    ['', 'pairs', 'pass (direct)', 'pass (through add)', 'ms per merge (median)'],
    ...summary.map((row) => [row.name, row.pairs, percent(row.passDirect, row.pairs), percent(row.passThroughAdd, row.pairs), row.directMergeMsMedian?.toFixed(4) ?? '-']),
  ]);
  const strategies = new Map<string, number>();
  for (const result of results) strategies.set(result.add.strategy, (strategies.get(result.add.strategy) ?? 0) + 1);
  console.log(`add decided: ${[...strategies].map(([strategy, count]) => `${strategy} ${count}`).join(', ')}`);

  const report = {
    ...stamp(packageFacts(['@memloom/core', '@memloom/embeddings'])),
    setup: {
      data: displayPath(dataFile),
      direct: "mergeDeterministic(old, new, 'full', 10000)",
      throughAdd: "createMemory with createDefaultEmbedder() and an in-memory store: add(old), add(new) for one user; every memory the user then holds is scored, joined by new lines (the merged memory when add merged)",
      pass: 'the scored text holds every keep substring, no drop substring, and each once substring at most once',
      timing: `ms per direct merge: ${REPEATS} calls timed together per pair; the median over the pairs of a row`,
      language: 'Chinese when the old memory or the new statement holds a CJK character, else English',
    },
    summary,
    failures: results
      .filter((result) => result.direct.failures.length > 0 || result.add.failures.length > 0)
      .map((result) => ({
        id: result.id,
        set: result.set,
        strategy: result.add.strategy,
        similarity: result.add.similarity,
        direct: result.direct.failures,
        directText: result.direct.text,
        throughAdd: result.add.failures,
        stored: result.add.stored,
      })),
    decisions: Object.fromEntries(results.map((result) => [result.id, { strategy: result.add.strategy, similarity: result.add.similarity }])),
  };
  console.log(`\nwritten to ${writeResults('merge', started, report)}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) await main();
