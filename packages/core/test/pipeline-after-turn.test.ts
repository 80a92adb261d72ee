import { afterEach, describe, expect, it, vi } from 'vitest';
import { createMemory, createMemoryPipeline, MemloomError, type ConversationMessage, type GenerateRequest, type MemoryStore } from '../src/index.js';
import { createHangingModel, createInMemoryPolicyStorage, createInMemoryStore, createScriptedModel, createTestEmbedder } from '../src/testing/index.js';
import { errorOf, pipelineRig } from './pipeline-rig.js';

const alice = { userId: 'alice' };

function session(count: number): ConversationMessage[] {
  return Array.from({ length: count }, (_, index) => ({ role: index % 2 === 0 ? ('user' as const) : ('assistant' as const), content: `talk ${index + 1}`, id: `s${index + 1}` }));
}

/** One model for every step: it answers by which prompt it got. */
function routedModel(answers: { extract?: string; review?: string; summary?: string; evolve?: string }) {
  return createScriptedModel((request: GenerateRequest) => {
    const system = request.system ?? '';
    if (system.includes('background memory monitor')) return answers.extract ?? '[SKIP]';
    if (system.includes('You review one long-term memory')) return answers.review ?? '[KEEP]';
    if (system.includes('You summarize part of a conversation')) return answers.summary ?? 'A summary.';
    if (system.includes('You tune the memory policy')) return answers.evolve ?? '{}';
    return '{"groups": []}';
  });
}

