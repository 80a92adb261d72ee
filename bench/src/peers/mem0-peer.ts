/**
 * mem0's open-source TypeScript SDK (`mem0ai/oss` `Memory`) run locally with
 * no LLM: `add(…, { infer: false })` stores each message as it is (no fact
 * extraction, no merging), its `memory` vector store (better-sqlite3, a full
 * scan per search, fused with its own BM25 over lemmatized text), its SQLite
 * history, and memloom's embedder through mem0's `langchain` embedder
 * provider (`MemloomEmbeddings` from @memloom/langchain-memory), so both
 * sides embed with the same model.
 *
 * mem0 reads MEM0_TELEMETRY when its module loads: the bench sets it to
 * "false" before importing, so nothing is sent anywhere. It still writes an
 * anonymous id to ~/.mem0/config.json.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Embedder } from '@memloom/core';
import { MemloomEmbeddings } from '@memloom/langchain-memory';
import { embedderWarmUp, turnText, type LocomoConversation, type LocomoRetriever } from '../locomo.js';

process.env.MEM0_TELEMETRY = 'false';
const { Memory } = await import('mem0ai/oss');

export type Mem0Memory = InstanceType<typeof Memory>;

/** What the bench sets; everything else is mem0's default. */
export function mem0Config(embedder: Embedder, folder: string) {
  return {
    embedder: { provider: 'langchain', config: { model: new MemloomEmbeddings(embedder) } },
    vectorStore: {
      provider: 'memory',
      // mem0's default path is ~/.mem0/vector_store.db; a fresh file per run instead.
      config: { collectionName: 'memories', dimension: embedder.dimension, dbPath: join(folder, 'vector_store.db') },
    },
    // Never called with infer: false; mem0 builds its LLM client at construction and needs a key for it.
    llm: { provider: 'openai', config: { apiKey: 'not-used-with-infer-false', model: 'gpt-4.1-nano' } },
    historyDbPath: join(folder, 'history.db'),
  };
}

/** A mem0 Memory in a fresh temporary folder, initialized; `dispose` removes the folder. */
export async function createMem0Peer(embedder: Embedder): Promise<{ memory: Mem0Memory; folder: string; config: ReturnType<typeof mem0Config>; dispose(): Promise<void> }> {
  const folder = mkdtempSync(join(tmpdir(), 'mem0-peer-'));
  const config = mem0Config(embedder, folder);
  const memory = new Memory(config as ConstructorParameters<typeof Memory>[0]);
  // The constructor starts initialization: the vector store (no probe embedding: the config gives the dimension). Wait for it.
  await (memory as unknown as { _ensureInitialized(): Promise<void> })._ensureInitialized();
  return {
    memory,
    folder,
    config,
    async dispose() {
      const internals = memory as unknown as { vectorStore?: { db?: { close(): void } }; _entityStore?: { db?: { close(): void } }; db?: { close?(): void } };
      internals.vectorStore?.db?.close();
      internals._entityStore?.db?.close();
      internals.db?.close?.();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** The LoCoMo retriever over mem0: one userId per conversation, every turn one `add` with infer: false. */
export async function createMem0Retriever(conversation: LocomoConversation, embedder: Embedder): Promise<LocomoRetriever> {
  const peer = await createMem0Peer(embedder);
  const userId = conversation.id;
  return {
    ...embedderWarmUp(embedder),
    async ingest(turns) {
      for (const turn of turns) {
        // mem0 rejects a caller's timestamp without its hosted temporal feature: the session date goes in metadata.
        await peer.memory.add(turnText(turn), { userId, infer: false, metadata: { dia_id: turn.diaId, session_date: turn.at.toISOString() } });
      }
    },
    async search(question, k) {
      const found = await peer.memory.search(question, { filters: { user_id: userId }, topK: k });
      return found.results.map((result) => [String((result.metadata as Record<string, unknown> | undefined)?.dia_id)]);
    },
    async size() {
      const all = await peer.memory.getAll({ filters: { user_id: userId }, topK: 1_000_000 });
      return all.results.length;
    },
    close: () => peer.dispose(),
  };
}
