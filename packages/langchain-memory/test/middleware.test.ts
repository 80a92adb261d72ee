import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { MemorySaver } from '@langchain/langgraph';
import { createAgent } from 'langchain';
import { describe, expect, it, vi } from 'vitest';
import { createMemoryPipeline, estimateTokens, hasLoneSurrogate, resolvePolicy } from '@memloom/core';
import { buildMemoryPrompt } from '../src/prompt.js';
import { createMemloomMiddleware, createMemloomTools, memoryForgetTool, WORKING_MEMORY_TAG, type MemloomMiddlewareOptions } from '../src/index.js';
import { isSummaryMessage, messageText } from '../src/messages.js';
import { errorOf, memoriesBlock, rig, systemPromptOf } from './helpers.js';

const REMINDER = 'WORKING MEMORY UPDATE NEEDED';

function threadAgent(memory: Parameters<typeof createMemloomMiddleware>[0], model: ReturnType<typeof fakeModel>, options: MemloomMiddlewareOptions = {}) {
  const agent = createAgent({ model, tools: [], middleware: [createMemloomMiddleware(memory, options)], checkpointer: new MemorySaver() });
  const config = { context: { userId: 'erin' }, configurable: { thread_id: 'thread-1' } };
  return (text: string) => agent.invoke({ messages: [new HumanMessage(text)] }, config);
}