describe('afterTurn', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs extraction, the promotion review of what it boosted, the session summary and evolution', async () => {
    const answers: Parameters<typeof routedModel>[0] = { review: 'A lasting preference. [PROMOTE]', summary: 'They chatted about tea.', evolve: '{"recent_days": 7}' };
    const model = routedModel(answers);
    const storage = createInMemoryPolicyStorage();
    const { pipeline, memory } = pipelineRig({ languageModel: model, policyStorage: storage, policy: { evolution_enabled: true }, evolutionEveryMessages: 2 });
    const tea = await memory.add('The user loves green tea', { scope: alice, importance: 2.3 });
    answers.extract = `[BOOST:${tea.memory.id}]\n[ADD USER] The user drinks tea every afternoon`;
    const messages = session(21);
    const report = await pipeline.afterTurn({
      scope: alice,
      user: { content: 'Tea time again!', id: 's20' },
      assistant: { content: 'Green tea, as you love it?', id: 's21' },
      retrieved: [tea.memory],
      messages,
    });
    expect(report.errors).toEqual([]);
    expect(report.extraction?.applied.map((entry) => entry.kind)).toEqual(['boost', 'add']);
    expect(report.review?.reviewed).toEqual([expect.objectContaining({ id: tea.memory.id, decision: 'promote' })]);
    expect((await memory.get(tea.memory.id))?.category).toBe('core');
    expect(report.session).toMatchObject({ action: 'summarized', summarizedCount: 17 });
    expect(report.session?.messages).toHaveLength(5);
    expect(report.compression).toBeUndefined();
    expect(report.evolution).toMatchObject({ action: 'updated', accepted: [{ key: 'recent_days', from: 3, to: 7 }] });
    expect(storage.overrides).toEqual({ recent_days: 7 });
    expect(await memory.count({ scope: alice, filter: { category: 'episode' } })).toBe(1);
  });

  it('keeps the assistant\'s question the user message answers in the context of each fact, from the turns it saw or the session given', async () => {
    const { pipeline, memory } = pipelineRig();
    await pipeline.afterTurn({ scope: alice, user: 'Hello there', assistant: 'Hi! Which city did you settle in last spring?' });
    const report = await pipeline.afterTurn({ scope: alice, user: 'Yes, I settled in Lyon. I love it there.', assistant: 'Lovely.' });
    const facts = report.extraction?.applied.flatMap((entry) => (entry.kind === 'add' ? [entry.result.memory] : [])) ?? [];
    expect(facts.map((fact) => fact.content)).toEqual(['Yes, I settled in Lyon.', 'I love it there.']);
    expect(facts[1]?.context).toBe('Hi! Which city did you settle in last spring?\nYes, I settled in Lyon. I love it there.');
    // Found by a word only the assistant's question had.
    const [hit] = await memory.search('spring', { scope: alice });
    expect(facts.map((fact) => fact.id)).toContain(hit?.memory.id);
    expect(hit?.parts.text).toBeGreaterThan(0);

    // With the session given, the message before this turn's user message comes from it.
    const messages: ConversationMessage[] = [
      { role: 'assistant', content: 'Do you have any pets?', id: 'a1' },
      { role: 'user', content: 'I have a cat named Tofu.', id: 'u2' },
      { role: 'assistant', content: 'Cute! Any other pets?', id: 'a2' },
    ];
    const withSession = await pipeline.afterTurn({ scope: alice, user: { content: 'I have a cat named Tofu.', id: 'u2' }, assistant: { content: 'Cute! Any other pets?', id: 'a2' }, messages });
    const added = withSession.extraction?.applied.find((entry) => entry.kind === 'add');
    expect(added?.kind === 'add' && added.result.memory.context).toBe('Do you have any pets?\nI have a cat named Tofu.');
    // A session that does not hold the user message (joined inputs, no ids): the last message seen is used.
    const unmatched = await pipeline.afterTurn({ scope: alice, user: 'I also have a dog named Miso.', assistant: 'Two pets!', messages: [{ role: 'user', content: 'something else' }] });
    const dog = unmatched.extraction?.applied.find((entry) => entry.kind === 'add');
    expect(dog?.kind === 'add' && dog.result.memory.context).toBe('Cute! Any other pets?\nI also have a dog named Miso.');
    // A message before that is no question (a reply on another topic) is not taken: the fact is the whole message, no context.
    const after = await pipeline.afterTurn({ scope: alice, user: 'I work as a nurse in Porto.', assistant: 'Noted.' });
    const nurse = after.extraction?.applied.find((entry) => entry.kind === 'add');
    expect(nurse?.kind === 'add' && nurse.result.memory).not.toHaveProperty('context');
  });

  it('keeps the facts of a user message longer than limits.maxContentLength (their context cut to it)', async () => {
    const store = createInMemoryStore();
    const memory = createMemory({ store, embedder: createTestEmbedder({ dimension: 16 }), limits: { maxContentLength: 200 } });
    const pipeline = createMemoryPipeline({ memory, languageModel: null });
    const long = `${'Some chatter here. '.repeat(20)}I work as a nurse in Porto.`;
    const report = await pipeline.afterTurn({ scope: alice, user: long, assistant: 'Nice.' });
    const facts = report.extraction?.applied.flatMap((entry) => (entry.kind === 'add' ? [entry.result.memory] : [])) ?? [];
    expect(facts.map((fact) => fact.content)).toEqual(['I work as a nurse in Porto.']);
    expect(facts[0]?.context?.length).toBeLessThanOrEqual(200);
    expect(facts[0]?.context?.endsWith('I work as a nurse in Porto.')).toBe(true);
    expect(report.extraction?.skipped).toEqual([]);
  });

  it('feeds evolution from the turns it saw when no session is given', async () => {
    const model = routedModel({ evolve: '{}' });
    const { pipeline } = pipelineRig({ languageModel: model, policyStorage: createInMemoryPolicyStorage(), policy: { evolution_enabled: true }, evolutionEveryMessages: 4 });
    const first = await pipeline.afterTurn({ scope: alice, user: 'first question', assistant: 'first answer' });
    expect(first.evolution).toMatchObject({ action: 'skipped', messagesSinceReflection: 2 });
    const second = await pipeline.afterTurn({ scope: alice, user: 'second question', assistant: 'second answer' });
    expect(second.evolution).toMatchObject({ action: 'unchanged', messagesSinceReflection: 0 });
    const reflection = model.requests.find((request) => request.system?.includes('You tune the memory policy'));
    expect(reflection?.prompt).toContain('User: first question\nAssistant: first answer\nUser: second question\nAssistant: second answer');
  });

  it('runs the long-term compression when it is on and the turn wrote something', async () => {
    const { pipeline, memory } = pipelineRig({ policy: { long_term_compress_char_threshold: 10 } });
    await memory.add('The user likes tea', { scope: alice });
    const quiet = await pipeline.afterTurn({ scope: alice, user: 'What time is it?', assistant: 'Noon' });
    expect(quiet.compression).toBeUndefined();
    const report = await pipeline.afterTurn({ scope: alice, user: 'I like green tea a lot', assistant: 'Noted' });
    expect(report.compression).toMatchObject({ action: 'compressed', source: 'fallback' });
  });

  it('never throws a model failure into the turn: every step falls back', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { pipeline, memory } = pipelineRig({ languageModel: createHangingModel(), modelTimeoutMs: 1_000, policy: { long_term_compress_char_threshold: 5 } });
    const pending = pipeline.afterTurn({ scope: alice, user: 'I live in Lyon', assistant: 'Nice city', messages: session(25) });
    await vi.advanceTimersByTimeAsync(10_000);
    const report = await pending;
    expect(report.errors).toEqual([]);
    expect(report.extraction).toMatchObject({ source: 'fallback', modelFallback: expect.stringMatching(/did not answer/) });
    expect(report.session).toMatchObject({ source: 'fallback', modelFallback: expect.stringMatching(/did not answer/) });
    expect(report.compression).toMatchObject({ action: 'compressed', source: 'fallback' });
    expect(await memory.count({ scope: alice, filter: { category: 'fact' } })).toBe(1);
  });

  it('reports a store failure in one step and still runs the others', async () => {
    const inner = createInMemoryStore();
    let failAdds = false;
    const store: MemoryStore = Object.create(inner, {
      apply: {
        value: async (changes: Parameters<MemoryStore['apply']>[0]) => {
          if (failAdds && changes.some((change) => change.op === 'put' && change.memory.category === 'fact')) {
            throw new MemloomError({ code: 'STORE_ERROR', backend: 'memory', message: 'disk full' });
          }
          return inner.apply(changes);
        },
      },
    });
    const { pipeline, memory, warnings } = pipelineRig({ store });
    failAdds = true;
    const report = await pipeline.afterTurn({ scope: alice, user: 'I live in Lyon', assistant: 'Nice', messages: session(21) });
    expect(report.errors.map((entry) => [entry.step, entry.error.code])).toEqual([['extraction', 'STORE_ERROR']]);
    expect(report.extraction).toBeUndefined();
    expect(report.session?.action).toBe('summarized');
    expect(await memory.count({ scope: alice, filter: { category: 'episode' } })).toBe(1);
    expect(warnings.some((warning) => warning.message === 'afterTurn: extraction failed')).toBe(true);
  });

  it('still throws on invalid input from the caller', async () => {
    const { pipeline } = pipelineRig();
    expect((await errorOf(pipeline.afterTurn({ user: '' }))).code).toBe('EMPTY_CONTENT');
    expect((await errorOf(pipeline.afterTurn({ user: 'hi', messages: [{ role: 'user' }] as never }))).code).toBe('INVALID_INPUT');
  });
});

