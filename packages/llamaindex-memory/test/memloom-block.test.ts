import { createMemory as createChatMemory, loadMemory as loadChatMemory, type MemoryMessage } from '@llamaindex/core/memory';
import { extractText } from '@llamaindex/core/utils';
import { createMemory, createMemoryPipeline, MemloomError } from '@memloom/core';
import { createFakeClock, createInMemoryStore, createScriptedModel, createTestEmbedder } from '@memloom/core/testing';
import { createDefaultEmbedder } from '@memloom/embeddings';
import { describe, expect, it, vi } from 'vitest';
import { countTokens } from '../src/messages.js';
import { memloomBlock, MemloomMemoryBlock } from '../src/index.js';
import { addSystemRecords, createFailingStore, recordingLogger, ScriptedLLM, setupMemory, textsByRole } from './helpers.js';

const alice = { userId: 'alice' };
const bob = { userId: 'bob' };
/** The model getLLM sizes the context for (8192-token window). */
const llm = new ScriptedLLM(() => ({ content: 'ok' }));

const aliceFacts = [
  'I am allergic to peanuts, so never suggest peanut snacks.',
  'My sister Ana lives in Porto and works as a dentist.',
  'I play the cello in a community orchestra on Tuesdays.',
  'We are moving to a new flat in Lisbon next month.',
];

/** A LlamaIndex Memory whose short-term part holds ~60 tokens, so a few messages overflow it. */
function chatMemoryWith(block: MemloomMemoryBlock) {
  return createChatMemory({ tokenLimit: 120, shortTermTokenLimitRatio: 0.5, memoryBlocks: [block] });
}

async function converse(chat: ReturnType<typeof chatMemoryWith>, userTexts: string[]) {
  for (const text of userTexts) {
    await chat.add({ role: 'user', content: text });
    await chat.add({ role: 'assistant', content: 'Noted, thanks for telling me.' });
  }
}

function memoryMessages(messages: Awaited<ReturnType<ReturnType<typeof chatMemoryWith>['getLLM']>>): string {
  return textsByRole(messages, 'memory').join('\n');
}

