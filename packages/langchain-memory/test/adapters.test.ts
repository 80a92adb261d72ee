import { Embeddings } from '@langchain/core/embeddings';
import { AIMessage, HumanMessage, SystemMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { SyntheticEmbeddings } from '@langchain/core/utils/testing';
import { createMemory, type Embedder, type EmbedOptions } from '@memloom/core';
import { axisVector, createFakeClock, createInMemoryStore, createScriptedModel, createTestEmbedder, vectorWithSimilarity } from '@memloom/core/testing';
import { describe, expect, it } from 'vitest';
import { fromLangChainChatModel, fromLangChainEmbeddings, MemloomEmbeddings, toLanguageModel } from '../src/index.js';
import { DIM, errorOf } from './helpers.js';

/** A LangChain Embeddings that says which method was used: queries and documents land on different axes. */
class RecordingEmbeddings extends Embeddings {
  readonly calls: string[] = [];
  constructor(private readonly dimension = 8) {
    super({});
  }
  async embedDocuments(documents: string[]): Promise<number[][]> {
    this.calls.push(`documents:${documents.length}`);
    return documents.map(() => [3, 4, ...Array(this.dimension - 2).fill(0)]);
  }
  async embedQuery(_document: string): Promise<number[]> {
    this.calls.push('query');
    return [0, 0, 2, ...Array(this.dimension - 3).fill(0)];
  }
}

describe('fromLangChainEmbeddings', () => {
  it('routes queries to embedQuery and documents to embedDocuments, as unit vectors', async () => {
    const embeddings = new RecordingEmbeddings();
    const embedder = fromLangChainEmbeddings(embeddings, { id: 'test/recording', dimension: 8 });
    expect(await embedder.embed(['a', 'b'])).toEqual([
      [0.6, 0.8, 0, 0, 0, 0, 0, 0],
      [0.6, 0.8, 0, 0, 0, 0, 0, 0],
    ]);
    expect(await embedder.embed(['q'], { purpose: 'query' })).toEqual([[0, 0, 1, 0, 0, 0, 0, 0]]);
    expect(await embedder.embed([])).toEqual([]);
    expect(embeddings.calls).toEqual(['documents:2', 'query']);
  });

  it('serves a Memory end to end, and a wrong dimension is caught by core', async () => {
    const embedder = fromLangChainEmbeddings(new SyntheticEmbeddings({ vectorSize: 16 }), { id: 'langchain/synthetic-16', dimension: 16 });
    const memory = createMemory({ store: createInMemoryStore(), embedder, clock: createFakeClock() });
    await memory.add('Alice sails on Sundays', { scope: { userId: 'alice' } });
    const again = await memory.add('Alice sails on Sundays', { scope: { userId: 'alice' } });
    expect(again.decision.strategy).toBe('merge_update');
    expect((await memory.search('sails', { scope: { userId: 'alice' } }))[0]?.memory.content).toBe('Alice sails on Sundays');

    const wrong = fromLangChainEmbeddings(new SyntheticEmbeddings({ vectorSize: 16 }), { id: 'langchain/synthetic-16', dimension: 32 });
    const broken = createMemory({ store: createInMemoryStore(), embedder: wrong });
    expect((await errorOf(broken.add('x', { scope: { userId: 'a' } }))).code).toBe('INVALID_EMBEDDING');
  });

  it('refuses options that cannot work', async () => {
    const embeddings = new RecordingEmbeddings();
    expect((await errorOf(() => fromLangChainEmbeddings(embeddings, { id: '', dimension: 8 }))).code).toBe('INVALID_OPTIONS');
    expect((await errorOf(() => fromLangChainEmbeddings(embeddings, { id: 'x', dimension: 0 }))).code).toBe('INVALID_OPTIONS');
    expect((await errorOf(() => fromLangChainEmbeddings({} as never, { id: 'x', dimension: 8 }))).code).toBe('INVALID_OPTIONS');
  });
});

describe('fromLangChainChatModel', () => {
  it('sends the system text and the prompt as messages and returns the answer’s text', async () => {
    const model = fakeModel().respond(new AIMessage({ content: [{ type: 'text', text: 'merged text' }] }));
    const languageModel = fromLangChainChatModel(model, { id: 'test/fake' });
    expect(languageModel.id).toBe('test/fake');
    expect(await languageModel.generate({ system: 'Be brief.', prompt: 'Merge these.' })).toBe('merged text');
    const [sent] = model.calls;
    expect(sent?.messages.map((message) => [message.type, message.content])).toEqual([
      ['system', 'Be brief.'],
      ['human', 'Merge these.'],
    ]);
    expect(sent?.messages[0]).toBeInstanceOf(SystemMessage);
    expect(sent?.messages[1]).toBeInstanceOf(HumanMessage);
  });

  it('does memloom’s merging through the chat model, and core falls back when the model fails', async () => {
    const vectors = { 'I live in Lyon': axisVector(DIM, 0), 'I am a baker in Lyon': vectorWithSimilarity(DIM, 0, 1, 0.9) };
    const model = fakeModel().respond(new AIMessage('I live in Lyon and work as a baker'));
    const memory = createMemory({ store: createInMemoryStore(), embedder: createTestEmbedder({ dimension: DIM, vectors }), languageModel: fromLangChainChatModel(model) });
    await memory.add('I live in Lyon', { scope: { userId: 'a' } });
    const merged = await memory.add('I am a baker in Lyon', { scope: { userId: 'a' } });
    expect(merged.memory.content).toBe('I live in Lyon and work as a baker');
    expect(merged.modelFallback).toBeUndefined();

    const failing = fromLangChainChatModel(fakeModel().alwaysThrow(new Error('rate limited')), { id: 'test/failing' });
    const error = await errorOf(failing.generate({ prompt: 'x' }));
    expect(error.code).toBe('MODEL_ERROR');
    expect(error.message).toContain('rate limited');
  });
});

describe('toLanguageModel', () => {
  it('adapts a LangChain chat model (which has a generate of its own) and keeps a memloom model as it is', async () => {
    const chat = fakeModel().respond(new AIMessage('from langchain'));
    const adapted = toLanguageModel(chat);
    expect(adapted).not.toBe(chat);
    expect(await adapted.generate({ prompt: 'hi' })).toBe('from langchain');
    const scripted = createScriptedModel('from memloom');
    expect(toLanguageModel(scripted)).toBe(scripted);
  });
});

describe('MemloomEmbeddings', () => {
  it('lets LangChain use a memloom embedder, passing query and document purposes through', async () => {
    const purposes: Array<EmbedOptions['purpose']> = [];
    const inner = createTestEmbedder({ dimension: 8 });
    const embedder: Embedder = {
      id: inner.id,
      dimension: inner.dimension,
      embed: (texts, options) => {
        purposes.push(options?.purpose);
        return inner.embed(texts, options);
      },
    };
    const embeddings = new MemloomEmbeddings(embedder);
    expect(embeddings.dimension).toBe(8);
    const documents = await embeddings.embedDocuments(['sailing', 'chess']);
    expect(documents).toEqual(await inner.embed(['sailing', 'chess']));
    expect(await embeddings.embedQuery('sailing')).toEqual(documents[0]);
    expect(purposes).toEqual(['document', 'query']);
    expect((await errorOf(() => new MemloomEmbeddings(undefined as never))).code).toBe('INVALID_OPTIONS');
  });
});
