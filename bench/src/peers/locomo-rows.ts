/**
 * The rows of `pnpm bench locomo`: memloom (shipped default and each store),
 * mem0 OSS, LangChain's in-memory vector store and two BM25 floors. Each row
 * says what it is and, when it cannot run here, why: a row is never dropped.
 */
import type { Embedder } from '@memloom/core';
import { createDefaultEmbedder, createLexicalEmbedder, createUseLiteEmbedder } from '@memloom/embeddings';
import type { LocomoConversation, LocomoRetriever } from '../locomo.js';
import { createBm25Retriever } from '../retrievers.js';
import { createLangChainRetriever } from './langchain-peer.js';
import { createMemloomRetriever } from './memloom-peer.js';
import { createPlainBm25Retriever } from './plain-bm25.js';

export type RowGroup = 'memloom' | 'peer' | 'floor';

export interface LocomoRow {
  name: string;
  group: RowGroup;
  label: string;
  description: string;
  /** Whether the row embeds (and so uses `--embedder`). */
  embeds: boolean;
  /** Why the row cannot run here, or undefined when it can. */
  unavailable?: (env: NodeJS.ProcessEnv) => string | undefined;
  create(conversation: LocomoConversation, context: RowContext): Promise<LocomoRetriever> | LocomoRetriever;
}

export interface RowContext {
  /** The embedder shared by the row's conversations (built once per worker). */
  embedder(): Embedder;
  /** `--embedder` as given: 'default' unless told otherwise. */
  embedderName: EmbedderName;
  env: NodeJS.ProcessEnv;
}

export const EMBEDDER_NAMES = ['default', 'lexical', 'use-lite'] as const;
export type EmbedderName = (typeof EMBEDDER_NAMES)[number];

/** The embedder every embedding row uses; 'default' is exactly what createMemory() builds. */
export function createBenchEmbedder(name: EmbedderName): Embedder {
  if (name === 'lexical') return createLexicalEmbedder();
  if (name === 'use-lite') return createUseLiteEmbedder();
  return createDefaultEmbedder();
}

export const LOCOMO_ROWS: readonly LocomoRow[] = [
  {
    name: 'memloom-default',
    group: 'memloom',
    label: 'memloom default: createMemory() (SQLite store), addTurns a session at a time',
    description:
      'createMemory() from memloom in a fresh folder: SQLite at .memloom/memory.db and the embedder it builds itself (the shipped default unless --embedder says otherwise); each session stored with memory.addTurns(turns), which adds each turn (merge / keep both / new) with the 2 turns before it as its context: kept on the memory, in its vector and keyword index; the memory text is the turn alone',
    embeds: true,
    create: (conversation, context) =>
      createMemloomRetriever(conversation, {
        store: 'default',
        ingest: 'turns',
        ...(context.embedderName === 'default' ? {} : { embedderConfig: context.embedderName }),
      }),
  },
  {
    name: 'memloom-default-add',
    group: 'memloom',
    label: 'memloom default, each turn added alone: add(turn)',
    description: 'as memloom-default, but each turn is stored alone with memory.add(turn): no context; merge / keep both / new on every add',
    embeds: true,
    create: (conversation, context) =>
      createMemloomRetriever(conversation, {
        store: 'default',
        ingest: 'add',
        ...(context.embedderName === 'default' ? {} : { embedderConfig: context.embedderName }),
      }),
  },
  {
    name: 'memloom-markdown',
    group: 'memloom',
    label: 'memloom, Markdown store',
    description: "createMemory({ store: { type: 'markdown', root } }) with the bench embedder, addTurns as the default row",
    embeds: true,
    create: (conversation, context) => createMemloomRetriever(conversation, { store: 'markdown', ingest: 'turns', embedder: context.embedder() }),
  },
  {
    name: 'memloom-memory',
    group: 'memloom',
    label: 'memloom, in-memory store',
    description: "createMemory({ store: 'memory:' }) with the bench embedder, addTurns as the default row",
    embeds: true,
    create: (conversation, context) => createMemloomRetriever(conversation, { store: 'memory', ingest: 'turns', embedder: context.embedder() }),
  },
  {
    name: 'memloom-qdrant',
    group: 'memloom',
    label: 'memloom, Qdrant store',
    description: "createMemory({ store: { type: 'qdrant', url: QDRANT_URL } }) with the bench embedder, one collection per run, addTurns as the default row",
    embeds: true,
    unavailable: (env) => (env.QDRANT_URL ? undefined : 'needs a Qdrant server (set QDRANT_URL); none can be installed on this machine (no Docker, no Qdrant binary)'),
    create: (conversation, context) => createMemloomRetriever(conversation, { store: 'qdrant', ingest: 'turns', embedder: context.embedder(), qdrantUrl: context.env.QDRANT_URL as string }),
  },
  {
    name: 'mem0',
    group: 'peer',
    label: 'mem0 OSS, infer: false',
    description:
      "mem0ai/oss Memory: add(turn, { userId, infer: false }) (no LLM, no merging), its 'memory' vector store (better-sqlite3 file, full scan + its BM25 + entity boost), SQLite history, the bench embedder through its 'langchain' embedder provider; search(question, { filters: { user_id }, topK }) with its default threshold 0.1",
    embeds: true,
    create: async (conversation, context) => {
      const { createMem0Retriever } = await import('./mem0-peer.js');
      return createMem0Retriever(conversation, context.embedder());
    },
  },
  {
    name: 'langchain',
    group: 'peer',
    label: 'LangChain MemoryVectorStore',
    description: '@langchain/classic/vectorstores/memory over the bench embedder (MemloomEmbeddings): one document per turn, cosine similarity',
    embeds: true,
    create: (_conversation, context) => createLangChainRetriever(context.embedder()),
  },
  {
    name: 'bm25',
    group: 'floor',
    label: 'plain BM25 (textbook)',
    description: "Okapi BM25, k1 1.2, b 0.75, Lucene's IDF; lowercased letter/digit tokens, NLTK English stopwords removed, no stemming (bench/src/peers/plain-bm25.ts)",
    embeds: false,
    create: () => createPlainBm25Retriever(),
  },
  {
    name: 'bm25-memloom-tokenizer',
    group: 'floor',
    label: "BM25 over memloom's tokenizer",
    description: "core's TextIndex (the text channel of memloom's in-memory and Markdown stores): BM25 k1 1.2, b 0.75 and FTS5's IDF over core's keywordTerms (longer stopword list, Porter stems, past forms read as the verb, CJK bigrams)",
    embeds: false,
    create: () => createBm25Retriever(),
  },
];
