import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, forceCompression, planSessionSummary, summarizeMessagesDeterministic, type ConversationMessage } from '../src/index.js';
import { createInMemoryPolicyStorage, createScriptedModel } from '../src/testing/index.js';
import { errorOf, pipelineRig, promptOf } from './pipeline-rig.js';

const alice = { userId: 'alice' };

/** n alternating messages with ids m1…mn. */
function conversation(count: number, text = (index: number) => `message number ${index}`): ConversationMessage[] {
  return Array.from({ length: count }, (_, index) => ({
    role: index % 2 === 0 ? ('user' as const) : ('assistant' as const),
    content: text(index + 1),
    id: `m${index + 1}`,
  }));
}

describe('planSessionSummary and forceCompression (pure)', () => {
  it('does nothing up to the message threshold, then summarizes all but the last keep_count', () => {
    expect(planSessionSummary(conversation(20), { policy: DEFAULT_POLICY }).action).toBe('none');
    const plan = planSessionSummary(conversation(21), { policy: DEFAULT_POLICY });
    expect(plan.action).toBe('summarize');
    expect(plan.reason).toBe('21 messages > session_summary_message_threshold 20');
    expect(plan.older.map((message) => message.id)).toEqual(conversation(17).map((message) => message.id));
    expect(plan.kept.map((message) => message.id)).toEqual(['m18', 'm19', 'm20', 'm21']);
  });

  it('summarizes past the token share of the context window, and drops the oldest half when it is nearly full', () => {
    const messages = conversation(6, () => 'x'.repeat(400)); // 100 tokens each
    expect(planSessionSummary(messages, { policy: DEFAULT_POLICY, contextWindowTokens: 1_000 }).action).toBe('none');
    const tokens = planSessionSummary(messages, { policy: DEFAULT_POLICY, contextWindowTokens: 780 });
    expect(tokens).toMatchObject({ action: 'summarize', tokens: 600 });
    expect(tokens.reason).toMatch(/context 76.9% > session_summary_token_percent 75/);
    expect(tokens.kept).toHaveLength(4);
    const emergency = planSessionSummary(messages, { policy: DEFAULT_POLICY, contextWindowTokens: 610 });
    expect(emergency.action).toBe('emergency');
    expect(emergency.older.map((message) => message.id)).toEqual(['m1', 'm2', 'm3']);
    expect(emergency.kept.map((message) => message.id)).toEqual(['m4', 'm5', 'm6']);
  });

  it('drops the oldest half from the emergencyPercent given, not only from the default 95%', () => {
    const messages = conversation(6, () => 'x'.repeat(400)); // 100 tokens each: 600 of 700 is 85.7%
    expect(planSessionSummary(messages, { policy: DEFAULT_POLICY, contextWindowTokens: 700 }).action).toBe('summarize');
    expect(planSessionSummary(messages, { policy: DEFAULT_POLICY, contextWindowTokens: 700, emergencyPercent: 80 }).action).toBe('emergency');
  });

  it('does not summarize at exactly 75% of the context window, only above it (P-SS02)', () => {
    const messages = conversation(6); // 1 token each
    expect(planSessionSummary(messages, { policy: DEFAULT_POLICY, contextWindowTokens: 8, countTokens: () => 1 }).action).toBe('none');
    expect(planSessionSummary(messages, { policy: DEFAULT_POLICY, contextWindowTokens: 7.9, countTokens: () => 1 }).action).toBe('summarize');
  });

  it('drops the oldest half at exactly 95% of the context window, and only summarizes just below (P-SS05/06)', () => {
    const messages = conversation(19); // 1 token each, under the message threshold
    const emergency = planSessionSummary(messages, { policy: DEFAULT_POLICY, contextWindowTokens: 20, countTokens: () => 1 });
    expect(emergency).toMatchObject({ action: 'emergency', contextPercent: 95 });
    expect(emergency.older).toHaveLength(9);
    expect(planSessionSummary(messages, { policy: DEFAULT_POLICY, contextWindowTokens: 20.1, countTokens: () => 1 }).action).toBe('summarize');
  });

  it('uses a given token counter, and never summarizes what keep_count keeps', () => {
    const plan = planSessionSummary(conversation(3), {
      policy: { ...DEFAULT_POLICY, session_summary_message_threshold: 2, session_summary_keep_count: 4 },
      countTokens: () => 1,
    });
    expect(plan).toMatchObject({ action: 'none', tokens: 3, reason: 'nothing older than the last 3 messages to summarize' });
  });

  it('never keeps tool results without the assistant message that called them', () => {
    const messages: ConversationMessage[] = [
      { role: 'user', content: 'find flights', id: 'u1' },
      { role: 'assistant', content: '[called search]', id: 'a1' },
      { role: 'tool', content: 'two flights', id: 't1' },
      { role: 'tool', content: 'one more', id: 't2' },
      { role: 'assistant', content: 'Three flights.', id: 'a2' },
    ];
    const policy = { ...DEFAULT_POLICY, session_summary_message_threshold: 2, session_summary_keep_count: 2 };
    const plan = planSessionSummary(messages, { policy });
    expect(plan.older.map((message) => message.id)).toEqual(['u1']);
    expect(plan.kept.map((message) => message.id)).toEqual(['a1', 't1', 't2', 'a2']);
    const onlyTools = planSessionSummary(messages.slice(1, 4), { policy: { ...policy, session_summary_keep_count: 1 } });
    expect(onlyTools).toMatchObject({ action: 'none', older: [] }); // a call and its results only: nothing to cut off
    const { kept, dropped } = forceCompression(messages.slice(0, 4));
    expect(dropped.map((message) => message.id)).toEqual(['u1', 'a1', 't1', 't2']);
    expect(kept).toEqual([]);
  });

  it('forceCompression drops the oldest half, rounded down', () => {
    const { kept, dropped } = forceCompression(conversation(5));
    expect(dropped.map((message) => message.id)).toEqual(['m1', 'm2']);
    expect(kept.map((message) => message.id)).toEqual(['m3', 'm4', 'm5']);
  });

  it('summarizes deterministically in the conversation language', () => {
    expect(summarizeMessagesDeterministic([{ role: 'user', content: 'I have a job interview at Globex on Friday' }, { role: 'assistant', content: 'Good luck with Globex!' }])).toMatch(
      /^Talked about .*Globex.*\. The user said: I have a job interview at Globex/,
    );
    expect(summarizeMessagesDeterministic([{ role: 'user', content: '我明天要去面试' }, { role: 'assistant', content: '加油！' }])).toMatch(/^聊了.*。用户说：我明天要去面试/);
  });

  it('summarizes a summary again (a rolling summary) without taking its own framing words for topics', () => {
    const first = summarizeMessagesDeterministic([
      { role: 'user', content: 'We are planning a trip to Kyoto to see the temples' },
      { role: 'assistant', content: 'Kyoto temples are lovely in spring.' },
    ]);
    const rolled = summarizeMessagesDeterministic([
      { role: 'system', content: `Summary of the earlier conversation: ${first}` },
      { role: 'user', content: 'Book a ryokan near the temples in Kyoto' },
    ]);
    const topics = /^Talked about (.*?)\./.exec(rolled)?.[1]?.split(', ') ?? [];
    expect(topics).toEqual(expect.arrayContaining(['Kyoto']));
    for (const framing of ['Summary', 'earlier', 'conversation', 'Talked', 'user', 'said']) expect(topics, rolled).not.toContain(framing);
    const zh = summarizeMessagesDeterministic([
      { role: 'system', content: `Summary of the earlier conversation: ${summarizeMessagesDeterministic([{ role: 'user', content: '我们计划去京都看寺庙' }])}` },
      { role: 'user', content: '帮我订京都的旅馆' },
    ]);
    expect(zh).not.toMatch(/聊了[^。]*(聊了|用户说)/);
  });
});

