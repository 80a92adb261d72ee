import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import { createAgent } from 'langchain';
import { describe, expect, it } from 'vitest';
import { createMemloomMiddleware, createMemloomTools, memoryAppendTool, memoryForgetTool, memorySearchTool } from '../src/index.js';
import { errorOf, memoriesBlock, rig, systemPromptOf } from './helpers.js';

const alice = { context: { userId: 'alice' } };

function toolCall(name: string, args: Record<string, unknown>, id = 'call-1') {
  return { type: 'tool_call' as const, id, name, args };
}

/** Run one agent turn in which the model makes these tool calls, and return the tool messages. */
async function callTools(memory: Parameters<typeof createMemloomMiddleware>[0], calls: Array<{ name: string; args: Record<string, unknown> }>) {
  const model = fakeModel().respondWithTools(calls).respond(new AIMessage('Done.'));
  const agent = createAgent({ model, tools: [], middleware: [createMemloomMiddleware(memory, { recordTurns: false })] });
  const result = await agent.invoke({ messages: [new HumanMessage('Go.')] }, alice);
  return result.messages.filter((message: BaseMessage): message is ToolMessage => ToolMessage.isInstance(message));
}

describe('memory tools given bad input', () => {
  it('answer the model with a readable tool error and write nothing', async () => {
    const { memory } = rig();
    const bobs = await memory.add('Bob keeps his passport in the desk', { scope: { userId: 'bob' } });
    const own = await memory.add('Alice has a chess club on Tuesdays', { scope: { userId: 'alice' } });
    const before = await memory.count();

    const results = await callTools(memory, [
      { name: 'memory_append', args: { content: '   ' } },
      { name: 'memory_append', args: {} },
      { name: 'memory_append', args: { content: 'I like tea', slot: 'forever' } },
      { name: 'memory_append', args: { content: 42 } },
      { name: 'memory_search', args: {} },
      { name: 'memory_search', args: { query: 'chess', limit: 0 } },
      { name: 'memory_search', args: { query: 'chess', limit: 'ten' } },
      { name: 'memory_forget', args: { id: bobs.memory.id } },
      { name: 'memory_forget', args: { id: 'no-such-memory' } },
      { name: 'memory_forget', args: { id: '' } },
    ]);

    expect(results.map((message) => message.status)).toEqual(Array(10).fill('error'));
    const texts = results.map((message) => String(message.content));
    expect(texts[0]).toBe(
      'Error: memory_append was called with invalid arguments: content must not be empty. Nothing was changed; call it again with valid arguments.',
    );
    expect(texts[1]).toContain('content is required');
    expect(texts[2]).toContain('slot must be "long_term" or "today"');
    expect(texts[3]).toContain('content must be a string');
    expect(texts[4]).toContain('query is required');
    expect(texts[5]).toContain('limit must be a whole number from 1 to 50');
    expect(texts[6]).toContain('limit must be a whole number from 1 to 50');
    expect(texts[7]).toBe(
      `Error: no memory with id "${bobs.memory.id}" belongs to the current user; nothing was deleted (use memory_search to find ids)`,
    );
    expect(texts[8]).toContain('no memory with id "no-such-memory"');
    expect(texts[9]).toContain('id must not be empty');
    for (const text of texts) expect(text).not.toMatch(/\n\s+at |\[memloom\]/); // no stack traces, no prefixes

    expect(await memory.count()).toBe(before);
    expect(await memory.get(bobs.memory.id)).toEqual(bobs.memory);
    expect(await memory.get(own.memory.id)).toEqual(own.memory);
  });

  it('throws a MemloomError when invoked directly, outside a tool call', async () => {
    const { memory } = rig();
    const append = memoryAppendTool(memory);
    const error = await errorOf(append.invoke({ content: '' }, { configurable: { userId: 'alice' } }));
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.message).toContain('content must not be empty');
    const forget = memoryForgetTool(memory);
    expect((await errorOf(forget.invoke({ id: 'missing' }, { configurable: { userId: 'alice' } }))).code).toBe('NOT_FOUND');
    expect(await memory.count()).toBe(0);

    const message = await append.invoke(toolCall('memory_append', { content: '' }), { configurable: { userId: 'alice' } });
    expect(ToolMessage.isInstance(message) && message.status).toBe('error');
    expect(await memory.count()).toBe(0);
  });

  it('tell the model when the run has no user instead of writing to a shared pile', async () => {
    const { memory } = rig();
    const message = await memoryAppendTool(memory).invoke(toolCall('memory_append', { content: 'I like tea' }));
    expect(ToolMessage.isInstance(message) && message.status).toBe('error');
    expect(String((message as ToolMessage).content)).toMatch(/needs to know whose memories to use/);
    expect(await memory.count()).toBe(0);
  });
});

