import { fileURLToPath } from 'node:url';
import type { Embedder } from '@memloom/core';
import { createDefaultEmbedder, createLexicalEmbedder } from '@memloom/embeddings';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadLocomo, runLocomo, scoredQuestions, type LocomoRetriever } from '../src/locomo.js';
import { createLangChainRetriever } from '../src/peers/langchain-peer.js';
import { createMemloomRetriever } from '../src/peers/memloom-peer.js';
import { createMemoryRetriever } from '../src/retrievers.js';

const tiny = fileURLToPath(new URL('./fixtures/locomo-tiny', import.meta.url));

/** A lexical embedder that records each embed call's texts and purpose. */
function recording(): { embedder: Embedder; calls: { texts: string[]; purpose: string | undefined }[] } {
  const inner = createLexicalEmbedder();
  const calls: { texts: string[]; purpose: string | undefined }[] = [];
  return {
    calls,
    embedder: {
      id: inner.id,
      dimension: inner.dimension,
      embed: (texts, options) => {
        calls.push({ texts: [...texts], purpose: options?.purpose });
        return inner.embed(texts, options);
      },
    },
  };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('warm-up before the ingest timer', () => {
  it('runLocomo warms each retriever up before it starts the ingest timer, and counts that time apart', async () => {
    let now = 0;
    vi.spyOn(performance, 'now').mockImplementation(() => now);
    const conversations = await loadLocomo(tiny);
    const run = await runLocomo([conversations[0]!, { ...conversations[0]!, id: 'conv-2' }], (): LocomoRetriever => ({
      async warmUp() {
        now += 160; // a word-vector table loading
      },
      async ingest() {
        now += 5;
      },
      search: async () => [],
      size: async () => 5,
    }));
    expect(run.warmUpMs).toBe(320);
    expect(run.ingestMs).toBe(10);
  });

  it("memloom's, LangChain's and the embeddings bench's retrievers embed once in warmUp, and name the embedder they search with", async () => {
    const [conversation] = await loadLocomo(tiny);
    for (const create of [
      (embedder: Embedder) => createMemloomRetriever(conversation!, { store: 'memory', ingest: 'turns', embedder }),
      (embedder: Embedder) => createLangChainRetriever(embedder),
      (embedder: Embedder) => createMemoryRetriever(conversation!, { embedder }),
    ]) {
      const { embedder, calls } = recording();
      const retriever = await create(embedder);
      expect(calls).toHaveLength(0);
      await retriever.warmUp?.();
      expect(calls).toEqual([{ texts: ['warm up'], purpose: 'document' }]);
      expect(retriever.embedderId).toBe(embedder.id);
      await retriever.close?.();
    }
  });

  it('reports the embedder createMemory built for the default rows, not a placeholder', async () => {
    const [conversation] = await loadLocomo(tiny);
    const retriever = await createMemloomRetriever(conversation!, { store: 'memory', ingest: 'turns' });
    expect(retriever.embedderId).toBe(createDefaultEmbedder().id);
    await retriever.close?.();
  });

  it('the embeddings bench embeds the questions ahead in warmUp, not inside the timed ingest', async () => {
    const [conversation] = await loadLocomo(tiny);
    const prewarmed: { texts: string[]; purpose: string }[] = [];
    const retriever = createMemoryRetriever(conversation!, {
      embedder: createLexicalEmbedder(),
      prewarm: async (texts, purpose) => {
        prewarmed.push({ texts, purpose });
      },
    });
    await retriever.warmUp?.();
    expect(prewarmed).toEqual([{ texts: scoredQuestions(conversation!).map((question) => question.question), purpose: 'query' }]);
    await retriever.ingest(conversation!.turns);
    expect(prewarmed.slice(1).map((call) => call.purpose)).toEqual(['document']);
    await retriever.close?.();
  });
});