describe('seed 003: working-memory reminders', () => {
  it('reminds after more than 5 rounds without an overview update, and a working_memory_write resets the count', async () => {
    const { memory } = rig();
    const model = fakeModel();
    for (let round = 1; round <= 6; round++) model.respond(new AIMessage(`answer ${round}`));
    model.respondWithTools([{ name: 'working_memory_write', args: { content: '# Task\nPlan the Oslo trip. Flights booked.' } }]);
    model.respond(new AIMessage('Overview updated.'));
    const say = threadAgent(memory, model, { recordTurns: false });
    for (let round = 1; round <= 7; round++) await say(`message ${round}`);

    const prompts = model.calls.map((_, index) => systemPromptOf(model.calls, index));
    expect(prompts.slice(0, 5).some((prompt) => prompt.includes(REMINDER))).toBe(false);
    expect(prompts[5]).toContain(REMINDER);
    expect(prompts[5]).toContain('You have not updated your working memory for 6 rounds.');
    expect(prompts[5]).toContain('- Messages in history: 11');
    expect(prompts[5]).toContain('Write the updated overview to: working_memory_write');
    expect(prompts[6]).toContain('for 7 rounds');
    // The call after the write: no reminder, and the overview is in the prompt.
    expect(prompts[7]).not.toContain(REMINDER);
    expect(prompts[7]).toContain('<working-memory>');
    expect(prompts[7]).toContain('# Task\nPlan the Oslo trip. Flights booked.');
    const [overview] = await memory.list({ scope: { userId: 'erin', sessionId: 'thread-1' }, filter: { tags: ['working-memory'] } });
    expect(overview?.category).toBe('system');
  });

  it('counts a round per user message: the model calls of one turn (a tool loop) are one round', async () => {
    const { memory } = rig();
    const model = fakeModel();
    // The first user message: six memory_search calls, then the answer; then five more messages.
    for (let index = 0; index < 6; index++) model.respondWithTools([{ name: 'memory_search', args: { query: `trip ${index}` }, id: `call-${index}` }]);
    for (let round = 1; round <= 6; round++) model.respond(new AIMessage(`answer ${round}`));
    const say = threadAgent(memory, model, { recordTurns: false, summarize: false });
    for (let round = 1; round <= 6; round++) await say(`message ${round}`);

    const prompts = model.calls.map((_, index) => systemPromptOf(model.calls, index));
    expect(prompts).toHaveLength(12);
    expect(prompts.slice(0, 11).some((prompt) => prompt.includes(REMINDER))).toBe(false);
    expect(prompts[11]).toContain('You have not updated your working memory for 6 rounds.');
  });

  it('says the context window is unknown when neither contextWindowTokens nor the model’s profile gives it', async () => {
    const { memory } = rig();
    const model = fakeModel();
    for (let round = 1; round <= 6; round++) model.respond(new AIMessage(`answer ${round}`));
    const say = threadAgent(memory, model, { recordTurns: false, summarize: false });
    for (let round = 1; round <= 6; round++) await say(`我们继续讨论旅行计划，第${round}轮`);
    const reminder = systemPromptOf(model.calls, 5);
    expect(reminder).toContain('You have not updated your working memory for 6 rounds.');
    expect(reminder).toMatch(/\n- Token use: \d+ tokens \(context window unknown\)\n/);
    expect(reminder).not.toMatch(/Token use: \d+%/);
  });

  it('reminds after more than 3 rounds when the context is over 70% full', async () => {
    const { memory } = rig();
    const model = fakeModel();
    for (let round = 1; round <= 4; round++) model.respond(new AIMessage('ok'));
    const say = threadAgent(memory, model, { recordTurns: false, summarize: false, contextWindowTokens: 400 });
    const long = 'word '.repeat(80); // ~100 tokens per message
    for (let round = 1; round <= 4; round++) await say(`${round} ${long}`);
    const prompts = model.calls.map((_, index) => systemPromptOf(model.calls, index));
    expect(prompts.slice(0, 3).some((prompt) => prompt.includes(REMINDER))).toBe(false);
    expect(prompts[3]).toContain('You have not updated your working memory for 4 rounds.');
    expect(prompts[3]).toMatch(/Token use: (7[1-9]|[89]\d|\d{3})%/);
  });

  it('can count another tool as the overview update, and can be turned off', async () => {
    const { memory } = rig();
    const off = fakeModel();
    for (let round = 1; round <= 7; round++) off.respond(new AIMessage('ok'));
    const sayOff = threadAgent(memory, off, { recordTurns: false, workingMemory: false });
    for (let round = 1; round <= 7; round++) await sayOff(`m${round}`);
    // With nothing to add, the model gets no system prompt at all.
    expect(off.calls.every((call) => call.messages[0]?.type === 'human')).toBe(true);

    const model = fakeModel();
    for (let round = 1; round <= 5; round++) model.respond(new AIMessage('ok'));
    model.respondWithTools([{ name: 'memory_append', args: { content: 'Erin finished the report', slot: 'today' } }]);
    model.respond(new AIMessage('noted'));
    const say = threadAgent(rig().memory, model, { recordTurns: false, overviewTools: ['memory_append'], workingMemory: { maxRounds: 5 } });
    for (let round = 1; round <= 6; round++) await say(`m${round}`);
    const prompts = model.calls.map((_, index) => systemPromptOf(model.calls, index));
    expect(prompts[5]).toContain(REMINDER);
    expect(prompts[6]).not.toContain(REMINDER);
  });

  it('two working_memory_write calls at once leave one overview, the later one', async () => {
    const { memory } = rig();
    const model = fakeModel()
      .respondWithTools([
        { name: 'working_memory_write', args: { content: 'Task A' }, id: 'write-1' },
        { name: 'working_memory_write', args: { content: 'Task B' }, id: 'write-2' },
      ])
      .respond(new AIMessage('done'));
    await threadAgent(memory, model, { recordTurns: false })('plan');
    const overviews = await memory.list({ filter: { tags: [WORKING_MEMORY_TAG] } });
    expect(overviews.map((record) => [record.scope, record.content])).toEqual([[{ userId: 'erin', sessionId: 'thread-1' }, 'Task B']]);
    expect(systemPromptOf(model.calls, 1)).toContain('Task B');
  });

  it('rejects bad working-memory options when the middleware is made', async () => {
    const { memory } = rig();
    // Named as this package's, the tracker's own check of the pair (minRounds past maxRounds + 1) too.
    for (const workingMemory of [{ maxRounds: -1 }, { maxRounds: 2, minRounds: 4 }]) {
      expect(await errorOf(() => createMemloomMiddleware(memory, { workingMemory })), JSON.stringify(workingMemory)).toMatchObject({
        code: 'INVALID_OPTIONS',
        backend: 'langchain',
        message: expect.stringMatching(/^\[memloom\] \[langchain\] invalid working memory options: (maxRounds|minRounds \(WM_MIN_ROUNDS\) is 4)/),
      });
    }
    expect((await errorOf(() => createMemloomMiddleware(memory, { policy: { retrieve_limit: 0 } }))).code).toBe('INVALID_CONFIG');
  });

  it('rejects a bad filter when the middleware or a tool is made, not at every search', async () => {
    const { memory } = rig();
    const misspelt = await errorOf(() => createMemloomMiddleware(memory, { filter: { catgory: ['fact'] } as never }));
    expect(misspelt.code).toBe('INVALID_OPTIONS');
    expect(misspelt.message).toMatch(/\[langchain\] createMemloomMiddleware: invalid filter: unknown key "catgory"/);
    // A value of no accepted kind says which kinds are (not zod's bare "Invalid input"); a bad item of a list is named.
    const single = await errorOf(() => createMemloomMiddleware(memory, { filter: { category: 'facts' } as never }));
    expect(single.code).toBe('INVALID_OPTIONS');
    expect(single.message).toContain('invalid filter: category: Invalid input: expected "system" or "core" or "fact" or "episode" or array');
    expect((await errorOf(() => createMemloomTools(memory, { filter: { level: ['whole'] } as never }))).message).toMatch(/memory_search: invalid filter: level\.0: Invalid option: expected one of "full"/);
    expect((await errorOf(() => memoryForgetTool(memory, { filter: { tags: 'x' } as never }))).message).toMatch(/memory_forget: invalid filter/);
    // A good filter is kept as given.
    expect(createMemloomTools(memory, { filter: { category: 'fact' } })).toHaveLength(3);
  });
});

