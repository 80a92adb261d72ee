import { afterEach, describe, expect, it, vi } from 'vitest';
import { axisVector, createHangingModel, createInMemoryStore, createScriptedModel, vectorWithSimilarity } from '../src/testing/index.js';
import { factContext } from '../src/pipeline/extraction.js';
import { DAY, DIM, errorOf, pipelineRig, promptOf } from './pipeline-rig.js';

const alice = { userId: 'alice' };

/** A model whose answer the test sets after creating memories (answers name their ids). */
function settableModel() {
  const state = { answer: '[SKIP]' };
  return { state, model: createScriptedModel(() => state.answer) };
}

describe('extraction: operations from the model', () => {
  it('ADD USER writes a verified fact from background_ai with the turn as provenance', async () => {
    const model = createScriptedModel('[ADD USER] The user lives in Lyon');
    const { pipeline, memory } = pipelineRig({ languageModel: model });
    const report = await pipeline.extract({ scope: alice, user: { content: 'I moved to Lyon last month', id: 'm1' }, assistant: { content: 'Lyon is lovely!', id: 'm2' } });
    expect(report.source).toBe('model');
    expect(report.applied).toHaveLength(1);
    const [stored] = await memory.list({ scope: alice });
    expect(stored).toMatchObject({ content: 'The user lives in Lyon', category: 'fact', source: 'background_ai', verified: true, sources: ['m1', 'm2'] });
    expect((await memory.history(stored!.id))[0]).toMatchObject({ trigger: 'extraction', action: 'create' });
    expect(promptOf(model)).toContain('User: I moved to Lyon last month');
    expect(promptOf(model)).toContain('Assistant: Lyon is lovely!');
  });

  it('ADD without USER is an inference: verified false', async () => {
    const { pipeline, memory } = pipelineRig({ languageModel: createScriptedModel('[ADD] The user probably enjoys cooking') });
    await pipeline.extract({ scope: alice, user: 'I made ramen from scratch', assistant: 'Impressive!' });
    expect((await memory.list({ scope: alice }))[0]).toMatchObject({ verified: false, source: 'background_ai' });
  });

  it('a restated fact merges through the strategy engine instead of duplicating', async () => {
    const { pipeline, memory } = pipelineRig({
      languageModel: createScriptedModel('[ADD USER] The user has a cat named Miso'),
      vectors: { 'The user has a cat named Miso': vectorWithSimilarity(DIM, 0, 1, 0.9), 'User owns a cat, Miso': axisVector(DIM, 0) },
    });
    const first = await memory.add('User owns a cat, Miso', { scope: alice, sources: ['old'] });
    const report = await pipeline.extract({ scope: alice, user: { content: 'My cat Miso is asleep', id: 'm7' }, assistant: 'Cute!' });
    const [applied] = report.applied;
    expect(applied?.kind === 'add' && applied.result.decision.strategy).toBe('merge_update');
    expect(await memory.count({ scope: alice })).toBe(1);
    expect((await memory.get(first.memory.id))?.sources).toEqual(['old', 'm7']);
  });

  it('seed 002: "tense" ten days ago and "relaxed" now are both kept (a change over time, not a conflict)', async () => {
    const { state, model } = settableModel();
    const { pipeline, memory, clock } = pipelineRig({
      languageModel: model,
      vectors: { 'The user is tense': axisVector(DIM, 0), 'The user is relaxed now': vectorWithSimilarity(DIM, 0, 1, 0.7) },
    });
    const tense = await memory.add('The user is tense', { scope: alice });
    clock.advance(10 * DAY);
    state.answer = '[ADD USER] The user is relaxed now';
    const report = await pipeline.extract({ scope: alice, user: 'I feel so relaxed today', assistant: 'Glad to hear it!', retrieved: [tense.memory] });
    const [applied] = report.applied;
    expect(applied?.kind === 'add' && applied.result.decision.strategy).toBe('keep_both');
    const contents = (await memory.list({ scope: alice })).map((record) => record.content).sort();
    expect(contents).toEqual(['The user is relaxed now', 'The user is tense']);
    const old = await memory.get(tense.memory.id);
    expect(old?.content).toBe('The user is tense');
    expect(old?.updatedAt).toBe(tense.memory.updatedAt);
    expect(promptOf(model)).toContain(`[${tense.memory.id}] (fact, updated 2024-03-01, 10 days ago, importance 1) The user is tense`);
    expect(promptOf(model)).toMatch(/may both be true at different times/);
  });

  it("a user's correction replaces the wrong fact; the old text stays in its history", async () => {
    const { state, model } = settableModel();
    const { pipeline, memory, clock } = pipelineRig({ languageModel: model });
    const wrong = await memory.add("The user's dog is called Bob", { scope: alice, sources: ['m1'] });
    clock.advance(3 * DAY);
    state.answer = `[UPDATE:${wrong.memory.id} USER] The user's dog is called Max`;
    const report = await pipeline.extract({
      scope: alice,
      user: { content: 'No, my dog is called Max, not Bob', id: 'm9' },
      assistant: 'Sorry, Max it is!',
      retrieved: [wrong.memory],
    });
    expect(report.applied.map((entry) => entry.kind)).toEqual(['update']);
    const fixed = await memory.get(wrong.memory.id);
    expect(fixed).toMatchObject({ content: "The user's dog is called Max", verified: true, level: 'full', sources: ['m1', 'm9'], updatedAt: clock.iso() });
    expect(await memory.count({ scope: alice })).toBe(1);
    const history = await memory.history(wrong.memory.id);
    expect(history.map((entry) => [entry.trigger, entry.action])).toEqual([
      ['user_mention', 'create'],
      ['extraction', 'edit'],
    ]);
    expect(history[1]?.before?.content).toBe("The user's dog is called Bob");
    expect(history[1]?.reason).toContain('corrected by the user');
  });

  it('BOOST adds 0.3 importance to a memory that shaped the reply, without refreshing its timestamp', async () => {
    const { state, model } = settableModel();
    const { pipeline, memory, clock } = pipelineRig({ languageModel: model });
    const tense = await memory.add('The user is tense about the interview', { scope: alice });
    clock.advance(DAY);
    state.answer = `[BOOST:${tense.memory.id}] the reply told them not to be so tense`;
    const report = await pipeline.extract({ scope: alice, user: 'Tomorrow is the day', assistant: "Don't be so tense, you'll do great", retrieved: [{ memory: tense.memory }] });
    expect(report.applied[0]).toMatchObject({ kind: 'boost', importance: { from: 1, to: 1.3 } });
    const boosted = await memory.get(tense.memory.id);
    expect(boosted).toMatchObject({ importance: 1.3, updatedAt: tense.memory.updatedAt });
    expect((await memory.history(tense.memory.id))[1]).toMatchObject({ trigger: 'extraction', action: 'boost' });
  });

  it('BOOST and a correction start from the importance and weight the decay rules give now, not the last ones stored', async () => {
    const { state, model } = settableModel();
    const { pipeline, memory, clock } = pipelineRig({ languageModel: model });
    const tense = await memory.add('The user is tense about the interview', { scope: alice });
    // 100 days, no maintenance pass since: 14 whole weeks (1 · 0.95^14 = 0.487675) and weight 1 / (1 + 0.01 · 100) = 0.5.
    clock.advance(100 * DAY);
    state.answer = `[BOOST:${tense.memory.id}] the reply told them not to be so tense`;
    const report = await pipeline.extract({ scope: alice, user: 'Tomorrow is the day', assistant: "Don't be so tense", retrieved: [{ memory: tense.memory }] });
    expect(report.applied[0]).toMatchObject({ kind: 'boost', importance: { from: 0.487675, to: 0.787675 } });
    state.answer = `[UPDATE:${tense.memory.id}] The user is calm about the interview`;
    await pipeline.extract({ scope: alice, user: 'I am calm now', assistant: 'Good', retrieved: [{ memory: tense.memory }] });
    // A correction is activated like a merge: +60% of the gap from 0.5.
    expect((await memory.get(tense.memory.id))?.weight).toBeCloseTo(0.8, 6);
  });

  it('a boost never overwrites a change made between its read and its write: it reads again and boosts that', async () => {
    const { state, model } = settableModel();
    const store = createInMemoryStore();
    const { pipeline, memory } = pipelineRig({ languageModel: model, store });
    const tense = await memory.add('The user is tense about the interview', { scope: alice });
    // The second read of the memory (the boost's own) returns the record as it was, after another
    // writer has raised its importance to 2: the boost's write then meets a newer revision.
    const read = store.get.bind(store);
    let readsUntilRace = 2;
    store.get = async (id) => {
      const record = await read(id);
      if (--readsUntilRace === 0) await memory.update(id, { importance: 2 }, { reason: 'another writer' });
      return record;
    };
    state.answer = `[BOOST:${tense.memory.id}] the reply told them not to be so tense`;
    const report = await pipeline.extract({ scope: alice, user: 'Tomorrow is the day', assistant: "Don't be so tense", retrieved: [{ memory: tense.memory }] });
    expect(report.applied[0]).toMatchObject({ kind: 'boost', importance: { from: 2, to: 2.3 } });
    expect(await memory.get(tense.memory.id)).toMatchObject({ importance: 2.3, revision: 3 });
    expect((await memory.history(tense.memory.id)).map((entry) => entry.reason)).toEqual([expect.any(String), 'another writer', expect.stringMatching(/importance 2 -> 2.3/)]);
  });

  it('a memory retrieved but unused is not boosted (the model skips; the fallback never boosts)', async () => {
    const cats = { content: 'The user likes cats' };
    const withModel = pipelineRig({ languageModel: createScriptedModel('[SKIP]') });
    const liked = await withModel.memory.add(cats.content, { scope: alice });
    const report = await withModel.pipeline.extract({ scope: alice, user: 'Will it rain tomorrow?', assistant: 'Probably, take an umbrella.', retrieved: [liked.memory] });
    expect(report).toMatchObject({ source: 'model', applied: [], skipped: [] });
    expect((await withModel.memory.get(liked.memory.id))?.importance).toBe(1);

    const withoutModel = pipelineRig();
    const again = await withoutModel.memory.add(cats.content, { scope: alice });
    await withoutModel.pipeline.extract({ scope: alice, user: 'Will it rain tomorrow?', assistant: 'Probably.', retrieved: [again.memory] });
    expect((await withoutModel.memory.get(again.memory.id))?.importance).toBe(1);
  });

  it('DELETE removes a fact, but is refused for core and system memories', async () => {
    const { state, model } = settableModel();
    const { pipeline, memory } = pipelineRig({ languageModel: model });
    const fact = await memory.add('The user works at Initech', { scope: alice });
    const core = await memory.add('The user is called Alice', { scope: alice, category: 'core' });
    const system = await memory.add('Answer in English', { scope: alice, category: 'system', source: 'system' });
    state.answer = [`[DELETE:${fact.memory.id}]`, `[DELETE:${core.memory.id}]`, `[DELETE:${system.memory.id}]`, `[BOOST:${system.memory.id}]`].join('\n');
    const report = await pipeline.extract({ scope: alice, user: 'I quit Initech', assistant: 'Big news!', retrieved: [fact.memory, core.memory, system.memory] });
    expect(report.applied).toEqual([{ kind: 'delete', id: fact.memory.id, before: expect.objectContaining({ content: 'The user works at Initech' }) }]);
    expect(report.skipped.map((entry) => entry.reason)).toEqual([
      'core memories are never deleted by extraction',
      'system memories are not changed by extraction',
      'system memories are not changed by extraction',
    ]);
    expect(await memory.get(fact.memory.id)).toBeUndefined();
    expect(await memory.get(core.memory.id)).toBeDefined();
    expect(await memory.get(system.memory.id)).toBeDefined();
  });

  it("skips ids that were not retrieved and another user's ids, and logs them", async () => {
    const { state, model } = settableModel();
    const { pipeline, memory, warnings } = pipelineRig({ languageModel: model });
    const mine = await memory.add('The user likes jazz', { scope: alice });
    const bobs = await memory.add('The user likes metal', { scope: { userId: 'bob' } });
    const unretrieved = await memory.add('The user likes opera', { scope: alice });
    state.answer = [
      `[UPDATE:${bobs.memory.id}] The user likes folk`,
      `[DELETE:${unretrieved.memory.id}]`,
      '[BOOST:mem_does_not_exist]',
      `[BOOST:${mine.memory.id}]`,
    ].join('\n');
    const report = await pipeline.extract({ scope: alice, user: 'Play something', assistant: 'Here is some jazz', retrieved: [mine.memory, bobs.memory] });
    expect(report.applied.map((entry) => entry.kind)).toEqual(['boost']);
    expect(report.skipped.map((entry) => entry.reason)).toEqual([
      "not shown to the model: deleted, or outside the caller's scope",
      `memory ${bobs.memory.id} is outside the caller's scope`,
      `memory ${unretrieved.memory.id} is not among the memories retrieved for this turn`,
      'memory mem_does_not_exist is not among the memories retrieved for this turn',
    ]);
    expect(promptOf(model)).not.toContain('metal');
    expect((await memory.get(bobs.memory.id))?.content).toBe('The user likes metal');
    expect(await memory.get(unretrieved.memory.id)).toBeDefined();
    expect(warnings.filter((warning) => warning.message === 'extraction: operation skipped')).toHaveLength(4);
  });

  it('an ADD merged into a memory protects it from a later DELETE of the same answer', async () => {
    const { state, model } = settableModel();
    const { pipeline, memory } = pipelineRig({
      languageModel: model,
      vectors: { 'I live in Paris.': axisVector(DIM, 0), 'I live in Lyon now.': vectorWithSimilarity(DIM, 0, 1, 0.9) },
    });
    const paris = await memory.add('I live in Paris.', { scope: alice });
    state.answer = `[ADD USER] I live in Lyon now.\n[DELETE:${paris.memory.id}] obsolete, the user moved`;
    const report = await pipeline.extract({ scope: alice, user: 'I moved, I live in Lyon now.', assistant: 'Noted!', retrieved: [paris.memory] });
    const [applied] = report.applied;
    expect(applied?.kind === 'add' && applied.result.memory.id).toBe(paris.memory.id);
    expect(report.applied.map((entry) => entry.kind)).toEqual(['add']);
    expect(report.skipped.map((entry) => entry.reason)).toEqual([`memory ${paris.memory.id} was already changed by an earlier operation of this turn`]);
    expect(await memory.count({ scope: alice })).toBe(1);
  });

  it("an ADD that only boosts the nearest memory (a new fact beside it) leaves that memory open to the answer's correction", async () => {
    const { state, model } = settableModel();
    const { pipeline, memory } = pipelineRig({
      languageModel: model,
      vectors: { 'I live in Lisbon.': axisVector(DIM, 0), 'I have a dog named Rex.': vectorWithSimilarity(DIM, 0, 1, 0.7) },
    });
    const lisbon = await memory.add('I live in Lisbon.', { scope: alice });
    await memory.update(lisbon.memory.id, { weight: 0.5 });
    state.answer = `[ADD USER] I have a dog named Rex.\n[UPDATE:${lisbon.memory.id} USER] I live in Berlin.`;
    const current = (await memory.get(lisbon.memory.id))!;
    const report = await pipeline.extract({ scope: alice, user: 'I moved to Berlin with my dog Rex.', assistant: 'Noted!', retrieved: [current] });
    const [added] = report.applied;
    expect(added?.kind === 'add' && added.result.decision.strategy).toBe('keep_both');
    expect(report.applied.map((entry) => entry.kind)).toEqual(['add', 'update']);
    expect((await memory.get(lisbon.memory.id))?.content).toBe('I live in Berlin.');
  });

  it('a BOOST of a memory at the top importance is clamped and the rest of the answer applies', async () => {
    const { state, model } = settableModel();
    const { pipeline, memory } = pipelineRig({ languageModel: model });
    const top = await memory.add('My name is Tom', { scope: alice, category: 'core', importance: 100 });
    state.answer = `[ADD USER] I have a dog named Rex\n[BOOST:${top.memory.id}]\n[ADD USER] My sister is called Anna`;
    const report = await pipeline.extract({ scope: alice, user: 'I have a dog named Rex and my sister is Anna', assistant: 'Hi Tom!', retrieved: [top.memory] });
    expect(report.applied.map((entry) => entry.kind)).toEqual(['add', 'boost', 'add']);
    expect((await memory.get(top.memory.id))?.importance).toBe(100);
    expect(await memory.count({ scope: alice })).toBe(3);
  });

  it('warns about a huge answer in a few summaries, not once per line', async () => {
    const answer = Array.from({ length: 3000 }, (_, index) => `[ADD] fact number ${index}`).concat(Array.from({ length: 3000 }, (_, index) => `chatter ${index}`)).join('\n');
    const { pipeline, warnings } = pipelineRig({ languageModel: createScriptedModel(answer) });
    const report = await pipeline.extract({ scope: alice, user: 'hello', assistant: 'hi' });
    expect(report.applied).toHaveLength(20);
    expect(report.skipped).toHaveLength(5980);
    expect(warnings.length).toBeLessThanOrEqual(12);
    expect(warnings.map((warning) => warning.message)).toContain('extraction: more operations skipped');
    expect(warnings.map((warning) => warning.message)).toContain('extraction: answer lines not understood');
  });

  it('skips every line it does not understand and applies the rest', async () => {
    const model = createScriptedModel(
      ['```', 'Operations:', '- [ADD USER] The user plays the cello', '[MERGE:abc] something', '[ADD:abc] x', '[BOOST]', '[SKIP:abc]', '[ADD]', '[UPDATE:abc]', '[BOOST:abc FOO]', '```'].join('\n'),
    );
    const { pipeline, memory } = pipelineRig({ languageModel: model });
    const report = await pipeline.extract({ scope: alice, user: 'I play the cello', assistant: 'Lovely' });
    expect(report.source).toBe('model');
    expect(report.applied.map((entry) => entry.kind === 'add' && entry.content)).toEqual(['The user plays the cello']);
    expect(report.skipped.map((entry) => [entry.operation, entry.reason])).toEqual([
      ['Operations:', 'not an operation ([ADD], [UPDATE:id], [BOOST:id], [DELETE:id] or [SKIP])'],
      ['[MERGE:abc] something', 'unknown operation "MERGE"'],
      ['[ADD:abc] x', 'ADD takes no id'],
      ['[BOOST]', 'BOOST needs an id ([BOOST:id])'],
      ['[SKIP:abc]', 'SKIP takes no id'],
      ['[ADD]', 'ADD without a fact'],
      ['[UPDATE:abc]', 'UPDATE without the corrected fact'],
      ['[BOOST:abc FOO]', 'unexpected "FOO" (only ADD and UPDATE take USER)'],
    ]);
    expect(await memory.count({ scope: alice })).toBe(1);
  });

  it('applies at most maxOperationsPerTurn operations and one per memory', async () => {
    const { state, model } = settableModel();
    const { pipeline, memory } = pipelineRig({ languageModel: model, maxOperationsPerTurn: 2 });
    const fact = await memory.add('The user drinks tea', { scope: alice });
    state.answer = [`[BOOST:${fact.memory.id}]`, `[DELETE:${fact.memory.id}]`, '[ADD] The user likes green tea'].join('\n');
    const report = await pipeline.extract({ scope: alice, user: 'Tea time', assistant: 'Enjoy your tea', retrieved: [fact.memory] });
    expect(report.applied.map((entry) => entry.kind)).toEqual(['boost']);
    expect(report.skipped.map((entry) => entry.reason)).toEqual([
      `memory ${fact.memory.id} was already changed by an earlier operation of this turn`,
      'over the limit of 2 operations per turn',
    ]);
  });

  it('skips an UPDATE whose text the memory will not take, and one that changes nothing', async () => {
    const { state, model } = settableModel();
    const { pipeline, memory } = pipelineRig({ languageModel: model });
    const fact = await memory.add('The user lives in Oslo', { scope: alice });
    state.answer = [`[UPDATE:${fact.memory.id}] ${'x'.repeat(10_001)}`].join('\n');
    const tooLong = await pipeline.extract({ scope: alice, user: 'hm', assistant: 'ok', retrieved: [fact.memory] });
    expect(tooLong.skipped[0]?.reason).toMatch(/CONTENT_TOO_LONG|limit is 10000/);
    state.answer = `[UPDATE:${fact.memory.id}] The user lives in Oslo`;
    const same = await pipeline.extract({ scope: alice, user: 'hm', assistant: 'ok', retrieved: [fact.memory] });
    expect(same.skipped[0]?.reason).toBe("the corrected text is the memory's current text");
    expect((await memory.history(fact.memory.id)).length).toBe(1);
  });

  it('reports a boost that lifts a fact to the promotion threshold', async () => {
    const { state, model } = settableModel();
    const { pipeline, memory } = pipelineRig({ languageModel: model });
    const fact = await memory.add('The user is vegetarian', { scope: alice, importance: 2.2 });
    state.answer = `[BOOST:${fact.memory.id}]`;
    const report = await pipeline.extract({ scope: alice, user: 'Dinner ideas?', assistant: 'A vegetarian curry?', retrieved: [fact.memory] });
    expect(report.dueForReview).toEqual([fact.memory.id]);
    // Already past the threshold (its review was asked when it crossed): a further boost asks nothing.
    state.answer = `[BOOST:${fact.memory.id}]`;
    const again = await pipeline.extract({ scope: alice, user: 'Lunch ideas?', assistant: 'A lentil salad?', retrieved: [(await memory.get(fact.memory.id))!] });
    expect(again.applied).toMatchObject([{ kind: 'boost', id: fact.memory.id }]);
    expect(again.dueForReview).toEqual([]);
  });
});

