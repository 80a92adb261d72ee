import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { MemorySaver } from '@langchain/langgraph';
import { createAgent } from 'langchain';
import { describe, expect, it } from 'vitest';
import { createMemloomMiddleware, SESSION_SUMMARY_TAG, type MemloomMiddlewareOptions } from '../src/index.js';
import { isSummaryMessage, messageText } from '../src/messages.js';
import { errorOf, rig, systemPromptOf } from './helpers.js';

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

  it('rejects bad working-memory options when the middleware is made', async () => {
    const { memory } = rig();
    expect((await errorOf(() => createMemloomMiddleware(memory, { workingMemory: { maxRounds: -1 } }))).code).toBe('INVALID_OPTIONS');
    expect((await errorOf(() => createMemloomMiddleware(memory, { policy: { retrieve_limit: 0 } }))).code).toBe('INVALID_CONFIG');
  });
});

describe('seed 001: session summaries', () => {
  it('past the message threshold, older messages become one summary message and an episode of the thread', async () => {
    const { memory } = rig();
    const model = fakeModel();
    for (let round = 1; round <= 5; round++) model.respond(new AIMessage(`reply ${round}`));
    const say = threadAgent(memory, model, { recordTurns: false, policy: { session_summary_message_threshold: 6, session_summary_keep_count: 2 } });
    await say('I am planning a trip to Oslo in March.');
    await say('I need a hotel near the harbour.');
    await say('My budget is 200 euros a night.');
    // 6 messages so far: not past the threshold yet.
    expect(model.calls[2]?.messages.some(isSummaryMessage)).toBe(false);
    const result = await say('Can you also find a museum?'); // the 7th message
    const summarized = model.calls[3]!.messages.slice(1);
    expect(summarized).toHaveLength(3);
    expect(isSummaryMessage(summarized[0]!)).toBe(true);
    const summary = messageText(summarized[0]!);
    expect(summary).toContain('- I am planning a trip to Oslo in March.');
    expect(summary).toContain('- My budget is 200 euros a night.');
    expect(summarized.slice(1).map(messageText)).toEqual(['reply 3', 'Can you also find a museum?']);
    // The checkpointed state holds the summary too, so the next turn starts from it.
    expect(result.messages.map(messageText).slice(1)).toEqual(['reply 3', 'Can you also find a museum?', 'reply 4']);

    const episodes = await memory.list({ scope: { userId: 'erin' }, filter: { category: 'episode', tags: [SESSION_SUMMARY_TAG] } });
    expect(episodes).toHaveLength(1);
    expect(episodes[0]?.scope).toEqual({ userId: 'erin', sessionId: 'thread-1' });
    expect(episodes[0]?.sources.length).toBe(5); // the five messages it replaced
    // The thread already holds its summary, so it is not repeated among the memories…
    expect(systemPromptOf(model.calls, 3)).not.toContain('Oslo');
    // …but another thread of the same user recalls it as an episode (seed 002).
    const other = fakeModel().respond(new AIMessage('You were planning Oslo.'));
    const agent = createAgent({ model: other, tools: [], middleware: [createMemloomMiddleware(memory, { recordTurns: false })] });
    await agent.invoke({ messages: [new HumanMessage('What trip was I planning?')] }, { context: { userId: 'erin' }, configurable: { thread_id: 'thread-2' } });
    expect(systemPromptOf(other.calls, 0)).toMatch(/\(episode\) \[[^\]]+\] 5 messages\. Talked about: .*The user said: - I am planning a trip to Oslo in March\./);
  });

  it('past the token share of the context window, too', async () => {
    const { memory } = rig();
    const model = fakeModel();
    for (let round = 1; round <= 3; round++) model.respond(new AIMessage('ok'));
    const say = threadAgent(memory, model, { recordTurns: false, workingMemory: false, contextWindowTokens: 300, policy: { session_summary_keep_count: 1 } });
    const long = 'harbour hotel '.repeat(25); // about 90 tokens
    await say(`first ${long}`);
    await say(`second ${long}`); // about 190 tokens: under 75% of 300
    expect(model.calls[1]?.messages.some(isSummaryMessage)).toBe(false);
    await say(`third ${long}`); // about 290 tokens: over
    expect(model.calls[2]?.messages.filter((message) => message.type !== 'system').map((message) => (isSummaryMessage(message) ? 'summary' : messageText(message).slice(0, 5)))).toEqual([
      'summary',
      'third',
    ]);
  });
});

describe('after the turn', () => {
  it('records the user’s statements through the strategy engine, not questions', async () => {
    const { memory } = rig();
    const model = fakeModel().respond(new AIMessage('Nice!')).respond(new AIMessage('Still Lisbon.'));
    const say = threadAgent(memory, model);
    await say("Hi! I live in Lisbon and work as a nurse. What's the weather like there?");
    const [fact] = await memory.list({ scope: { userId: 'erin' }, filter: { category: 'fact' } });
    expect(fact).toMatchObject({ content: 'I live in Lisbon and work as a nurse.', source: 'user', verified: true, scope: { userId: 'erin' } });
    expect(fact?.sources).toHaveLength(1);
    const [created] = await memory.history(fact!.id);
    expect(created).toMatchObject({ trigger: 'extraction', action: 'create' });

    await say('I live in Lisbon and work as a nurse.');
    expect(await memory.count({ scope: { userId: 'erin' }, filter: { category: 'fact' } })).toBe(1);
    expect((await memory.history(fact!.id)).map((version) => version.action)).toEqual(['create', 'merge']);
  });

  it('can be turned off', async () => {
    const { memory } = rig();
    const say = threadAgent(memory, fakeModel().respond(new AIMessage('Nice!')), { recordTurns: false });
    await say('I live in Lisbon.');
    expect(await memory.count()).toBe(0);
  });
});