describe('seed 001: session summaries, after the turn', () => {
  it('past the message threshold, older messages become one summary message and an episode of the thread', async () => {
    const { memory } = rig();
    const model = fakeModel();
    for (let round = 1; round <= 5; round++) model.respond(new AIMessage(`reply ${round}`));
    const say = threadAgent(memory, model, { recordTurns: false, policy: { session_summary_message_threshold: 6, session_summary_keep_count: 2 } });
    await say('I am planning a trip to Oslo in March.');
    await say('I need a hotel near the harbour.');
    const third = await say('My budget is 200 euros a night.');
    expect(third.messages).toHaveLength(6); // not past 6 yet
    const fourth = await say('Can you also find a museum?'); // 8 messages after this turn
    expect(fourth.messages.map((message) => (isSummaryMessage(message) ? 'summary' : messageText(message)))).toEqual([
      'summary',
      'Can you also find a museum?',
      'reply 4',
    ]);
    const summary = messageText(fourth.messages[0]!);
    expect(summary).toMatch(/^Summary of the earlier conversation: Talked about .*\. The user said: I am planning a trip to Oslo in March\. \/ I need a hotel/);

    // The next turn starts from the summary (the checkpointer holds it).
    await say('Thanks!');
    expect(model.calls[4]!.messages.filter((message) => message.type !== 'system').map((message) => (isSummaryMessage(message) ? 'summary' : messageText(message)))).toEqual([
      'summary',
      'Can you also find a museum?',
      'reply 4',
      'Thanks!',
    ]);

    const episodes = await memory.list({ scope: { userId: 'erin' }, filter: { category: 'episode' } });
    expect(episodes).toHaveLength(1);
    expect(episodes[0]?.scope).toEqual({ userId: 'erin', sessionId: 'thread-1' });
    expect(episodes[0]?.content).toMatch(/^\[2024-05-01 09:00\] Talked about /);
    expect(episodes[0]?.sources).toHaveLength(6); // the six messages it replaced
    expect(fourth.messages[0]?.id).toBe(`memloom-summary:${episodes[0]?.id}`);
    // The thread already holds its summary, so it is not repeated among the memories…
    expect(memoriesBlock(systemPromptOf(model.calls, 4))).not.toContain('Oslo');
    // …but another thread of the same user recalls it as an episode (seed 002).
    const other = fakeModel().respond(new AIMessage('You were planning Oslo.'));
    const agent = createAgent({ model: other, tools: [], middleware: [createMemloomMiddleware(memory, { recordTurns: false })] });
    await agent.invoke({ messages: [new HumanMessage('What trip was I planning?')] }, { context: { userId: 'erin' }, configurable: { thread_id: 'thread-2' } });
    expect(memoriesBlock(systemPromptOf(other.calls, 0))).toMatch(/\(episode\) \[2024-05-01 09:00\] Talked about .*I am planning a trip to Oslo in March/);
  });

  it('past the token share of the context window, too', async () => {
    const { memory } = rig();
    const model = fakeModel();
    for (let round = 1; round <= 4; round++) model.respond(new AIMessage('ok'));
    const say = threadAgent(memory, model, { recordTurns: false, workingMemory: false, contextWindowTokens: 300, policy: { session_summary_keep_count: 1 } });
    const long = 'harbour hotel '.repeat(25); // about 90 tokens
    expect((await say(`first ${long}`)).messages).toHaveLength(2);
    expect((await say(`second ${long}`)).messages).toHaveLength(4); // about 180 tokens: 60%
    const third = await say(`third ${long}`); // about 270 tokens: 90% > 75%
    expect(third.messages.map((message) => (isSummaryMessage(message) ? 'summary' : messageText(message)))).toEqual(['summary', 'ok']);
  });

  it('uses the chat model given for the summary', async () => {
    const { memory } = rig();
    const writer = fakeModel().respond(new AIMessage('They planned a March trip to Oslo.'));
    const model = fakeModel().respond(new AIMessage('a')).respond(new AIMessage('b'));
    const say = threadAgent(memory, model, { recordTurns: false, model: writer, policy: { session_summary_message_threshold: 3, session_summary_keep_count: 1 } });
    await say('I am planning a trip to Oslo.');
    const second = await say('In March.');
    expect(messageText(second.messages[0]!)).toBe('Summary of the earlier conversation: They planned a March trip to Oslo.');
    expect(writer.callCount).toBe(1);
  });
});