describe('extraction: deterministic fallback', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("without a model, adds the user's first-person statements only", async () => {
    const { pipeline, memory } = pipelineRig();
    const report = await pipeline.extract({
      scope: alice,
      user: { content: "Hi! I live in Lyon and I have two cats. What's the weather tomorrow? Please remember that my sister is called Léa. Thanks!", id: 'u1' },
      assistant: 'Sunny!',
    });
    expect(report.source).toBe('fallback');
    expect(report.modelFallback).toBeUndefined();
    expect(report.applied.map((entry) => entry.kind === 'add' && entry.content)).toEqual(['I live in Lyon and I have two cats.', 'my sister is called Léa.']);
    const records = await memory.list({ scope: alice });
    expect(records.every((record) => record.source === 'background_ai' && record.verified && record.sources[0] === 'u1')).toBe(true);
  });

  it('keeps a fact cut from a longer message with the message around it as its context', async () => {
    const message = 'We moved to Lyon last spring. I love it there.';
    const { pipeline, memory, store } = pipelineRig({ vectors: { 'I love it there.': axisVector(DIM, 0), [message]: axisVector(DIM, 1), 'I love it there': axisVector(DIM, 2) } });
    const report = await pipeline.extract({ scope: alice, user: message, assistant: 'Nice!' });
    expect(report.applied.map((entry) => entry.kind === 'add' && entry.content)).toEqual(['We moved to Lyon last spring.', 'I love it there.']);
    const second = report.applied[1];
    const fact = await memory.get(second?.kind === 'add' ? second.result.memory.id : '');
    expect(fact?.content).toBe('I love it there.');
    expect(fact?.context).toBe(message);
    const stored = (await store.getVector(fact?.id as string)) as number[];
    expect(stored[0]).toBeCloseTo(1 / Math.sqrt(1.49), 6);
    expect(stored[1]).toBeCloseTo(0.7 / Math.sqrt(1.49), 6);
    // A one-sentence message is its own fact: nothing around it, the vector is the fact's own.
    const alone = await pipeline.extract({ scope: alice, user: 'I love it there', assistant: 'Nice!' });
    const added = alone.applied[0];
    expect(added?.kind).toBe('add');
    expect(await store.getVector(added?.kind === 'add' ? added.result.memory.id : '')).toEqual(axisVector(DIM, 2));
    expect(added?.kind === 'add' && added.result.memory).not.toHaveProperty('context');
  });

  it('cuts the context of a fact from a message longer than limits.maxContentLength to its end, and keeps the fact', () => {
    const user = { content: `${'x'.repeat(30)} I moved to Lyon.` };
    expect(factContext({ user, question: 'Where did you move?' }, 'I moved to Lyon.', 100)).toBe(`Where did you move?\n${user.content}`);
    expect(factContext({ user, question: 'Where did you move?' }, 'I moved to Lyon.', 20)).toBe('xxx I moved to Lyon.');
    expect(factContext({ user: { content: 'I moved to Lyon.' } }, 'I moved to Lyon.', 100)).toBeUndefined();
    // Never starts on half of an emoji.
    expect(factContext({ user: { content: 'a😀b' } }, 'b', 2)).toBe('b');
  });

  it('handles Chinese statements, questions and requests', async () => {
    const { pipeline } = pipelineRig();
    const report = await pipeline.extract({ scope: alice, user: '你好！请记住：我的咖啡偏好是无糖拿铁，大杯。明天会下雨吗？帮我订一张票。', assistant: '好的' });
    expect(report.applied.map((entry) => entry.kind === 'add' && entry.content)).toEqual(['我的咖啡偏好是无糖拿铁，大杯。']);
  });

  it('stores no request, question or small talk from a turn (the user audit\'s messages), and the fact beside one', async () => {
    const { pipeline, memory } = pipelineRig();
    const user =
      "I'm fine, thanks! I need a recipe for pancakes. I'd like you to book me a flight. I would like a table for two tonight. " +
      "I was wondering if you could help me. I have a question. 我想订一张去上海的火车票。我想问一下明天天气怎么样。I'm vegetarian, can you suggest a recipe?";
    const report = await pipeline.extract({ scope: alice, user, assistant: 'Sure!' });
    expect(report.source).toBe('fallback');
    expect(report.applied.map((entry) => entry.kind === 'add' && entry.content)).toEqual(["I'm vegetarian"]);
    expect((await memory.list({ scope: alice })).map((record) => record.content)).toEqual(["I'm vegetarian"]);
  });

  it.each([
    ['garbage', createScriptedModel('The user seems nice. Nothing to add really.'), /held no operation/],
    ['a thrown error', createScriptedModel(new Error('rate limited')), /rate limited/],
    ['an empty answer', createScriptedModel(''), /held no operation/],
  ])('falls back when the model answers with %s', async (_, model, reason) => {
    const { pipeline, warnings } = pipelineRig({ languageModel: model });
    const report = await pipeline.extract({ scope: alice, user: 'I am learning Rust', assistant: 'Nice!' });
    expect(report.source).toBe('fallback');
    expect(report.modelFallback).toMatch(reason);
    expect(report.applied.map((entry) => entry.kind === 'add' && entry.content)).toEqual(['I am learning Rust']);
    expect(warnings.some((warning) => warning.message.startsWith('extraction: model answer not used'))).toBe(true);
  });

  it('falls back when the model never answers (timeout on fake timers)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { pipeline } = pipelineRig({ languageModel: createHangingModel(), modelTimeoutMs: 5_000 });
    const pending = pipeline.extract({ scope: alice, user: 'I am learning Rust', assistant: 'Nice!' });
    await vi.advanceTimersByTimeAsync(5_000);
    const report = await pending;
    expect(report.modelFallback).toMatch(/did not answer within 5000 ms/);
    expect(report.applied).toHaveLength(1);
  });
});

describe('extraction: input', () => {
  it('rejects invalid turns with typed errors', async () => {
    const { pipeline } = pipelineRig();
    expect((await errorOf(pipeline.extract({ user: '   ' }))).code).toBe('EMPTY_CONTENT');
    expect((await errorOf(pipeline.extract({ user: 5 } as never))).code).toBe('INVALID_INPUT');
    expect((await errorOf(pipeline.extract({ user: 'hi', retrieved: [{ nope: 1 }] } as never))).code).toBe('INVALID_INPUT');
    expect((await errorOf(pipeline.extract({ user: 'hi', scope: { team: 'x' } as never }))).code).toBe('INVALID_SCOPE');
  });
});
