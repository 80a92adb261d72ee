import { AIMessage, HumanMessage, mapChatMessagesToStoredMessages, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { RunnableWithMessageHistory } from '@langchain/core/runnables';
import { fakeModel } from '@langchain/core/testing';
import { createMemory } from '@memloom/core';
import { describe, expect, it } from 'vitest';
import { CHAT_MESSAGE_TAG, CHAT_SUMMARY_TAG, MemloomChatMessageHistory } from '../src/index.js';
import { isSummaryMessage, messageText } from '../src/messages.js';
import { errorOf, rig } from './helpers.js';

const plain = (messages: BaseMessage[]) => mapChatMessagesToStoredMessages(messages).map((stored) => JSON.parse(JSON.stringify(stored)));

describe('MemloomChatMessageHistory', () => {
  it('round-trips every kind of message, in order, ids and tool calls included', async () => {
    const { memory } = rig();
    const history = new MemloomChatMessageHistory({ memory, sessionId: 's1', scope: { userId: 'alice' } });
    const messages = [
      new SystemMessage('You are terse.'),
      new HumanMessage({ content: 'What is the weather in Oslo?', id: 'h1' }),
      new AIMessage({ content: '', id: 'a1', tool_calls: [{ id: 'call-1', name: 'weather', args: { city: 'Oslo' }, type: 'tool_call' }] }),
      new ToolMessage({ content: '3°C and snowing', tool_call_id: 'call-1', name: 'weather', id: 't1' }),
      new AIMessage({ content: [{ type: 'text', text: 'Cold: 3°C with snow.' }], id: 'a2' }),
    ];
    await history.addMessages(messages);
    await history.addUserMessage('Thanks!');
    await history.addAIMessage('You are welcome.');
    const loaded = await history.getMessages();
    expect(plain(loaded.slice(0, 5))).toEqual(plain(messages));
    expect(loaded.slice(5).map((message) => [message.type, messageText(message)])).toEqual([
      ['human', 'Thanks!'],
      ['ai', 'You are welcome.'],
    ]);
    const stored = await memory.list({ scope: { userId: 'alice', sessionId: 's1' }, filter: { tags: [CHAT_MESSAGE_TAG] } });
    expect(stored).toHaveLength(7);
    expect(stored.every((record) => record.category === 'system')).toBe(true);
    expect(stored.map((record) => record.content)).toContain('assistant: [called weather]');
  });

  it('survives a new process over the same store, and keeps sessions and users apart', async () => {
    const { memory, store, embedder, clock } = rig();
    const first = new MemloomChatMessageHistory({ memory, sessionId: 's1', scope: { userId: 'alice' } });
    await first.addMessages([new HumanMessage('I am Alice.'), new AIMessage('Hello Alice.')]);
    await new MemloomChatMessageHistory({ memory, sessionId: 's2', scope: { userId: 'alice' } }).addUserMessage('Another chat.');
    await new MemloomChatMessageHistory({ memory, sessionId: 's1', scope: { userId: 'bob' } }).addUserMessage('I am Bob.');

    // A second process: a new Memory and a new history over the same (persistent) store.
    const again = createMemory({ store, embedder, clock });
    const reopened = new MemloomChatMessageHistory({ memory: again, sessionId: 's1', scope: { userId: 'alice' } });
    expect((await reopened.getMessages()).map(messageText)).toEqual(['I am Alice.', 'Hello Alice.']);
    await reopened.addUserMessage('Still me.');
    expect((await reopened.getMessages()).map(messageText)).toEqual(['I am Alice.', 'Hello Alice.', 'Still me.']);
    expect((await new MemloomChatMessageHistory({ memory: again, sessionId: 's1', scope: { userId: 'bob' } }).getMessages()).map(messageText)).toEqual([
      'I am Bob.',
    ]);
  });

  it('keeps the order of messages added concurrently', async () => {
    const { memory } = rig();
    const history = new MemloomChatMessageHistory({ memory, sessionId: 's1', scope: { userId: 'alice' } });
    await Promise.all(Array.from({ length: 8 }, (_, index) => history.addUserMessage(`message ${index}`)));
    expect((await history.getMessages()).map(messageText)).toEqual(Array.from({ length: 8 }, (_, index) => `message ${index}`));
  });

  it('keeps the turns of two history objects writing one session at once whole and in order', async () => {
    const { memory } = rig();
    // RunnableWithMessageHistory makes a new history object per call: a double-submit gives two writers.
    const history = () => new MemloomChatMessageHistory({ memory, sessionId: 's1', scope: { userId: 'alice' } });
    await Promise.all([
      history().addMessages([new HumanMessage('A1 question'), new AIMessage('A2 answer')]),
      history().addMessages([new HumanMessage('B1 question'), new AIMessage('B2 answer')]),
    ]);
    expect((await history().getMessages()).map(messageText)).toEqual(['A1 question', 'A2 answer', 'B1 question', 'B2 answer']);
  });

  it('folds a session once when two history objects pass the threshold at once', async () => {
    const { memory } = rig();
    const scope = { userId: 'alice', sessionId: 's1' };
    const policy = { session_summary_message_threshold: 4, session_summary_keep_count: 2 };
    const history = () => new MemloomChatMessageHistory({ memory, sessionId: 's1', scope: { userId: 'alice' }, model: null, policy });
    await history().addMessages([new HumanMessage('I live in Lyon'), new AIMessage('ok1'), new HumanMessage('I have a cat'), new AIMessage('ok2')]);
    const results = await Promise.allSettled([
      history().addMessages([new HumanMessage('A question about tea'), new AIMessage('A answer')]),
      history().addMessages([new HumanMessage('B question about dogs'), new AIMessage('B answer')]),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled']);
    expect(await memory.count({ scope, filter: { tags: [CHAT_SUMMARY_TAG] } })).toBe(1);
    const messages = await history().getMessages();
    expect(messages.map((message) => (isSummaryMessage(message) ? 'summary' : messageText(message)))).toEqual(['summary', 'B question about dogs', 'B answer']);
    // Every message is in the summary or still in the history: the second fold took in the first's.
    expect(messageText(messages[0]!)).toContain('A question about tea');
    const sequences = (await memory.list({ scope, filter: { tags: [CHAT_MESSAGE_TAG] } })).map((record) => record.metadata.chatSeq);
    expect(new Set(sequences).size).toBe(sequences.length);
  });

  it('past the message threshold, folds all but the last messages into a rolling summary and an episode', async () => {
    const { memory } = rig();
    const scope = { userId: 'alice' };
    const history = new MemloomChatMessageHistory({ memory, sessionId: 's1', scope, policy: { session_summary_message_threshold: 6, session_summary_keep_count: 2 } });
    const turns = [
      ['I am planning a trip to Oslo in March.', 'Nice, March is cold there.'],
      ['I need a hotel near the harbour.', 'Noted: harbour hotel.'],
      ['My budget is 200 euros a night.', 'Understood.'],
    ];
    for (const [user, ai] of turns) await history.addMessages([new HumanMessage(user!), new AIMessage(ai!)]);
    expect((await history.getMessages()).some(isSummaryMessage)).toBe(false); // 6 messages: not past 6

    await history.addUserMessage('Find me a museum too.'); // the 7th
    const messages = await history.getMessages();
    expect(messages.map((message) => (isSummaryMessage(message) ? 'summary' : messageText(message)))).toEqual([
      'summary',
      'Understood.',
      'Find me a museum too.',
    ]);
    expect(messageText(messages[0]!)).toMatch(
      /^Summary of the earlier conversation: Talked about .*\. The user said: I am planning a trip to Oslo in March\. \/ I need a hotel near the harbour\. \/ My budget is 200 euros a night\.$/,
    );
    expect(await memory.count({ scope: { ...scope, sessionId: 's1' }, filter: { tags: [CHAT_MESSAGE_TAG] } })).toBe(2);
    const [episode] = await memory.list({ scope, filter: { category: 'episode' } });
    expect(episode?.scope).toEqual({ userId: 'alice', sessionId: 's1' });
    expect(episode?.content).toMatch(/^\[2024-05-01 09:00\] Talked about .*Oslo in March/);
    expect(messages[0]?.id).toBe(`memloom-summary:${episode?.id}`);

    // The summary counts as a message; past the threshold again, it is folded into the next one.
    await history.addMessages([new HumanMessage('The museum should be about ships.'), new AIMessage('The Viking Ship Museum, then.')]);
    expect((await history.getMessages()).filter(isSummaryMessage).map(messageText)).toEqual([messageText(messages[0]!)]);
    await history.addMessages([new HumanMessage('And a good fish restaurant.'), new AIMessage('Try the harbour market.')]);
    const later = await history.getMessages();
    expect(later.map((message) => (isSummaryMessage(message) ? 'summary' : messageText(message)))).toEqual([
      'summary',
      'And a good fish restaurant.',
      'Try the harbour market.',
    ]);
    expect(messageText(later[0]!)).toContain('The user said: Find me a museum too. / The museum should be about ships.');
    expect(await memory.count({ scope: { ...scope, sessionId: 's1' }, filter: { tags: [CHAT_SUMMARY_TAG] } })).toBe(1);
    expect(await memory.count({ scope: { ...scope, sessionId: 's1' }, filter: { tags: [CHAT_MESSAGE_TAG] } })).toBe(2);
  });

  it('writes the summary with the chat model given', async () => {
    const { memory } = rig();
    const writer = fakeModel().respond(new AIMessage('Alice is planning a trip to Oslo in March.'));
    const history = new MemloomChatMessageHistory({ memory, sessionId: 's1', scope: { userId: 'alice' }, model: writer, policy: { session_summary_message_threshold: 2, session_summary_keep_count: 1 } });
    await history.addMessages([new HumanMessage('I am planning a trip to Oslo.'), new AIMessage('When?'), new HumanMessage('In March.')]);
    expect((await history.getMessages()).map(messageText)).toEqual(['Summary of the earlier conversation: Alice is planning a trip to Oslo in March.', 'In March.']);
    expect(writer.calls[0]?.messages.map(messageText).join('\n')).toContain('I am planning a trip to Oslo.');
  });

  it('past the token share of the context window, too; and not at all when summarize is off', async () => {
    const { memory } = rig();
    const long = 'harbour hotel '.repeat(25); // about 90 tokens
    const history = new MemloomChatMessageHistory({ memory, sessionId: 's1', scope: { userId: 'alice' }, contextWindowTokens: 300, policy: { session_summary_keep_count: 1 } });
    await history.addMessages([new HumanMessage(`one ${long}`), new AIMessage('ok'), new HumanMessage(`two ${long}`)]);
    expect((await history.getMessages()).some(isSummaryMessage)).toBe(false);
    await history.addMessages([new AIMessage('ok'), new HumanMessage(`three ${long}`)]);
    expect((await history.getMessages()).map((message) => (isSummaryMessage(message) ? 'summary' : messageText(message).slice(0, 5)))).toEqual([
      'summary',
      'three',
    ]);

    const off = new MemloomChatMessageHistory({ memory, sessionId: 's2', scope: { userId: 'alice' }, summarize: false, policy: { session_summary_message_threshold: 2 } });
    for (let index = 0; index < 5; index++) await off.addUserMessage(`m${index}`);
    expect(await off.getMessages()).toHaveLength(5);
  });

  it('clear() forgets the conversation but not the episodes made from it', async () => {
    const { memory } = rig();
    const history = new MemloomChatMessageHistory({ memory, sessionId: 's1', scope: { userId: 'alice' }, policy: { session_summary_message_threshold: 2, session_summary_keep_count: 1 } });
    await history.addMessages([new HumanMessage('I like sailing.'), new AIMessage('Nice.'), new HumanMessage('I sail on Sundays.')]);
    expect((await history.getMessages()).some(isSummaryMessage)).toBe(true);
    await history.clear();
    expect(await history.getMessages()).toEqual([]);
    expect(await memory.count({ scope: { userId: 'alice' }, filter: { category: 'episode' } })).toBe(1);
  });

  it('works as the history of RunnableWithMessageHistory', async () => {
    const { memory } = rig();
    const model = fakeModel().respond(new AIMessage('Hello Alice.')).respond(new AIMessage('You are Alice.'));
    const chain = new RunnableWithMessageHistory({
      runnable: model,
      getMessageHistory: (sessionId: string) => new MemloomChatMessageHistory({ memory, sessionId, scope: { userId: 'alice' } }),
    });
    const config = { configurable: { sessionId: 'chat-1' } };
    await chain.invoke([new HumanMessage('I am Alice.')], config);
    await chain.invoke([new HumanMessage('Who am I?')], config);
    expect(model.calls[1]?.messages.map(messageText)).toEqual(['I am Alice.', 'Hello Alice.', 'Who am I?']);
  });

  it('needs a memory and a valid session id', async () => {
    const { memory } = rig();
    expect((await errorOf(() => new MemloomChatMessageHistory({ memory: undefined as never, sessionId: 's' }))).code).toBe('INVALID_OPTIONS');
    expect((await errorOf(() => new MemloomChatMessageHistory({ memory, sessionId: '  ' }))).code).toBe('INVALID_SCOPE');
  });
});

describe('MemloomChatMessageHistory: mutation audit', () => {
  it('with summarize: false keeps every message past the threshold: no summary, no episode, nothing deleted', async () => {
    const { memory } = rig();
    const off = new MemloomChatMessageHistory({ memory, sessionId: 's2', scope: { userId: 'alice' }, summarize: false, policy: { session_summary_message_threshold: 2, session_summary_keep_count: 1 } });
    for (let index = 0; index < 5; index++) await off.addUserMessage(`I like colour number ${index}`);
    const messages = await off.getMessages();
    expect(messages.some(isSummaryMessage)).toBe(false);
    expect(messages.map(messageText)).toEqual([0, 1, 2, 3, 4].map((index) => `I like colour number ${index}`));
    expect(await memory.count({ filter: { category: 'episode' } })).toBe(0);
    expect(await memory.count({ filter: { tags: [CHAT_SUMMARY_TAG] } })).toBe(0);
  });
});