describe('after the turn', () => {
  it('without a model, records the user’s first-person statements through the strategy engine, not questions', async () => {
    const { memory } = rig();
    const model = fakeModel().respond(new AIMessage('Nice!')).respond(new AIMessage('Still Lisbon.'));
    const say = threadAgent(memory, model);
    await say("Hi! I live in Lisbon and work as a nurse. What's the weather like there?");
    const [fact] = await memory.list({ scope: { userId: 'erin' }, filter: { category: 'fact' } });
    expect(fact).toMatchObject({ content: 'I live in Lisbon and work as a nurse.', verified: true, scope: { userId: 'erin' } });
    expect(fact?.sources).toHaveLength(2); // the user's message and the answer
    const [created] = await memory.history(fact!.id);
    expect(created).toMatchObject({ trigger: 'extraction', action: 'create' });

    await say('I live in Lisbon and work as a nurse.');
    expect(await memory.count({ scope: { userId: 'erin' }, filter: { category: 'fact' } })).toBe(1);
    expect((await memory.history(fact!.id)).map((version) => version.action)).toEqual(['create', 'merge']);
  });

  it('with a chat model, applies its operations on the memories retrieved for the turn', async () => {
    const { memory } = rig();
    const tea = await memory.add('Erin drinks green tea', { scope: { userId: 'erin' } });
    const extractor = fakeModel().respond(new AIMessage(`[UPDATE:${tea.memory.id} USER] Erin drinks black coffee now`));
    const model = fakeModel().respond(new AIMessage('Coffee it is.'));
    const say = threadAgent(memory, model, { model: extractor });
    await say('I switched from green tea to black coffee.');
    expect(extractor.callCount).toBe(1);
    const prompt = extractor.calls[0]!.messages.map(messageText).join('\n');
    expect(prompt).toContain(tea.memory.id);
    expect(prompt).toContain('I switched from green tea to black coffee.');
    expect(prompt).toContain('Coffee it is.');
    expect((await memory.get(tea.memory.id))?.content).toBe('Erin drinks black coffee now');
    expect((await memory.history(tea.memory.id)).at(-1)).toMatchObject({ trigger: 'extraction', action: 'edit' });
    expect(await memory.count({ scope: { userId: 'erin' }, filter: { category: 'fact' } })).toBe(1);
  });

  it('keeps the memories retrieved for two turns of one user at once apart (no thread_id)', async () => {
    const { memory } = rig();
    const { memory: tea } = await memory.add('User prefers green tea', { scope: { userId: 'alice' }, category: 'fact' });
    // The extraction model boosts the memory it was shown; it may only touch memories retrieved for its own turn.
    const extractor = {
      id: 'scripted',
      async generate() {
        await new Promise((resolve) => setTimeout(resolve, 10));
        return `[BOOST:${tea.id}]`;
      },
    };
    const failures: string[] = [];
    const middleware = createMemloomMiddleware(memory, { model: extractor, summarize: false, workingMemory: false, onError: (error, step) => failures.push(`${step}:${error.code}`) });
    const run = (text: string) =>
      createAgent({ model: fakeModel().respond(new AIMessage('Green tea, as you like.')), tools: [], middleware: [middleware] }).invoke(
        { messages: [new HumanMessage(text)] },
        { context: { userId: 'alice' } },
      );
    await Promise.all([run('What tea do I like?'), run('Which green tea should I buy?')]);
    expect(failures).toEqual([]);
    const boosts = (await memory.history(tea.id)).filter((version) => version.reason.startsWith('shaped the reply'));
    expect(boosts).toHaveLength(2);
  });

  it('can take a pipeline made with core, but not together with model or policy', async () => {
    const { memory } = rig();
    const pipeline = createMemoryPipeline({ memory, languageModel: null, policy: { session_summary_message_threshold: 2, session_summary_keep_count: 1 } });
    const say = threadAgent(memory, fakeModel().respond(new AIMessage('a')).respond(new AIMessage('b')), { pipeline, recordTurns: false });
    expect(await say('I live in Lisbon.').then((state) => state.messages.length)).toBe(2);
    expect((await say('I work nights.')).messages.map((message) => (isSummaryMessage(message) ? 'summary' : messageText(message)))).toEqual(['summary', 'b']);
    expect((await errorOf(() => createMemloomMiddleware(memory, { pipeline, policy: {} }))).code).toBe('INVALID_OPTIONS');
    expect((await errorOf(() => createMemloomMiddleware(rig().memory, { pipeline }))).code).toBe('INVALID_OPTIONS');
  });

  it('can be turned off', async () => {
    const { memory } = rig();
    const say = threadAgent(memory, fakeModel().respond(new AIMessage('Nice!')), { recordTurns: false });
    await say('I live in Lisbon.');
    expect(await memory.count()).toBe(0);
  });
});