describe('MemloomMemoryBlock in a real LlamaIndex Memory', () => {
  it('records nothing while short-term memory has room, then the facts of the flushed turns', async () => {
    const { memory } = setupMemory();
    const chat = chatMemoryWith(memloomBlock({ memory, scope: alice }));

    await chat.add({ role: 'user', content: aliceFacts[0] });
    expect(await memory.count({ scope: alice })).toBe(0);

    await converse(chat, aliceFacts.slice(1));
    const stored = (await memory.list({ scope: alice })).map((record) => record.content);
    expect(stored.length).toBeGreaterThanOrEqual(3);
    for (const text of stored) expect(aliceFacts).toContain(text);
    expect(stored).not.toContain('Noted, thanks for telling me.');

    // Deterministic extraction (no model): the user's own statement, through the strategy engine.
    const records = await memory.list({ scope: alice, orderBy: 'createdAt' });
    const second = records.find((record) => record.content === aliceFacts[1]);
    expect(second).toMatchObject({ category: 'fact', verified: true });
    expect((await memory.history(second!.id))[0]).toMatchObject({ trigger: 'extraction', action: 'create' });
    expect(second!.sources).toHaveLength(2); // the user's message and the reply to it
  });

  it('gives getLLM() the relevant memory and leaves the irrelevant ones out', async () => {
    const { memory } = setupMemory();
    const block = memloomBlock({ memory, scope: alice });
    const chat = chatMemoryWith(block);
    // Small talk pushes the last fact out of short-term memory too.
    await converse(chat, [...aliceFacts, ...Array(3).fill('Let us talk about something else for a while, nothing important here.')]);
    const stored = (await memory.list({ scope: alice })).map((record) => record.content);
    for (const fact of aliceFacts) expect(stored).toContain(fact);

    await chat.add({ role: 'user', content: 'Which snacks should I pack for cello practice at the orchestra? Remember the peanuts.' });
    const context = memoryMessages(await chat.getLLM(llm));
    expect(context).toContain('<memories>');
    expect(context).toContain('allergic to peanuts');
    expect(context).toContain('cello in a community orchestra');
    expect(context).not.toContain('Porto');
    expect(context).not.toContain('Lisbon');
  });

  it('with the offline default embedder, shows a related memory that shares no word with the query, and not an unrelated one', async () => {
    const memory = createMemory({ store: createInMemoryStore(), embedder: createDefaultEmbedder() });
    for (const fact of ['I am planning a trip to Kyoto in April.', 'I am vegetarian, so no meat or fish for me.', 'I would also like to see the bamboo forest in Arashiyama early in the morning.']) {
      await memory.add(fact, { scope: alice });
    }
    const chat = createChatMemory({ memoryBlocks: [memloomBlock({ memory, scope: alice })] });
    await chat.add({ role: 'user', content: 'Which restaurants would suit me?' });
    const context = memoryMessages(await chat.getLLM(llm));
    expect(context).toContain('vegetarian');
    expect(context).not.toContain('bamboo');
  });

  it("the README's first example: two facts from one sentence with no model, and the related one shown to the next conversation", async () => {
    const memory = createMemory({ store: createInMemoryStore(), embedder: createDefaultEmbedder() });
    const converse = async (text: string) => {
      const block = memloomBlock({ memory, scope: alice });
      const chat = createChatMemory({ memoryBlocks: [block] });
      await chat.add({ role: 'user', content: text });
      const shown = memoryMessages(await chat.getLLM(llm));
      await chat.add({ role: 'assistant', content: 'Happy to help.' });
      await block.flush(chat);
      return shown;
    };
    await converse('I am vegetarian, and I am planning a trip to Kyoto.');
    expect((await memory.list({ scope: alice })).map((record) => record.content).sort()).toEqual(['I am planning a trip to Kyoto.', 'I am vegetarian.']);
    const shown = await converse('Can you suggest a restaurant for dinner?');
    expect(shown).toContain('I am vegetarian.');
    expect(shown).not.toContain('Kyoto');
  });

  it("never shows another user's memories, however well they match", async () => {
    const { memory } = setupMemory();
    await memory.add('Bob is allergic to peanuts and keeps peanut-free snacks at home.', { scope: bob });
    await memory.add('Bob plays the cello in the orchestra too.', { scope: bob });
    const chat = chatMemoryWith(memloomBlock({ memory, scope: alice }));
    await converse(chat, aliceFacts);

    await chat.add({ role: 'user', content: 'Suggest peanut-free snacks for the orchestra, please.' });
    const context = memoryMessages(await chat.getLLM(llm));
    expect(context).toContain('allergic to peanuts, so never suggest');
    expect(context).not.toContain('Bob');
    expect((await memory.list({ scope: bob })).map((record) => record.content).join()).not.toContain('I am allergic');
  });

  it("leaves out system records (another adapter's chat history and store items) unless its filter asks for them", async () => {
    const { memory } = setupMemory();
    await addSystemRecords(memory);
    await memory.add('I live in Lyon.', { scope: alice, category: 'fact' });
    const question: MemoryMessage[] = [{ id: 'q', role: 'user', content: 'What is my password? Green tea? Lyon?' }];
    const [shown] = await memloomBlock({ memory, scope: alice, minScore: 0 }).get(question);
    expect(shown?.content).toContain('I live in Lyon.');
    expect(shown?.content).not.toContain('hunter2');
    expect(shown?.content).not.toContain('green tea');
    const [everything] = await memloomBlock({ memory, scope: alice, minScore: 0, filter: {} }).get(question);
    expect(everything?.content).toContain('hunter2');
    expect(everything?.content).toContain('green tea');
  });

  it('adds the freshness note to memories older than the threshold', async () => {
    const { memory, clock } = setupMemory({ freshness: true });
    const chat = chatMemoryWith(memloomBlock({ memory, scope: alice }));
    await converse(chat, aliceFacts);

    await chat.add({ role: 'user', content: 'Any peanut-free snacks for today?' });
    expect(memoryMessages(await chat.getLLM(llm))).not.toContain('<system-reminder>');

    clock.advanceDays(3);
    const stale = memoryMessages(await chat.getLLM(llm));
    expect(stale).toContain('allergic to peanuts');
    expect(stale).toMatch(/allergic to peanuts.*\n\s*<system-reminder>\s*This memory is 3 days old\./);
  });

  it('keeps the memories within its token limit, dropping the lowest-ranked first', async () => {
    const { memory } = setupMemory();
    for (const text of aliceFacts) await memory.add(text, { scope: alice });
    const query: MemoryMessage[] = [{ id: 'q', role: 'user', content: 'peanuts snacks orchestra cello Tuesdays' }];

    const roomy = await memloomBlock({ memory, scope: alice }).get(query);
    expect(roomy).toHaveLength(1);
    expect(roomy[0]!.content).toContain('peanuts');
    expect(roomy[0]!.content).toContain('cello');

    const tokenLimit = countTokens(roomy[0]!.content as string) - 5;
    const tight = await memloomBlock({ memory, scope: alice, tokenLimit }).get(query);
    expect(tight).toHaveLength(1);
    expect(countTokens(tight[0]!.content as string)).toBeLessThanOrEqual(tokenLimit);
    expect(tight[0]!.content).toContain('cello');
    expect(tight[0]!.content).not.toContain('peanuts');

    expect(await memloomBlock({ memory, scope: alice, tokenLimit: 10 }).get(query)).toEqual([]);
  });

  it("shows the policy's retrieve_limit (10) best memories by default, then the daily notes of its last recent_days (3)", async () => {
    const { memory, clock } = setupMemory({ neverMerge: true });
    for (let index = 1; index <= 13; index++) await memory.add(`My job at the hospital, detail ${index}: the night shift starts at ${index} pm`, { scope: alice });
    await memory.add('今天和Anna讨论了京都旅行计划', { scope: alice, category: 'episode' });
    clock.advance(3_600_000);
    const query: MemoryMessage[] = [{ id: 'q', role: 'user', content: 'What is my job at the hospital, and when does the night shift start?' }];
    const lines = (messages: MemoryMessage[]) => String(messages[0]?.content ?? '').split('\n').filter((line) => line.startsWith('- '));

    const full = await memloomBlock({ memory, scope: alice }).get(query);
    const shown = lines(full);
    expect(shown.filter((line) => line.includes('My job at the hospital'))).toHaveLength(10);
    expect(shown.at(-1)).toBe('- [2025-03-01] (episode) 今天和Anna讨论了京都旅行计划');

    // A pipeline's policy (its own, or the configured one) sets both; `limit` given wins over retrieve_limit.
    const pipeline = createMemoryPipeline({ memory, policy: { retrieve_limit: 3, recent_days: 0 } });
    expect(lines(await memloomBlock({ memory, scope: alice, pipeline }).get(query))).toHaveLength(3);
    expect(lines(await memloomBlock({ memory, scope: alice, pipeline, limit: 4 }).get(query))).toHaveLength(4);
    // The notes are the first to go when the token limit is tight.
    const tokenLimit = countTokens(String(full[0]!.content)) - 1;
    expect(lines(await memloomBlock({ memory, scope: alice, tokenLimit }).get(query)).join('\n')).not.toContain('京都');
  });

  it('searches with the latest message by default, and with more when queryWindow says so', async () => {
    const { memory } = setupMemory();
    for (const text of aliceFacts) await memory.add(text, { scope: alice });
    const messages: MemoryMessage[] = [
      { id: '1', role: 'user', content: 'How is my sister Ana doing in Porto?' },
      { id: '2', role: 'assistant', content: 'I hope the dentist practice is going well.' },
      { id: '3', role: 'user', content: 'Now, snacks: anything without peanuts?' },
    ];
    const latest = (await memloomBlock({ memory, scope: alice }).get(messages))[0]?.content as string;
    expect(latest).toContain('peanuts');
    expect(latest).not.toContain('Porto');
    const wider = (await memloomBlock({ memory, scope: alice, queryWindow: 3 }).get(messages))[0]?.content as string;
    expect(wider).toContain('peanuts');
    expect(wider).toContain('Porto');
    expect(await memloomBlock({ memory, scope: alice }).get([])).toEqual([]);
  });

  it('searches past a tool call (an agent handing off saves one, often empty, just before the next agent asks)', async () => {
    const { memory } = setupMemory();
    for (const text of aliceFacts) await memory.add(text, { scope: alice });
    const question: MemoryMessage = { id: '1', role: 'user', content: 'Can you suggest a snack without peanuts?' };
    const toolCall = { id: 'call-1', name: 'handOff', input: { toAgent: 'chef' } };
    for (const handOff of [
      { id: '2', role: 'assistant', content: '', options: { toolCall: [toolCall] } },
      { id: '2', role: 'assistant', content: 'Let me pass you to our chef.', options: { toolCall: [toolCall] } },
    ] as MemoryMessage[]) {
      const shown = (await memloomBlock({ memory, scope: alice }).get([question, handOff]))[0]?.content as string;
      expect(shown, handOff.content as string).toContain('peanuts');
      expect(shown).not.toContain('Porto');
    }
  });

  it('records a message flushed twice only once (agent workflows flush overlapping batches)', async () => {
    const { memory } = setupMemory();
    const block = memloomBlock({ memory, scope: alice });
    const messages: MemoryMessage[] = [
      { id: 'm1', role: 'user', content: aliceFacts[0]! },
      { id: 'r1', role: 'assistant', content: 'Noted.' },
    ];
    await Promise.all([block.put(messages), block.put(messages)]);
    await block.put([...messages, { id: 'm2', role: 'user', content: aliceFacts[1]! }, { id: 'r2', role: 'assistant', content: 'Noted.' }]);
    expect(await memory.count({ scope: alice })).toBe(2);
    const [record] = await memory.list({ scope: alice, orderBy: 'createdAt' });
    expect(record!.revision).toBe(1);
  });

  it('extracts nothing from questions, tool calls and results, or the assistant\'s words (deterministic path)', async () => {
    const { memory } = setupMemory();
    const messages: MemoryMessage[] = [
      { id: 'late', role: 'assistant', content: 'I am glad I could help with that earlier.' },
      { id: 'q', role: 'user', content: 'What is the weather in Lisbon today?' },
      { id: 'call', role: 'assistant', content: '', options: { toolCall: [{ id: 'c1', name: 'weather', input: { city: 'Lisbon' } }] } },
      { id: 't', role: 'user', content: 'I measured 21C and sunny', options: { toolResult: { id: 'c1', result: '21C', isError: false } } },
      { id: 'a', role: 'assistant', content: 'It is 21C and sunny. I booked our table for Friday at eight.' },
      { id: 'e', role: 'user', content: '   ' },
    ];
    const block = memloomBlock({ memory, scope: alice });
    await block.put(messages);
    expect(await memory.count({ scope: alice })).toBe(0);
    expect(block.pendingCount).toBe(0);
  });

  it('extracts with the LlamaIndex LLM when given: it sees the turn and the retrieved memories, and can correct one', async () => {
    const { memory } = setupMemory();
    const old = (await memory.add('I live in Lisbon with my two cats.', { scope: alice })).memory;
    const extractor = new ScriptedLLM((messages) => {
      const prompt = messages.map((message) => extractText(message.content)).join('\n');
      const id = /\[([0-9a-f-]{36})\]/.exec(prompt)?.[1] ?? 'none';
      return { content: `[UPDATE:${id} USER] I live in Porto with my two cats.\n[ADD USER] I work as a nurse.` };
    });
    const block = memloomBlock({ memory, scope: alice, llm: extractor });
    await block.put([
      { id: 'u1', role: 'user', content: 'I moved from Lisbon to Porto last week, and I work as a nurse now.' },
      { id: 'a1', role: 'assistant', content: 'Congratulations on the move!' },
    ]);

    const prompt = extractor.requests[0]!.map((message) => extractText(message.content)).join('\n');
    expect(prompt).toContain('I moved from Lisbon to Porto last week');
    expect(prompt).toContain('Congratulations on the move!');
    expect(prompt).toContain(`[${old.id}]`);

    const corrected = await memory.get(old.id);
    expect(corrected!.content).toBe('I live in Porto with my two cats.');
    expect(corrected!.sources).toEqual(expect.arrayContaining(['u1', 'a1']));
    expect((await memory.history(old.id)).map((version) => version.after.content)).toContain('I live in Lisbon with my two cats.');
    expect((await memory.list({ scope: alice })).map((record) => record.content).sort()).toEqual([
      'I live in Porto with my two cats.',
      'I work as a nurse.',
    ]);
  });

  it('falls back to the deterministic extraction when the LLM fails, and the flush still succeeds', async () => {
    const { memory } = setupMemory();
    const logger = recordingLogger();
    const broken = new ScriptedLLM(() => {
      throw new Error('rate limited');
    });
    const block = memloomBlock({ memory, scope: alice, llm: broken, logger });
    await block.put([
      { id: 'u1', role: 'user', content: aliceFacts[0]! },
      { id: 'a1', role: 'assistant', content: 'Noted.' },
    ]);
    expect(broken.requests).toHaveLength(1);
    expect((await memory.list({ scope: alice })).map((record) => record.content)).toEqual([aliceFacts[0]]);
    expect(logger.warnings.join('\n')).toContain('taking the deterministic path');
    expect(block.pendingCount).toBe(0);
  });

  it("uses the memloom memory's own model when no llm is given, and none with llm: null", async () => {
    const model = createScriptedModel('[ADD USER] Alice is learning Japanese.');
    const memory = createMemory({ store: createInMemoryStore(), embedder: createTestEmbedder({ dimension: 256 }), languageModel: model, clock: createFakeClock() });
    await memloomBlock({ memory, scope: alice }).put([
      { id: 'u1', role: 'user', content: 'Konnichiwa! Practising for my trip.' },
      { id: 'a1', role: 'assistant', content: 'Konnichiwa!' },
    ]);
    expect(model.requests).toHaveLength(1);
    expect((await memory.list({ scope: alice })).map((record) => record.content)).toEqual(['Alice is learning Japanese.']);

    await memloomBlock({ memory, scope: bob, llm: null }).put([
      { id: 'u2', role: 'user', content: 'I collect vinyl records.' },
      { id: 'a2', role: 'assistant', content: 'Nice.' },
    ]);
    expect(model.requests).toHaveLength(1);
    expect((await memory.list({ scope: bob })).map((record) => record.content)).toEqual(['I collect vinyl records.']);
  });

  it('runs flushes through a pipeline of your own', async () => {
    const { memory } = setupMemory();
    const pipeline = createMemoryPipeline({ memory, languageModel: createScriptedModel('[ADD USER] Alice likes late-night jazz.') });
    await memloomBlock({ memory, scope: alice, pipeline }).put([
      { id: 'u1', role: 'user', content: 'Put on some music, please.' },
      { id: 'a1', role: 'assistant', content: 'Playing some jazz.' },
    ]);
    expect((await memory.list({ scope: alice })).map((record) => record.content)).toEqual(['Alice likes late-night jazz.']);

    const other = setupMemory().memory;
    expect(() => memloomBlock({ memory: other, scope: alice, pipeline })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining('same memory') }));
    expect(() => memloomBlock({ memory, scope: alice, pipeline, llm })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining('not both') }));
  });

  it('records a message LlamaIndex skipped when overlapping flushes moved its cursor too far', async () => {
    // Agent workflows add messages without awaiting; hold one flush back to make two overlap, as they do there.
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const embedder = createTestEmbedder({ dimension: 256 });
    const gated = { ...embedder, embed: async (texts: readonly string[], options?: object) => {
      if (texts.some((text) => text.includes('cats'))) await held;
      return embedder.embed(texts, options);
    } };
    const memory = createMemory({ store: createInMemoryStore(), embedder: gated, clock: createFakeClock() });
    const block = memloomBlock({ memory, scope: alice });
    const chat = createChatMemory({ tokenLimit: 40, shortTermTokenLimitRatio: 0.5, memoryBlocks: [block] });
    const long = (fact: string) => `${fact} I mention it because it matters a great deal to me and to my family at home.`;

    await chat.add({ role: 'user', content: long('I keep bees on the roof.') });
    const first = chat.add({ role: 'user', content: long('I grow tomatoes on the balcony.') });
    const second = chat.add({ role: 'user', content: 'I also keep two cats.' }); // overlaps the first flush
    await first;
    await chat.add({ role: 'user', content: 'I own a red bike.' }); // fits in short-term memory: not flushed
    release();
    await second;

    // LlamaIndex's cursor has passed the bike message, which no block was given; it left the short-term window too.
    const snapshot = JSON.parse(chat.snapshot()) as { messages: unknown[]; memoryCursor: number };
    expect(snapshot.memoryCursor).toBe(snapshot.messages.length);
    expect(textsByRole(await chat.getLLM(llm), 'user')).not.toContain('I own a red bike.');
    await block.whenIdle();
    expect((await memory.list({ scope: alice })).map((record) => record.content)).not.toContain('I own a red bike.');

    // The next flush puts a message after it; the block sees the gap and records it.
    await chat.add({ role: 'user', content: long('I work night shifts at the hospital.') });
    await chat.getLLM(llm);
    await block.whenIdle();
    expect((await memory.list({ scope: alice })).map((record) => record.content)).toEqual(
      expect.arrayContaining(['I keep bees on the roof.', 'I grow tomatoes on the balcony.', 'I also keep two cats.', 'I own a red bike.']),
    );
  });

  it("shows a fact of the message that tipped a flush on the next prompts (the flush takes it out of LlamaIndex's window)", async () => {
    const { memory } = setupMemory();
    const block = memloomBlock({ memory, scope: alice });
    const chat = createChatMemory({ tokenLimit: 140, shortTermTokenLimitRatio: 0.5, memoryBlocks: [block] });
    for (const [user, reply] of [
      ['Hello there, how is the weather today in the city?', 'It is sunny and warm today, a nice day for a walk.'],
      ['Could you tell me a fun fact about the moon?', 'The moon is slowly drifting away from the Earth.'],
      ['Interesting, and what about the sun and the stars?', 'The sun is a medium sized star.'],
    ]) {
      await chat.add({ role: 'user', content: user });
      await chat.add({ role: 'assistant', content: reply });
    }
    await chat.add({ role: 'user', content: aliceFacts[0] }); // tips the flush
    const { messages, memoryCursor } = JSON.parse(chat.snapshot()) as { messages: unknown[]; memoryCursor: number };
    expect(memoryCursor).toBe(messages.length);
    await chat.add({ role: 'assistant', content: 'Noted.' });
    await chat.add({ role: 'user', content: 'Which snacks should I pack for the hike?' });
    const prompt = await chat.getLLM();
    expect(textsByRole(prompt, 'user').join('\n')).not.toContain('peanut'); // gone from the short-term window
    expect(memoryMessages(prompt)).toContain('allergic to peanuts'); // shown through memloom
  });

  it('a session resumed from a snapshot does not record again what an earlier process recorded', async () => {
    const { memory, clock } = setupMemory();
    const first = memloomBlock({ memory, scope: alice });
    const chat = createChatMemory({ memoryBlocks: [first] });
    await chat.add({ role: 'user', content: aliceFacts[1] });
    await chat.add({ role: 'assistant', content: 'Porto is lovely.' });
    await first.flush(chat);
    const [fact] = await memory.list({ scope: alice });
    expect(fact!.content).toBe(aliceFacts[1]);

    // Another process, ten days later: the same messages come back from the snapshot, after LlamaIndex's cursor.
    clock.advanceDays(10);
    const second = memloomBlock({ memory, scope: alice });
    const resumed = loadChatMemory(chat.snapshot(), { memoryBlocks: [second] });
    await resumed.add({ role: 'user', content: aliceFacts[2] });
    await second.flush(resumed);
    // Not merged into itself again (the new fact beside it may boost its weight: seed 004's +0.1).
    expect((await memory.history(fact!.id)).map((version) => version.action)).not.toContain('merge');
    expect((await memory.get(fact!.id))!.updatedAt).toBe(fact!.updatedAt);
    expect((await memory.list({ scope: alice })).map((record) => record.content).sort()).toEqual([aliceFacts[1], aliceFacts[2]].sort());
  });

  it('flush() records the short-term messages LlamaIndex has not flushed, once', async () => {
    const { memory } = setupMemory();
    const block = memloomBlock({ memory, scope: alice });
    const chat = createChatMemory({ memoryBlocks: [block] });
    await chat.add({ role: 'user', content: aliceFacts[2] });
    expect(await memory.count({ scope: alice })).toBe(0);
    await block.flush(chat);
    await block.flush(chat);
    expect((await memory.list({ scope: alice })).map((record) => record.content)).toEqual([aliceFacts[2]]);
  });
});

