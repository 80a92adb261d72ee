import { BaseEmbedding } from '@llamaindex/core/embeddings';
import type { MessageContentDetail } from '@llamaindex/core/llms';
import { MockLLM } from '@llamaindex/core/llms/mock';
import { createMemory, MemloomError } from '@memloom/core';
import { axisVector, createFakeClock, createInMemoryStore } from '@memloom/core/testing';
import { describe, expect, it } from 'vitest';
import { fromLlamaIndexEmbedding, fromLlamaIndexLLM } from '../src/index.js';
import { ScriptedLLM, textsByRole } from './helpers.js';

/** A LlamaIndex embedding with fixed vectors per keyword; records how it was called. */
class KeywordEmbedding extends BaseEmbedding {
  readonly documents: string[] = [];
  readonly queries: string[] = [];
  constructor(private readonly dimension = 4) {
    super();
    this.embedInfo = { dimensions: dimension };
  }
  async getTextEmbedding(text: string): Promise<number[]> {
    this.documents.push(text);
    return this.vectorFor(text);
  }
  override async getQueryEmbedding(query: MessageContentDetail): Promise<number[] | null> {
    const text = query.type === 'text' ? query.text : '';
    this.queries.push(text);
    return this.vectorFor(text);
  }
  private vectorFor(text: string): number[] {
    const axis = /coffee/i.test(text) ? 0 : /tea/i.test(text) ? 1 : /bike/i.test(text) ? 2 : 3;
    return axisVector(this.dimension, axis);
  }
}

describe('fromLlamaIndexLLM', () => {
  it("sends memloom's system text and prompt as chat messages and returns the reply text", async () => {
    const llm = new ScriptedLLM(() => ({ content: 'merged answer' }));
    const model = fromLlamaIndexLLM(llm);
    expect(model.id).toBe('llamaindex:scripted');
    expect(await model.generate({ system: 'be brief', prompt: 'merge these' })).toBe('merged answer');
    expect(textsByRole(llm.requests[0]!, 'system')).toEqual(['be brief']);
    expect(textsByRole(llm.requests[0]!, 'user')).toEqual(['merge these']);
  });

  it("drives core's merge text when used as the memory's language model", async () => {
    const llm = new MockLLM({ responseMessage: 'Drinks oat-milk flat whites, no sugar.', timeBetweenToken: 0 });
    const memory = createMemory({
      store: createInMemoryStore(),
      embedder: fromLlamaIndexEmbedding(new KeywordEmbedding(), { id: 'test:keywords' }),
      languageModel: fromLlamaIndexLLM(llm, { id: 'mock' }),
      clock: createFakeClock(),
    });
    const scope = { userId: 'alice' };
    await memory.add('Drinks coffee with oat milk.', { scope });
    const { decision, memory: merged, modelFallback } = await memory.add('Takes her coffee without sugar.', { scope });
    expect(decision.strategy).toBe('merge_update');
    expect(modelFallback).toBeUndefined();
    expect(merged.content).toBe('Drinks oat-milk flat whites, no sugar.');
  });

  it('stops waiting when memloom aborts the call', async () => {
    let release: (value: { message: { role: 'assistant'; content: string }; raw: null }) => void = () => {};
    const slow = { metadata: { model: 'slow' }, chat: () => new Promise((resolve) => (release = resolve)) };
    const model = fromLlamaIndexLLM(slow as never);
    const controller = new AbortController();
    const answer = model.generate({ prompt: 'hello', signal: controller.signal });
    controller.abort(new Error('timed out'));
    await expect(answer).rejects.toMatchObject({ code: 'MODEL_ERROR', message: expect.stringContaining('timed out') });
    release({ message: { role: 'assistant', content: 'too late' }, raw: null });
  });

  it('turns a failed call or a reply without content into MODEL_ERROR and rejects a non-LLM', async () => {
    const empty = fromLlamaIndexLLM({ metadata: { model: 'x' }, chat: async () => ({ raw: null }) } as never);
    await expect(empty.generate({ prompt: 'hi' })).rejects.toMatchObject({ code: 'MODEL_ERROR' });
    const refused = new Error('401 Unauthorized');
    const failing = fromLlamaIndexLLM({ metadata: { model: 'x' }, chat: async () => Promise.reject(refused) } as never);
    await expect(failing.generate({ prompt: 'hi' })).rejects.toMatchObject({ code: 'MODEL_ERROR', backend: 'llamaindex', message: expect.stringContaining('401 Unauthorized'), cause: refused });
    await expect(failing.generate({ prompt: 'hi', signal: AbortSignal.abort(new Error('gave up')) })).rejects.toMatchObject({ code: 'MODEL_ERROR', message: expect.stringContaining('gave up') });
    expect(() => fromLlamaIndexLLM({} as never)).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
    expect(() => fromLlamaIndexLLM(new MockLLM(), { id: ' ' })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
  });
});

describe('fromLlamaIndexEmbedding', () => {
  it('embeds documents in batches and queries with getQueryEmbedding, inside a memloom Memory', async () => {
    const embedding = new KeywordEmbedding();
    const embedder = fromLlamaIndexEmbedding(embedding);
    expect(embedder).toMatchObject({ id: 'llamaindex:KeywordEmbedding', dimension: 4 });
    const memory = createMemory({ store: createInMemoryStore(), embedder, clock: createFakeClock() });
    const scope = { userId: 'alice' };
    await memory.add('Commutes by bike every day.', { scope });
    await memory.add('Loves green tea in the evening.', { scope });
    expect(embedding.documents).toEqual(['Commutes by bike every day.', 'Loves green tea in the evening.']);

    const [best] = await memory.search('what tea should I buy?', { scope });
    expect(best!.memory.content).toBe('Loves green tea in the evening.');
    expect(embedding.queries).toEqual(['what tea should I buy?']);
  });

  it('gives unit vectors whatever length the model returns them at', async () => {
    const embedding = new KeywordEmbedding();
    const scaled = { ...embedding, getTextEmbeddingsBatch: async (texts: string[]) => texts.map(() => [0, 3, 0, 4]), getQueryEmbedding: async () => [27, 0, 0, 0] };
    const embedder = fromLlamaIndexEmbedding(scaled as never, { id: 'test:scaled', dimension: 4 });
    expect(await embedder.embed(['a', 'b'])).toEqual([[0, 0.6, 0, 0.8], [0, 0.6, 0, 0.8]]);
    expect(await embedder.embed(['q'], { purpose: 'query' })).toEqual([[1, 0, 0, 0]]);
  });

  it('needs a dimension, and memloom refuses vectors that do not match it', async () => {
    const embedding = new KeywordEmbedding();
    embedding.embedInfo = {};
    expect(() => fromLlamaIndexEmbedding(embedding)).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining('pass { dimension }') }));
    expect(() => fromLlamaIndexEmbedding(embedding, { dimension: 2.5 })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
    expect(() => fromLlamaIndexEmbedding(embedding, { dimension: '8' as never })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining('got "8"') }));
    expect(() => fromLlamaIndexEmbedding({} as never)).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));

    const memory = createMemory({ store: createInMemoryStore(), embedder: fromLlamaIndexEmbedding(embedding, { dimension: 8 }) });
    const error = await memory.add('Commutes by bike.', { scope: { userId: 'alice' } }).catch((caught: unknown) => caught);
    expect(MemloomError.hasCode(error, 'INVALID_EMBEDDING')).toBe(true);
    expect(await memory.count({ scope: { userId: 'alice' } })).toBe(0);
  });
});