describe('the <memories> block', () => {
  const alice = { context: { userId: 'alice' } };
  const ask = async (memory: Parameters<typeof createMemloomMiddleware>[0], options: MemloomMiddlewareOptions, question: string) => {
    const model = fakeModel().respond(new AIMessage('ok'));
    const agent = createAgent({ model, tools: [], middleware: [createMemloomMiddleware(memory, { model: null, recordTurns: false, ...options })] });
    await agent.invoke({ messages: [new HumanMessage(question)] }, alice);
    return memoriesBlock(systemPromptOf(model.calls, 0));
  };

  it('stays within a tenth of a known context window, however long the memories are', async () => {
    const { memory } = rig();
    const scope = { userId: 'alice' };
    for (let index = 0; index < 10; index++) {
      await memory.add(`Trip notes ${index}: ${`day ${index} we walked around Kyoto temples and gardens. `.repeat(15)}`, { scope, category: 'fact', merge: false });
    }
    for (let index = 0; index < 20; index++) {
      await memory.add(`Today ${index}: ${'meeting notes about the budget and the schedule. '.repeat(15)}`, { scope, category: 'episode', tags: ['daily-note'], merge: false });
    }
    const block = await ask(memory, { contextWindowTokens: 8000 }, 'Where did we walk in Kyoto?');
    expect(block).toContain('Trip notes');
    expect(estimateTokens(`${block}</memories>`)).toBeLessThanOrEqual(800);
  });

  it('cuts the best memory to fit when it alone is longer than the budget', async () => {
    const { memory } = rig();
    const scope = { userId: 'alice' };
    await memory.add(`Trip notes: ${'we walked around Kyoto temples and gardens. '.repeat(150)}`, { scope, category: 'fact', merge: false });
    const block = await ask(memory, { memoryTokenLimit: 300 }, 'Where did we walk in Kyoto?');
    expect(block).toMatch(/\(fact\) Trip notes: we walked around Kyoto temples .*…$/m);
    expect(estimateTokens(`${block}</memories>`)).toBeLessThanOrEqual(300);
    expect(estimateTokens(`${block}</memories>`)).toBeGreaterThan(250);
  });

  it('cuts the best memory to fit rather than show a lower-ranked one in its place', async () => {
    const { memory } = rig();
    const scope = { userId: 'alice' };
    await memory.add(`Kyoto trip notes: ${'we walked around Kyoto temples and gardens. '.repeat(150)}`, { scope, category: 'fact', merge: false });
    await memory.add('I like tea.', { scope, category: 'fact', merge: false });
    const block = await ask(memory, { memoryTokenLimit: 300, policy: { retrieve_limit: 2 } }, 'Where did we walk in Kyoto?');
    expect(block).toMatch(/Kyoto trip notes: we walked .*…$/m);
    expect(block).not.toContain('I like tea.');
  });

  it('leaves out the oldest daily notes first, then the lowest-ranked memories', async () => {
    const { memory, clock } = rig();
    const scope = { userId: 'alice' };
    const note = (content: string) => memory.add(content, { scope, category: 'episode', tags: ['daily-note'], merge: false });
    await note('Note: booked the ferry to Bergen for Friday');
    clock.advanceDays(1);
    await note('Note: the cabin has no wifi at all');
    clock.advanceDays(1);
    await memory.add('Alice hikes in the mountains every summer', { scope, category: 'fact', merge: false });
    await memory.add('Alice is allergic to peanuts', { scope, category: 'fact', merge: false });
    const lines = (block: string) => block.split('\n').filter((line) => line.startsWith('- '));
    const question = 'Where does Alice hike in summer?';
    // retrieve_limit 1: the best-ranked memory, then the recent notes, newest first.
    const options = { policy: { retrieve_limit: 1 } };
    const whole = await ask(memory, { ...options, memoryTokenLimit: 10_000 }, question);
    expect(lines(whole).map((line) => line.replace(/^- \[[\d-]+\] \(\w+\) /, ''))).toEqual([
      'Alice hikes in the mountains every summer',
      'Note: the cabin has no wifi at all',
      'Note: booked the ferry to Bergen for Friday',
    ]);
    const tokens = estimateTokens(`${whole}</memories>`);
    const withoutOldest = await ask(memory, { ...options, memoryTokenLimit: tokens - 1 }, question);
    expect(lines(withoutOldest)).toEqual(lines(whole).slice(0, 2));
    const header = whole.split('\n')[1];
    const onlyBest = await ask(memory, { ...options, memoryTokenLimit: estimateTokens(`<memories>\n${header}\n${lines(whole)[0]}\n</memories>`) }, question);
    expect(lines(onlyBest)).toEqual(lines(whole).slice(0, 1));
  });

  it('cuts the index (no user text) to the lines that fit, with a warning', async () => {
    const { memory } = rig();
    const scope = { userId: 'alice' };
    for (let index = 0; index < 30; index++) await memory.add(`Alice fact number ${index} about her garden and her bees`, { scope, category: 'fact', merge: false });
    const prompt = await buildMemoryPrompt(memory, {
      scope,
      query: '',
      filter: { category: ['fact'] },
      policy: resolvePolicy([]),
      tokenLimit: 120,
    });
    expect(estimateTokens(prompt.text)).toBeLessThanOrEqual(120);
    expect(prompt.text).toContain('Alice fact number');
    expect(prompt.text).toContain('the memory index has been truncated (exceeded 120 tokens)');
    expect(prompt.text.endsWith('</memories>')).toBe(true);
  });

  it('searches with the end of a user message longer than a query may be, and the run goes on', async () => {
    const { memory } = rig();
    await memory.add('Alice lives in Porto', { scope: { userId: 'alice' }, category: 'fact' });
    const limit = memory.config.limits.maxContentLength;
    const question = 'Where do I live?';
    // Emoji take two UTF-16 units each: the cut falls inside one, whose lone half must not be kept.
    const message = `${'🙂'.repeat(limit / 2)} ${question}`;
    expect(message.length).toBeGreaterThan(limit);
    const search = vi.spyOn(memory, 'search');
    const model = fakeModel().respond(new AIMessage('In Porto.'));
    const agent = createAgent({ model, tools: [], middleware: [createMemloomMiddleware(memory, { model: null })] });
    const result = await agent.invoke({ messages: [new HumanMessage(message)] }, { ...alice, configurable: { thread_id: 'long' } });
    expect(result.messages.at(-1)?.content).toBe('In Porto.');
    const query = search.mock.calls[0]?.[0] ?? '';
    // The end of the message, less the half emoji the cut fell in (lengths compared: a failure would print 10,000 characters).
    expect(query.length).toBe(limit - 1);
    expect(query.endsWith(`🙂 ${question}`)).toBe(true);
    expect(hasLoneSurrogate(query)).toBe(false);
    const prompt = systemPromptOf(model.calls, 0);
    expect(memoriesBlock(prompt)).toContain('Alice lives in Porto');
    expect(prompt).toContain('<working-memory>');
  });

  it('refuses a memoryTokenLimit that is not a whole number above 0', async () => {
    const { memory } = rig();
    expect((await errorOf(() => createMemloomMiddleware(memory, { memoryTokenLimit: 0 }))).code).toBe('INVALID_OPTIONS');
    expect((await errorOf(() => createMemloomMiddleware(memory, { memoryTokenLimit: 1.5 }))).code).toBe('INVALID_OPTIONS');
    // A value of the wrong type is shown as given: a string quoted, not as if it were the number.
    expect((await errorOf(() => createMemloomMiddleware(memory, { memoryTokenLimit: '300' as never }))).message).toContain('got "300"');
  });
});

describe('working memory: mutation audit', () => {
  it('a working_memory_write that failed (an error tool result) does not count as an update: the reminder stays', async () => {
    const { memory } = rig();
    const model = fakeModel();
    for (let round = 1; round <= 6; round++) model.respond(new AIMessage(`answer ${round}`));
    model.respondWithTools([{ name: 'working_memory_write', args: { content: '   ' } }]);
    model.respond(new AIMessage('That did not work.'));
    const say = threadAgent(memory, model, { recordTurns: false });
    for (let round = 1; round <= 7; round++) await say(`message ${round}`);

    const prompts = model.calls.map((_, index) => systemPromptOf(model.calls, index));
    expect(prompts[6]).toContain('for 7 rounds');
    // The call after the refused write: still due, and nothing was written.
    expect(prompts[7]).toContain(REMINDER);
    expect(prompts[7]).toContain('for 7 rounds');
    expect(await memory.count({ filter: { tags: [WORKING_MEMORY_TAG] } })).toBe(0);
  });
});