describe('bad input', () => {
  it('rejects bad options with a typed error', () => {
    const { memory } = setupMemory();
    const attempts: [unknown, string][] = [
      [undefined, 'INVALID_OPTIONS'],
      [{ scope: alice }, 'INVALID_OPTIONS'],
      [{ memory: {}, scope: alice }, 'INVALID_OPTIONS'],
      [{ memory, scope: {} }, 'INVALID_SCOPE'],
      [{ memory }, 'INVALID_SCOPE'],
      [{ memory, scope: { userId: '' } }, 'INVALID_SCOPE'],
      [{ memory, scope: { team: 'x' } }, 'INVALID_SCOPE'],
      [{ memory, scope: alice, limit: 0 }, 'INVALID_OPTIONS'],
      [{ memory, scope: alice, tokenLimit: -1 }, 'INVALID_OPTIONS'],
      [{ memory, scope: alice, llm: {} }, 'INVALID_OPTIONS'],
      [{ memory, scope: alice, pipeline: {} }, 'INVALID_OPTIONS'],
      [{ memory, scope: alice, tokenBudget: 100 }, 'INVALID_OPTIONS'],
      // A filter memloom's search would refuse at every prompt is refused here, once.
      [{ memory, scope: alice, filter: { catgory: ['fact'] } }, 'INVALID_OPTIONS'],
      [{ memory, scope: alice, filter: { category: ['facts'] } }, 'INVALID_OPTIONS'],
      [{ memory, scope: alice, filter: 'fact' }, 'INVALID_OPTIONS'],
    ];
    for (const [options, code] of attempts) {
      let caught: unknown;
      try {
        memloomBlock(options as never);
      } catch (error) {
        caught = error;
      }
      expect(MemloomError.isInstance(caught), JSON.stringify(options)).toBe(true);
      expect((caught as MemloomError).code, JSON.stringify(options)).toBe(code);
      expect((caught as MemloomError).message).toMatch(/^\[memloom\] \[llamaindex\] /);
    }
  });

  it('rejects a malformed flush and writes nothing, not even its valid messages', async () => {
    const { memory } = setupMemory();
    const block = memloomBlock({ memory, scope: alice });
    const batch = [{ id: 'ok', role: 'user', content: aliceFacts[0] }, { id: 'bad', role: 'user', content: 42 }];
    await expect(block.put(batch as never)).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('message 1') });
    await expect(block.put('hello' as never)).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/expects an array of memory messages, got "hello"$/) });
    // Shown as core shows a value: 42 is 42, not "number".
    await expect(block.put([42, null] as never)).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/message 0 is 42, not a message$/) });
    await expect(block.flush({} as never)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(block.flush({ snapshot: () => '{not json' })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(block.get({} as never)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await block.whenIdle();
    expect(await memory.count({ scope: alice })).toBe(0);
  });
});

