/**
 * The Chinese assistant-memory set (`bench/data/zh-memory.json`): memories
 * about one user, distractors, and paraphrased questions that each have one
 * relevant memory. Measured through memloom's search (createMemory over the
 * in-memory store), recall@k = share of queries whose memory is in the top k.
 */
import { readFile } from 'node:fs/promises';
import { createMemory, tokenize, type Embedder, type RetrievalConfigInput } from '@memloom/core';
import { createFakeClock, createInMemoryStore } from '@memloom/core/testing';

export interface ZhMemorySet {
  memories: { id: string; content: string }[];
  distractors: string[];
  queries: { query: string; relevant: string[]; mixed?: boolean }[];
}

export interface ZhRecall {
  queries: number;
  memories: number;
  /** Recall over every query, per k. */
  overall: Record<number, number>;
  /** Chinese-only queries. */
  chinese: { queries: number; recall: Record<number, number> };
  /** Queries or memories that mix English and Chinese. */
  mixed: { queries: number; recall: Record<number, number> };
  /**
   * Queries that share a word or a CJK character bigram with their memory
   * (besides 用户 / user, which every memory has) and queries that share none:
   * the second kind needs semantics, not matching.
   */
  sharingTerms: { queries: number; recall: Record<number, number> };
  sharingNoTerm: { queries: number; recall: Record<number, number> };
  /** Queries whose memory was not in the top 5, for reading. */
  misses: string[];
}

export async function loadZhMemorySet(path: string): Promise<ZhMemorySet> {
  const raw: unknown = JSON.parse(await readFile(path, 'utf8'));
  const set = raw as ZhMemorySet;
  if (!Array.isArray(set?.memories) || !Array.isArray(set.queries) || !Array.isArray(set.distractors)) {
    throw new Error(`${path}: expected memories, distractors and queries lists`);
  }
  const ids = new Set(set.memories.map((memory) => memory.id));
  for (const query of set.queries) {
    if (typeof query.query !== 'string' || !Array.isArray(query.relevant) || !query.relevant.every((id) => ids.has(id))) {
      throw new Error(`${path}: query ${JSON.stringify(query.query)} names an unknown memory`);
    }
  }
  return set;
}

/** Add every memory (and distractor) to a fresh memory, then search each query. */
export async function runZhMemorySet(
  set: ZhMemorySet,
  embedder: Embedder,
  options: { retrieval?: RetrievalConfigInput; ks?: number[] } = {},
): Promise<ZhRecall> {
  const ks = options.ks ?? [1, 5];
  const memory = createMemory({
    store: createInMemoryStore(),
    embedder,
    clock: createFakeClock('2025-06-01T12:00:00Z'),
    // Ids in order of arrival, so ties rank the same in every run.
    generateId: counter(),
    ...(options.retrieval ? { retrieval: options.retrieval } : {}),
  });
  for (const item of set.memories) await memory.add(item.content, { sources: [item.id], at: '2025-05-01T12:00:00Z' });
  for (const [index, text] of set.distractors.entries()) await memory.add(text, { sources: [`distractor-${index}`], at: '2025-05-01T12:00:00Z' });

  const rows: { mixed: boolean; sharing: boolean; hits: Record<number, number> }[] = [];
  const contentOf = new Map(set.memories.map((item) => [item.id, item.content]));
  const misses: string[] = [];
  const maxK = Math.max(...ks);
  for (const query of set.queries) {
    const results = await memory.search(query.query, { limit: maxK });
    const hits: Record<number, number> = {};
    for (const k of ks) {
      const found = new Set(results.slice(0, k).flatMap((result) => result.memory.sources));
      hits[k] = query.relevant.filter((id) => found.has(id)).length / query.relevant.length;
    }
    if ((hits[maxK] ?? 0) < 1) misses.push(query.query);
    const sharing = query.relevant.some((id) => sharesTerm(query.query, contentOf.get(id) ?? ''));
    rows.push({ mixed: !!query.mixed, sharing, hits });
  }
  const memories = await memory.count();
  await memory.close();
  const mean = (subset: typeof rows) => {
    const out: Record<number, number> = {};
    for (const k of ks) out[k] = subset.length ? subset.reduce((sum, row) => sum + (row.hits[k] ?? 0), 0) / subset.length : 0;
    return out;
  };
  const chinese = rows.filter((row) => !row.mixed);
  const mixed = rows.filter((row) => row.mixed);
  return {
    queries: rows.length,
    memories,
    overall: mean(rows),
    chinese: { queries: chinese.length, recall: mean(chinese) },
    mixed: { queries: mixed.length, recall: mean(mixed) },
    sharingTerms: { queries: rows.filter((row) => row.sharing).length, recall: mean(rows.filter((row) => row.sharing)) },
    sharingNoTerm: { queries: rows.filter((row) => !row.sharing).length, recall: mean(rows.filter((row) => !row.sharing)) },
    misses,
  };
}

const UBIQUITOUS = new Set(['用户', 'user']);

/** True when the two texts share a search term of two or more characters (a word, or a CJK bigram). */
export function sharesTerm(query: string, memory: string): boolean {
  const terms = new Set(tokenize(memory).filter((term) => Array.from(term).length >= 2 && !UBIQUITOUS.has(term)));
  return tokenize(query).some((term) => terms.has(term));
}

function counter(): () => string {
  let next = 0;
  return () => `m${String(++next).padStart(6, '0')}`;
}
