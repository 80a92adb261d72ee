import { describe, expect, it } from 'vitest';
import { createTestEmbedder } from '@memloom/core/testing';
import { frameQuery, MESSAGE_FRAMES, runZhMemorySet, type MessageFrame, type ZhMemorySet } from '../src/zh-memory.js';

describe('frameQuery', () => {
  it('wraps a question with Chinese in it (mixed ones too) in the Chinese frame, before and after', () => {
    const [lead, tail, , both] = MESSAGE_FRAMES as [MessageFrame, MessageFrame, MessageFrame, MessageFrame];
    expect(frameQuery('他家在哪里？', lead)).toBe('对了，他家在哪里？');
    expect(frameQuery('他家在哪里？', tail)).toBe('他家在哪里？你还记得吗？');
    expect(frameQuery('他在 GitHub 上叫什么？', both)).toBe('我想问一下，他在 GitHub 上叫什么？如果不记得就直接说不知道。');
  });

  it('wraps an English question in the English frame', () => {
    const [lead, tail] = MESSAGE_FRAMES as [MessageFrame, MessageFrame];
    expect(frameQuery('Which app does he use for notes?', lead)).toBe('By the way, Which app does he use for notes?');
    expect(frameQuery('Which app does he use for notes?', tail)).toBe('Which app does he use for notes? Do you remember?');
  });

  it('has four fixed frames, each named by its Chinese template', () => {
    expect(MESSAGE_FRAMES.map((frame) => frame.name)).toEqual([
      '对了，{q}',
      '{q}你还记得吗？',
      '好的，谢谢你刚才的回答。我还有一个问题想请教：{q}',
      '我想问一下，{q}如果不记得就直接说不知道。',
    ]);
  });
});

describe('runZhMemorySet with frames', () => {
  // A frame of noise that points at the wrong memory, beside one that adds nothing.
  const frames: MessageFrame[] = [
    { name: '{q}', zh: ['', ''], en: ['', ''] },
    { name: '茶茶{q}', zh: ['茶叶茶叶', ''], en: ['tea tea tea ', ''] },
  ];
  const set: ZhMemorySet = {
    memories: [
      { id: 'coffee', content: 'coffee every morning' },
      { id: 'tea', content: 'tea at night' },
    ],
    distractors: ['a walk in the park'],
    queries: [
      { query: 'coffee', relevant: ['coffee'] },
      // Shares no term with its memory; the frame adds one ("tea").
      { query: 'what to drink late', relevant: ['tea'] },
    ],
  };

  it('searches every question inside every frame in the same memory and scores each frame', { timeout: 20_000 }, async () => {
    const embedder = createTestEmbedder();
    const result = await runZhMemorySet(set, embedder, { frames, ks: [1] });
    const searched = embedder.calls.flat();
    expect(searched).toContain('tea tea tea coffee');
    expect(searched).toContain('tea tea tea what to drink late');

    // Bare: "coffee" finds its memory first, "what to drink late" (no shared word) does not.
    expect(result.overall[1]).toBe(0.5);
    expect(result.misses).toEqual(['what to drink late']);
    const shaped = result.messageShaped;
    expect(shaped?.queries).toBe(4);
    // The empty frame scores as the bare questions do; the noisy one puts the tea memory first for both.
    expect(shaped?.byFrame['{q}']).toEqual(result.overall);
    expect(shaped?.byFrame['茶茶{q}']).toEqual({ 1: 0.5 });
    expect(shaped?.overall[1]).toBe(0.5);
    expect(shaped?.misses).toEqual(['what to drink late', 'tea tea tea coffee']);
    // The term-sharing split is the bare question's, whatever the frame adds.
    expect(shaped?.sharingTerms.queries).toBe(2);
    expect(shaped?.sharingNoTerm.queries).toBe(2);
  });

  it('leaves messageShaped out without frames', { timeout: 20_000 }, async () => {
    const result = await runZhMemorySet(set, createTestEmbedder());
    expect(result.messageShaped).toBeUndefined();
    expect(result.queries).toBe(2);
  });
});