describe('summarizeSession', () => {
  it('turns older messages into an episode written by the model and keeps the last messages', async () => {
    const model = createScriptedModel('Summary: The user talked about moving to Lyon and a job at Globex.');
    const { pipeline, memory, clock } = pipelineRig({ languageModel: model });
    const messages = conversation(21, (index) => (index === 3 ? 'I am moving to Lyon for a job at Globex' : `message number ${index}`));
    const result = await pipeline.summarizeSession(messages, { scope: alice });
    expect(result).toMatchObject({ action: 'summarized', summarizedCount: 17, source: 'model' });
    expect(result.episode?.memory).toMatchObject({
      category: 'episode',
      source: 'background_ai',
      verified: false,
      content: '[2024-03-01 09:00] The user talked about moving to Lyon and a job at Globex.',
      sources: messages.slice(0, 17).map((message) => message.id),
    });
    expect(result.messages.map((message) => message.id)).toEqual([result.summaryMessage?.id, 'm18', 'm19', 'm20', 'm21']);
    expect(result.summaryMessage).toMatchObject({ role: 'system', content: 'Summary of the earlier conversation: The user talked about moving to Lyon and a job at Globex.' });
    expect(result.summaryMessage?.id).toBe(`memloom-summary:${result.episode?.memory.id}`);
    expect(promptOf(model)).toContain('User: message number 1');
    expect(promptOf(model)).not.toContain('message number 18');
    expect((await memory.history(result.episode!.memory.id))[0]).toMatchObject({ trigger: 'extraction', at: clock.iso() });
  });

  it('stamps the episode with the time of the first summarized message', async () => {
    const { pipeline } = pipelineRig();
    const messages = conversation(21).map((message, index) => ({ ...message, at: Date.parse('2024-02-28T18:00:00.000Z') + index * 60_000 }));
    const result = await pipeline.summarizeSession(messages, { scope: alice });
    expect(result.episode?.memory.content.startsWith('[2024-02-28 18:00] ')).toBe(true);
  });

  it('leaves out a message time on a day the calendar does not have instead of shifting it (2024-02-30 is no March 1)', async () => {
    const { pipeline, clock } = pipelineRig();
    for (const at of ['2024-02-30T10:00:00Z', '2024/02/30 10:00', 1e16]) {
      const messages = conversation(21).map((message, index) => ({ ...message, ...(index === 0 ? { at } : {}) }));
      const result = await pipeline.summarizeSession(messages, { scope: alice });
      // Stamped as a first message without a time is: now.
      expect(result.episode?.memory.content.startsWith(`[${clock.iso().slice(0, 16).replace('T', ' ')}] `), String(at)).toBe(true);
      expect(result.episode?.memory.content).not.toContain('2024-03-01 10:00');
    }
  });

  it.each([
    ['throws', createScriptedModel(new Error('overloaded')), /overloaded/],
    ['answers with nothing', createScriptedModel('  '), /empty text/],
    ['answers at length', createScriptedModel('y'.repeat(20_000)), /exceeded/],
    ['declines', createScriptedModel("I'm sorry, but I can't help with that request."), /declined/],
    ['answers about something else', createScriptedModel('The weather in Paris is sunny with light winds today.'), /shares (almost )?no words/],
    ['only acknowledges', createScriptedModel('Sure, happy to help!'), /shares no words|declined/],
  ])('falls back to the deterministic summary when the model %s', async (_, model, reason) => {
    const { pipeline } = pipelineRig({ languageModel: model });
    const result = await pipeline.summarizeSession(conversation(21), { scope: alice });
    expect(result).toMatchObject({ action: 'summarized', source: 'fallback' });
    expect(result.modelFallback).toMatch(reason);
    expect(result.episode?.memory.content).toMatch(/^\[2024-03-01 09:00\] Talked about /);
  });

  it('in an emergency drops the oldest half at once, without a model call, and keeps it as an episode', async () => {
    const model = createScriptedModel('never used');
    const { pipeline } = pipelineRig({ languageModel: model });
    const messages = conversation(8, () => 'z'.repeat(400));
    const result = await pipeline.summarizeSession(messages, { scope: alice, contextWindowTokens: 820 });
    expect(result).toMatchObject({ action: 'emergency', summarizedCount: 4, source: 'fallback' });
    expect(result.messages.map((message) => message.id).slice(1)).toEqual(['m5', 'm6', 'm7', 'm8']);
    expect(result.summaryMessage?.content).toMatch(/^Earlier messages were dropped to free the context/);
    expect(result.episode?.memory.sources).toEqual(['m1', 'm2', 'm3', 'm4']);
    expect(model.requests).toHaveLength(0);
  });

  it('drops the oldest half at exactly 95% of the context window by default, and summarizes just below (P-SS04)', async () => {
    const { pipeline } = pipelineRig();
    const messages = conversation(19); // 1 token each, under the message threshold
    const emergency = await pipeline.summarizeSession(messages, { scope: alice, contextWindowTokens: 20, countTokens: () => 1 });
    expect(emergency).toMatchObject({ action: 'emergency', summarizedCount: 9 });
    const below = await pipeline.summarizeSession(messages, { scope: alice, contextWindowTokens: 20.1, countTokens: () => 1 });
    expect(below.action).toBe('summarized');
  });

  it('returns the messages unchanged under the thresholds', async () => {
    const { pipeline, memory } = pipelineRig();
    const messages = conversation(5);
    const result = await pipeline.summarizeSession(messages, { scope: alice });
    expect(result).toMatchObject({ action: 'none', summarizedCount: 0, messages });
    expect(await memory.count()).toBe(0);
  });

  it('reads its thresholds from the policy: configuration, then the stored overrides', async () => {
    const storage = createInMemoryPolicyStorage({ session_summary_message_threshold: 4, session_summary_keep_count: 2 });
    const { pipeline } = pipelineRig({ policy: { session_summary_message_threshold: 100 }, policyStorage: storage });
    const result = await pipeline.summarizeSession(conversation(5), { scope: alice });
    expect(result).toMatchObject({ action: 'summarized', summarizedCount: 3 });
    storage.deleteOverrides();
    expect((await pipeline.summarizeSession(conversation(5), { scope: alice })).action).toBe('none');
  });

  it('rejects malformed messages', async () => {
    const { pipeline } = pipelineRig();
    const error = await errorOf(pipeline.summarizeSession([{ role: 'robot', content: 'x' }] as never));
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.message).toContain('messages.0.role');
  });
});