describe('a failing store', () => {
  it('records the rest of a turn whose recording failed part-way, though a memory already names its message', async () => {
    const inner = createInMemoryStore();
    let applies = 0;
    let failSecond = true;
    const store = Object.assign(Object.create(inner) as typeof inner, {
      apply: async (changes: Parameters<typeof inner.apply>[0]) => {
        applies++;
        if (failSecond && applies === 2) throw new MemloomError({ code: 'STORE_ERROR', backend: 'memory', message: 'disk unavailable' });
        return inner.apply(changes);
      },
    });
    const { memory } = setupMemory({ store });
    const block = memloomBlock({ memory, scope: alice, logger: recordingLogger() });
    await block.put([
      { id: 'u1', role: 'user', content: 'I am vegetarian, and I am planning a trip to Kyoto.' },
      { id: 'a1', role: 'assistant', content: 'Great, noted.' },
    ]);
    expect((await memory.list({ scope: alice })).map((record) => record.content)).toEqual(['I am vegetarian.']);
    expect(block.pendingCount).toBe(2);
    failSecond = false;
    await block.put([{ id: 'u2', role: 'user', content: 'Thanks.' }, { id: 'a2', role: 'assistant', content: 'You are welcome.' }]);
    expect((await memory.list({ scope: alice })).map((record) => record.content).sort()).toEqual(['I am planning a trip to Kyoto.', 'I am vegetarian.']);
    expect(block.pendingCount).toBe(0);
  });

  it('does not throw from get or put: it logs, returns no memories and retries the flush later', async () => {
    const store = createFailingStore();
    const { memory } = setupMemory({ store });
    const logger = recordingLogger();
    const block = memloomBlock({ memory, scope: alice, logger });
    const chat = chatMemoryWith(block);
    await converse(chat, aliceFacts.slice(0, 2));

    store.failing = true;
    const callsBefore = store.calls;
    await expect(
      block.put([
        { id: 'late', role: 'user', content: aliceFacts[3]! },
        { id: 'late-reply', role: 'assistant', content: 'Good luck with the move!' },
      ]),
    ).resolves.toBeUndefined();
    expect(store.calls).toBeGreaterThan(callsBefore);
    expect(block.pendingCount).toBe(2);
    expect(logger.warnings.at(-1)).toMatch(/could not record 2 flushed message.*disk unavailable/);

    await expect(block.get([{ id: 'q', role: 'user', content: 'peanuts?' }])).resolves.toEqual([]);
    expect(logger.warnings.at(-1)).toMatch(/search failed.*disk unavailable/);

    await chat.add({ role: 'user', content: 'Any peanut snacks?' });
    const messages = await chat.getLLM(llm);
    expect(textsByRole(messages, 'memory')).toEqual([]);
    expect(textsByRole(messages, 'user')).toContain('Any peanut snacks?');

    store.failing = false;
    await block.put([]);
    expect(block.pendingCount).toBe(0);
    expect((await memory.list({ scope: alice })).map((record) => record.content)).toContain(aliceFacts[3]);
  });
});