describe('memory tools', () => {
  it('memory_search returns the user’s memories with ids and freshness notes, within the limit', async () => {
    const { memory, clock } = rig({}, { freshness: {} });
    const tea = await memory.add('Alice drinks green tea every morning', { scope: { userId: 'alice' } });
    await memory.add('Alice plays chess on Tuesdays', { scope: { userId: 'alice' } });
    await memory.add('Bob drinks green tea too', { scope: { userId: 'bob' } });
    clock.advanceDays(3);
    const search = memorySearchTool(memory);
    const text = String(await search.invoke({ query: 'green tea', limit: 1 }, alice as never));
    expect(text).toContain(`1. [id: ${tea.memory.id}] (fact, updated 2024-05-01) Alice drinks green tea every morning`);
    expect(text).toContain('This memory is 3 days old');
    expect(text).not.toContain('chess');
    expect(text).not.toContain('Bob');
    expect(String(await search.invoke({ query: 'volcanoes' }, { configurable: { userId: 'nobody' } }))).toBe('No memories match "volcanoes".');
  });

  it('memory_append stores long_term as a fact and today as a dated episode note', async () => {
    const { memory } = rig();
    const append = memoryAppendTool(memory);
    const longTerm = String(await append.invoke({ content: 'Alice is allergic to peanuts' }, alice as never));
    expect(longTerm).toMatch(/^Saved to long-term memory as \S+\.\n## 2024-05-01\nAlice is allergic to peanuts$/);
    const today = String(await append.invoke({ content: 'Alice has a dentist appointment at 3pm', slot: 'today' }, alice as never));
    expect(today).toMatch(/^Saved to today's notes as \S+\.\n## 2024-05-01\n/);
    const [fact] = await memory.list({ scope: { userId: 'alice' }, filter: { category: 'fact' } });
    expect(fact).toMatchObject({ content: 'Alice is allergic to peanuts', source: 'background_ai', verified: false });
    const [note] = await memory.list({ scope: { userId: 'alice' }, filter: { category: 'episode' } });
    expect(note).toMatchObject({ content: 'Alice has a dentist appointment at 3pm', tags: ['daily-note'], metadata: { slot: 'today', date: '2024-05-01' } });
  });

  it('memory_forget deletes the user’s own memory, but not records outside the recall filter', async () => {
    const { memory } = rig();
    const own = await memory.add('Alice lives in Porto', { scope: { userId: 'alice' } });
    const machinery = await memory.add('a transcript line', { scope: { userId: 'alice' }, category: 'system' });
    const forget = memoryForgetTool(memory);
    expect(String(await forget.invoke({ id: own.memory.id }, alice as never))).toBe(`Forgot memory ${own.memory.id}: "Alice lives in Porto"`);
    expect(await memory.get(own.memory.id)).toBeUndefined();
    expect((await errorOf(forget.invoke({ id: machinery.memory.id }, alice as never))).code).toBe('NOT_FOUND');
    expect(await memory.get(machinery.memory.id)).toBeDefined();
  });

  it('createMemloomTools gives seed 001’s tools plus memory_forget, each with a zod schema', () => {
    const { memory } = rig();
    const tools = createMemloomTools(memory);
    expect(tools.map((tool) => tool.name)).toEqual(['memory_search', 'memory_append', 'memory_forget']);
  });

  it('memory_append’s slot is optional in the schema the model sees, and defaults to long_term', async () => {
    const { memory } = rig();
    const append = memoryAppendTool(memory);
    const { parameters } = convertToOpenAITool(append).function as { parameters: { required?: string[]; properties: Record<string, unknown> } };
    expect(parameters.required).toEqual(['content']);
    expect(parameters.properties.slot).toMatchObject({ enum: ['long_term', 'today'] });
    await append.invoke({ content: 'Alice plays the cello' }, alice as never);
    expect((await memory.list({ scope: { userId: 'alice' } })).map((record) => [record.category, record.metadata.slot])).toEqual([['fact', 'long_term']]);
  });

  it('daily notes of the last recent_days days join the prompt, older ones do not', async () => {
    const { memory, clock } = rig();
    const append = memoryAppendTool(memory);
    await append.invoke({ content: 'Booked a flight to Oslo', slot: 'today' }, alice as never);
    clock.advanceDays(2);
    await append.invoke({ content: 'Packed the winter coat', slot: 'today' }, alice as never);
    await memory.add('Alice likes window seats', { scope: { userId: 'alice' } });

    const promptFor = async (policy: { retrieve_limit: number; recent_days: number }) => {
      const model = fakeModel().respond(new AIMessage('OK.'));
      const agent = createAgent({ model, tools: [], middleware: [createMemloomMiddleware(memory, { policy, recordTurns: false })] });
      await agent.invoke({ messages: [new HumanMessage('Which seat do I like?')] }, alice);
      return memoriesBlock(systemPromptOf(model.calls, 0));
    };
    const three = await promptFor({ retrieve_limit: 1, recent_days: 3 });
    expect(three).toContain('Booked a flight to Oslo');
    expect(three).toContain('Packed the winter coat');
    const one = await promptFor({ retrieve_limit: 1, recent_days: 1 });
    expect(one).toContain('Packed the winter coat');
    expect(one).not.toContain('Booked a flight to Oslo');
  });

  it('every episode of the last recent_days is a daily note (the Markdown store’s daily files), not only memory_append’s', async () => {
    const { memory, clock } = rig();
    await memory.add('今天和Anna讨论了京都旅行计划', { scope: { userId: 'alice' }, category: 'episode' });
    await memory.add('Alice likes window seats', { scope: { userId: 'alice' } });
    clock.advance(3_600_000);
    const model = fakeModel().respond(new AIMessage('OK.'));
    const agent = createAgent({ model, tools: [], middleware: [createMemloomMiddleware(memory, { policy: { retrieve_limit: 1 }, recordTurns: false })] });
    await agent.invoke({ messages: [new HumanMessage('Which seat do I like?')] }, alice);
    const block = memoriesBlock(systemPromptOf(model.calls, 0));
    expect(block).toContain('Alice likes window seats');
    expect(block).toContain('(episode) 今天和Anna讨论了京都旅行计划');
  });

  it('a daily note restated on a later day is that day’s note: it joins the prompt', async () => {
    const { memory, clock } = rig();
    const append = memoryAppendTool(memory);
    await append.invoke({ content: 'Dentist appointment at 3pm', slot: 'today' }, alice as never);
    clock.advanceDays(5);
    const again = String(await append.invoke({ content: 'Dentist appointment at 3pm', slot: 'today' }, alice as never));
    expect(again).toMatch(/^Merged into existing memory \S+ in today's notes\.\n## 2024-05-06\n/);
    await memory.add('xyzzy plugh is the magic word', { scope: { userId: 'alice' } });
    const model = fakeModel().respond(new AIMessage('OK.'));
    const agent = createAgent({ model, tools: [], middleware: [createMemloomMiddleware(memory, { policy: { retrieve_limit: 1 }, recordTurns: false })] });
    await agent.invoke({ messages: [new HumanMessage('xyzzy plugh')] }, alice);
    expect(memoriesBlock(systemPromptOf(model.calls, 0))).toContain('- [2024-05-06] (episode) Dentist appointment at 3pm');
  });
});

describe('memory tools: mutation audit (scope option, recall filter)', () => {
  it("a fixed scope option wins over the run's own fields: the run cannot point the tools at another user", async () => {
    const { memory } = rig();
    await memory.add('Alice drinks green tea every morning', { scope: { userId: 'alice' } });
    await memory.add('Mallory drinks green tea at night', { scope: { userId: 'mallory' } });
    const search = memorySearchTool(memory, { scope: { userId: 'alice' } });
    const text = String(await search.invoke({ query: 'green tea' }, { context: { userId: 'mallory' }, configurable: { userId: 'mallory' } } as never));
    expect(text).toContain('Alice drinks green tea every morning');
    expect(text).not.toContain('Mallory');
  });

  it('memory_search shows no records outside the recall filter (system records), and honours a filter given', async () => {
    const { memory } = rig();
    await memory.add('a transcript line about green tea', { scope: { userId: 'alice' }, category: 'system' });
    await memory.add('Alice drinks green tea every morning', { scope: { userId: 'alice' } });
    await memory.add('Yesterday Alice bought green tea in Kyoto', { scope: { userId: 'alice' }, category: 'episode' });
    const byDefault = String(await memorySearchTool(memory).invoke({ query: 'green tea' }, alice as never));
    expect(byDefault).toContain('Alice drinks green tea every morning');
    expect(byDefault).not.toContain('transcript line');
    const episodesOnly = String(await memorySearchTool(memory, { filter: { category: 'episode' } }).invoke({ query: 'green tea' }, alice as never));
    expect(episodesOnly).toContain('Kyoto');
    expect(episodesOnly).not.toContain('every morning');
    expect(episodesOnly).not.toContain('transcript line');
  });
});