describe('createMemoryPipeline options', () => {
  const memory = createMemory({ store: createInMemoryStore(), embedder: createTestEmbedder() });

  it('fails fast on bad options, naming the field', async () => {
    expect((await errorOf(() => createMemoryPipeline({} as never))).message).toMatch(/memory must be a Memory/);
    expect((await errorOf(() => createMemoryPipeline({ memory, boostAmount: -1 }))).message).toContain('boostAmount');
    expect((await errorOf(() => createMemoryPipeline({ memory, reviewMaxRounds: 11 }))).code).toBe('INVALID_OPTIONS');
    expect((await errorOf(() => createMemoryPipeline({ memory, modelTimeoutMs: 2 ** 31 }))).code).toBe('INVALID_OPTIONS');
    expect((await errorOf(() => createMemoryPipeline({ memory, languageModel: {} as never }))).message).toMatch(/generate/);
    expect((await errorOf(() => createMemoryPipeline({ memory, policyStorage: {} as never }))).message).toMatch(/readOverrides/);
    const policy = await errorOf(() => createMemoryPipeline({ memory, policy: { retrieve_limit: 0 } }));
    expect(policy.code).toBe('INVALID_CONFIG');
  });

  it("uses the memory's model, clock and prompts unless told otherwise", async () => {
    const model = createScriptedModel('[ADD] The user is curious');
    const withModel = createMemory({ store: createInMemoryStore(), embedder: createTestEmbedder(), languageModel: model, prompts: { extract: () => ({ system: 'custom', prompt: 'custom prompt' }) } });
    const report = await createMemoryPipeline({ memory: withModel }).extract({ user: 'Why is the sky blue?' });
    expect(report.source).toBe('model');
    expect(model.requests[0]).toMatchObject({ system: 'custom', prompt: 'custom prompt' });
    const none = await createMemoryPipeline({ memory: withModel, languageModel: null }).extract({ user: 'I am curious about skies' });
    expect(none.source).toBe('fallback');
    expect(model.requests).toHaveLength(1);
    const overridden = await createMemoryPipeline({ memory: withModel, prompts: { extract: () => ({ system: 'mine', prompt: 'mine' }) } }).extract({ user: 'x y z' });
    expect(overridden.source).toBe('model');
    expect(model.requests[1]?.system).toBe('mine');
  });
});