describe('MemloomMemoryBlock: mutation audit', () => {
  it('shows a memory that is both a search result and a recent daily note once', async () => {
    const { memory } = setupMemory();
    await memory.add('Yesterday Alice bought green tea in Kyoto', { scope: alice, category: 'episode' });
    const block = memloomBlock({ memory, scope: alice });
    const [message] = await block.get([{ id: 'q', role: 'user', content: 'Where did I buy green tea in Kyoto?' }]);
    const content = extractText(message!.content);
    expect(content.split('Yesterday Alice bought green tea in Kyoto')).toHaveLength(2);
  });

  it('does not run the extraction again for a message recorded by an earlier flush, though no memory names it', async () => {
    const { memory } = setupMemory();
    const pipeline = createMemoryPipeline({ memory });
    const afterTurn = vi.spyOn(pipeline, 'afterTurn');
    const block = memloomBlock({ memory, scope: alice, pipeline });
    const question: MemoryMessage[] = [
      { id: 'q1', role: 'user', content: 'What time is it in Lisbon?' },
      { id: 'q1-reply', role: 'assistant', content: 'Nine in the morning.' },
    ];
    await block.put(question);
    await block.put(question);
    expect(afterTurn).toHaveBeenCalledTimes(1);
    expect(await memory.count({ scope: alice })).toBe(0);
  });

  it('keeps at most 200 messages for a retry while the store fails, dropping the oldest with a warning', async () => {
    const store = createFailingStore();
    const { memory } = setupMemory({ store });
    const logger = recordingLogger();
    const block = memloomBlock({ memory, scope: alice, logger });
    store.failing = true;
    const flushed: MemoryMessage[] = Array.from({ length: 205 }, (_, index) => ({ id: `m${index}`, role: 'user', content: `Note number ${index}` }));
    await block.put(flushed);
    expect(block.pendingCount).toBe(200);
    expect(logger.warnings.at(-1)).toMatch(/could not record 205 flushed message\(s\).*\(dropped the 5 oldest\)$/);
  });

  it('passes over a turn whose content memloom refuses (retrying would fail the same way), and records the next', async () => {
    const { memory } = setupMemory();
    const pipeline = createMemoryPipeline({ memory });
    const afterTurn = vi.spyOn(pipeline, 'afterTurn');
    afterTurn.mockRejectedValueOnce(new MemloomError({ code: 'CONTENT_TOO_LONG', backend: 'memory', message: 'content is too long' }));
    const logger = recordingLogger();
    const block = memloomBlock({ memory, scope: alice, pipeline, logger });
    await block.put([{ id: 'long', role: 'user', content: 'I wrote a very long message.' }]);
    expect(block.pendingCount).toBe(0);
    expect(logger.warnings.at(-1)).toMatch(/flushed message not recorded: .*content is too long/);
    await block.put([{ id: 'next', role: 'user', content: aliceFacts[1]! }]);
    expect(afterTurn).toHaveBeenCalledTimes(2);
    expect(afterTurn.mock.calls[1]?.[0].user).toMatchObject({ content: aliceFacts[1] });
  });
  it("shows the extraction only the memories that pass the block's minScore", async () => {
    const { memory } = setupMemory();
    await memory.add('Alice is allergic to peanuts', { scope: alice });
    const retrievedWith = async (minScore: number) => {
      const pipeline = createMemoryPipeline({ memory });
      const afterTurn = vi.spyOn(pipeline, 'afterTurn');
      await memloomBlock({ memory, scope: alice, pipeline, minScore }).put([{ id: `u-${minScore}`, role: 'user', content: 'Can I eat peanuts at the party?' }]);
      return afterTurn.mock.calls[0]?.[0].retrieved?.map((entry) => ('memory' in entry ? entry.memory : entry).content);
    };
    expect(await retrievedWith(0)).toEqual(['Alice is allergic to peanuts']);
    expect(await retrievedWith(0.99)).toEqual([]);
  });

  it("gives the extraction the assistant's reply with text, not a later tool call without any", async () => {
    const { memory } = setupMemory();
    const pipeline = createMemoryPipeline({ memory });
    const afterTurn = vi.spyOn(pipeline, 'afterTurn');
    await memloomBlock({ memory, scope: alice, pipeline }).put([
      { id: 'u1', role: 'user', content: 'I moved to Lisbon last week.' },
      { id: 'a1', role: 'assistant', content: 'Welcome to Lisbon!' },
      { id: 'a2', role: 'assistant', content: '', options: { toolCall: [{ id: 't1', name: 'lookup', input: {} }] } },
    ]);
    expect(afterTurn.mock.calls[0]?.[0].assistant).toEqual({ content: 'Welcome to Lisbon!', id: 'a1' });
  });
});
