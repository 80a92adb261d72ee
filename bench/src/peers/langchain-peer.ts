/**
 * LangChain's in-memory vector store (`MemoryVectorStore`, which moved from
 * `langchain/vectorstores/memory` to `@langchain/classic/vectorstores/memory`
 * in LangChain 1.x) over memloom's embedder as LangChain `Embeddings`: every
 * turn one document, cosine similarity over all of them, nothing merged.
 */
import { MemoryVectorStore } from '@langchain/classic/vectorstores/memory';
import type { Embedder } from '@memloom/core';
import { MemloomEmbeddings } from '@memloom/langchain-memory';
import { embedderWarmUp, turnText, type LocomoRetriever } from '../locomo.js';

export function createLangChainRetriever(embedder: Embedder): LocomoRetriever {
  const store = new MemoryVectorStore(new MemloomEmbeddings(embedder));
  return {
    ...embedderWarmUp(embedder),
    async ingest(turns) {
      // One addDocuments call, as a LangChain user indexes a corpus (it embeds them in one embedDocuments batch).
      await store.addDocuments(turns.map((turn) => ({ pageContent: turnText(turn), metadata: { diaId: turn.diaId, at: turn.at.toISOString() } })));
    },
    async search(question, k) {
      const documents = await store.similaritySearch(question, k);
      return documents.map((document) => [String(document.metadata.diaId)]);
    },
    async size() {
      return store.memoryVectors.length;
    },
  };
}
