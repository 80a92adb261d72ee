/**
 * The retrievers the benchmarks compare: plain BM25 over the turns, an
 * embedder alone (cosine only, through core's search with every other
 * channel weighted 0), and memloom's hybrid search as it ships.
 */
import { createMemory, TextIndex, type Embedder, type MemoryStore, type RetrievalConfigInput } from '@memloom/core';
import { createFakeClock, createInMemoryStore } from '@memloom/core/testing';
import { createSqliteStore } from '@memloom/store-sqlite';
import { embedderWarmUp, scoredQuestions, turnText, type LocomoConversation, type LocomoRetriever, type LocomoTurn } from './locomo.js';

/** Plain BM25 (core's TextIndex, k1 1.2, b 0.75) over the turn texts; no merging. */
export function createBm25Retriever(): LocomoRetriever {
  const index = new TextIndex();
  const sourceOf = new Map<string, string>();
  return {
    async ingest(turns) {
      for (const [position, turn] of turns.entries()) {
        const id = String(position);
        index.set(id, turnText(turn));
        sourceOf.set(id, turn.diaId);
      }
    },
    async search(question, k) {
      return index.search(question, k).map((hit) => [sourceOf.get(hit.id) as string]);
    },
    async size() {
      return index.size;
    },
  };
}

/** Cosine of the embedder's vectors only: semantic weight 1, text, weight, recency and date 0. */
export const VECTOR_ONLY: RetrievalConfigInput = { weights: { semantic: 1, text: 0, weight: 0, recency: 0, date: 0 } };

export interface MemoryRetrieverOptions {
  embedder: Embedder;
  /** Retrieval settings passed to createMemory; omitted for the defaults as they ship. */
  retrieval?: RetrievalConfigInput;
  /**
   * Embed texts in batches ahead, so that add and search hit a warm cache:
   * the conversation's questions before the ingest timer (search time is then
   * memloom's search without the question's embedding), its turns (and
   * contexts) at the start of the timed ingest.
   */
  prewarm?: (texts: string[], purpose: 'document' | 'query') => Promise<void>;
  /**
   * Pass this many preceding turns of the same session (their memory texts,
   * oldest first, one per line) as `add(text, { context })`: kept as the
   * memory's context, they shape its vector and its keyword index; its
   * content stays the turn's text. 0: no context.
   */
  contextTurns?: number;
  /** Where memories live: core's in-memory store (BM25 TextIndex) or the SQLite store in memory (FTS5). @default 'memory' */
  store?: 'memory' | 'sqlite';
  /** false: add every turn with `merge: false` (no merging, one memory per turn). */
  merge?: boolean;
}

/** The memory texts of up to `count` turns before `index` in the same session, oldest first, one per line. */
export function contextOf(turns: readonly LocomoTurn[], index: number, count: number): string | undefined {
  const lines: string[] = [];
  const session = turns[index]?.session;
  for (let back = 1; back <= count; back++) {
    const turn = turns[index - back];
    if (!turn || turn.session !== session) break;
    lines.unshift(turnText(turn));
  }
  return lines.length > 0 ? lines.join('\n') : undefined;
}

function storeFor(kind: 'memory' | 'sqlite' | undefined): MemoryStore {
  return kind === 'sqlite' ? createSqliteStore({ path: ':memory:' }) : createInMemoryStore();
}

/**
 * memloom itself: createMemory over the in-memory store (BM25 text channel
 * included), each turn added in order with its session date and dia_id as
 * source. The clock stands at the last session's date, when the questions
 * are asked.
 */
export function createMemoryRetriever(conversation: LocomoConversation, options: MemoryRetrieverOptions): LocomoRetriever {
  const lastTurn = conversation.turns[conversation.turns.length - 1] as LocomoTurn;
  const clock = createFakeClock(lastTurn.at.getTime());
  const memory = createMemory({
    store: storeFor(options.store),
    embedder: options.embedder,
    clock,
    // Ids in order of arrival, so ties rank the same in every run.
    generateId: counter(),
    ...(options.retrieval ? { retrieval: options.retrieval } : {}),
  });
  return {
    ...embedderWarmUp(options.embedder, async () => {
      await options.prewarm?.(
        scoredQuestions(conversation).map((question) => question.question),
        'query',
      );
      // The store is opened (made) here, before the ingest timer, as every row's is.
      await memory.count();
    }),
    async ingest(turns) {
      const contexts = turns.map((_, index) => (options.contextTurns ? contextOf(turns, index, options.contextTurns) : undefined));
      await options.prewarm?.([...turns.map(turnText), ...contexts.filter((text): text is string => !!text)], 'document');
      for (const [index, turn] of turns.entries()) {
        const context = contexts[index];
        await memory.add(turnText(turn), {
          at: turn.at,
          sources: [turn.diaId],
          trigger: 'import',
          ...(context ? { context } : {}),
          ...(options.merge === false ? { merge: false } : {}),
        });
      }
    },
    async search(question, k) {
      const results = await memory.search(question, { limit: k });
      return results.map((result) => result.memory.sources);
    },
    size: () => memory.count(),
    close: () => memory.close(),
  };
}

function counter(): () => string {
  let next = 0;
  return () => `m${String(++next).padStart(6, '0')}`;
}
