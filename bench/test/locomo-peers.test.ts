import { fileURLToPath } from 'node:url';
import { createLexicalEmbedder } from '@memloom/embeddings';
import { describe, expect, it } from 'vitest';
import { loadLocomo, runLocomo } from '../src/locomo.js';
import { createLangChainRetriever } from '../src/peers/langchain-peer.js';
import { LOCOMO_ROWS } from '../src/peers/locomo-rows.js';
import { createMemloomRetriever, sessionsOf } from '../src/peers/memloom-peer.js';
import { createPlainBm25Retriever } from '../src/peers/plain-bm25.js';

const tiny = fileURLToPath(new URL('./fixtures/locomo-tiny', import.meta.url));

describe('LoCoMo harness on a tiny conversation', () => {
  it('scores plain BM25 per question: every evidence turn found for the two single-hop questions, one of two for the multi-hop one', async () => {
    const run = await runLocomo(await loadLocomo(tiny), () => createPlainBm25Retriever(), [1, 10]);
    expect(run.questions).toBe(3);
    expect(run.memories).toBe(5);
    expect(run.byCategory['single-hop']).toEqual({ questions: 2, recall: { 1: 1, 10: 1 } });
    expect(run.byCategory['multi-hop']?.recall[1]).toBe(0.5);
    expect(run.byCategory['multi-hop']?.recall[10]).toBe(1);
  });

  it('breaks recall down per conversation as well as overall', async () => {
    const [conversation] = await loadLocomo(tiny);
    // A second conversation with the same turns but only the single-hop questions.
    const other = { ...conversation!, id: 'conv-other', questions: conversation!.questions.filter((question) => question.category === 4) };
    const run = await runLocomo([conversation!, other], () => createPlainBm25Retriever(), [1, 10]);
    expect(run.questions).toBe(5);
    expect(run.byConversation).toEqual({
      [conversation!.id]: { questions: 3, recall: { 1: 2.5 / 3, 10: 1 } },
      'conv-other': { questions: 2, recall: { 1: 1, 10: 1 } },
    });
    expect(run.overall[1]).toBeCloseTo(4.5 / 5, 10);
  });

  it('runs memloom through createMemory with each turn as a memory whose sources are its dia_id, by addTurns or add', async () => {
    const [conversation] = await loadLocomo(tiny);
    for (const ingest of ['turns', 'add'] as const) {
      const retriever = await createMemloomRetriever(conversation!, { store: 'memory', embedder: createLexicalEmbedder(), ingest });
      await retriever.ingest(conversation!.turns);
      expect(await retriever.size()).toBeLessThanOrEqual(5);
      const results = await retriever.search("What is the name of Ana's puppy?", 3);
      expect(results.flat()).toContain('D1:1');
      await retriever.close?.();
    }
  });

  it('stores a conversation with addTurns a session at a time, so no turn takes context from another session', async () => {
    const [conversation] = await loadLocomo(tiny);
    expect(sessionsOf(conversation!.turns).map((session) => session.map((turn) => turn.diaId))).toEqual([
      ['D1:1', 'D1:2', 'D1:3'],
      ['D2:1', 'D2:2'],
    ]);
  });

  it('runs LangChain MemoryVectorStore over a memloom embedder and returns the dia_ids of its documents', async () => {
    const [conversation] = await loadLocomo(tiny);
    const retriever = createLangChainRetriever(createLexicalEmbedder());
    await retriever.ingest(conversation!.turns);
    expect(await retriever.size()).toBe(5);
    const results = await retriever.search('Lisbon marathon', 5);
    expect(results).toHaveLength(5);
    expect(results.slice(0, 2).flat().sort()).toEqual(['D1:2', 'D2:1']);
  });

  it('names every row once, and says why the Qdrant row cannot run without QDRANT_URL', () => {
    const names = LOCOMO_ROWS.map((row) => row.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(expect.arrayContaining(['memloom-default', 'memloom-markdown', 'memloom-memory', 'memloom-qdrant', 'mem0', 'langchain', 'bm25']));
    const qdrant = LOCOMO_ROWS.find((row) => row.name === 'memloom-qdrant')!;
    expect(qdrant.unavailable?.({})).toMatch(/QDRANT_URL/);
    expect(qdrant.unavailable?.({ QDRANT_URL: 'http://localhost:6333' })).toBeUndefined();
  });
});
