import { describe, expect, it } from 'vitest';
import { CHINESE_DISCOURSE_WORDS } from '@memloom/core';
import { createTestEmbedder } from '@memloom/core/testing';
import { frameQuery, HELD_OUT_FRAMES, MESSAGE_FRAMES, runZhMemorySet, type MessageFrame, type ZhMemorySet } from '../src/zh-memory.js';

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

describe('HELD_OUT_FRAMES', () => {
  it('holds at least six frames worded otherwise than MESSAGE_FRAMES, each with a Chinese and an English side', () => {
    expect(HELD_OUT_FRAMES.length).toBeGreaterThanOrEqual(6);
    const designNames = new Set(MESSAGE_FRAMES.map((frame) => frame.name));
    const designParts = new Set(MESSAGE_FRAMES.flatMap((frame) => frame.zh).filter(Boolean));
    for (const frame of HELD_OUT_FRAMES) {
      expect(designNames.has(frame.name), frame.name).toBe(false);
      for (const part of frame.zh) expect(designParts.has(part), part).toBe(false);
      expect(frame.en.join('').length, frame.name).toBeGreaterThan(0);
    }
    expect(new Set(HELD_OUT_FRAMES.map((frame) => frame.name)).size).toBe(HELD_OUT_FRAMES.length);
    // Lead-ins, tails and both: the question is not always at the start or the end.
    expect(HELD_OUT_FRAMES.some((frame) => frame.zh[0] && !frame.zh[1])).toBe(true);
    expect(HELD_OUT_FRAMES.some((frame) => !frame.zh[0] && frame.zh[1])).toBe(true);
    expect(HELD_OUT_FRAMES.some((frame) => frame.zh[0] && frame.zh[1])).toBe(true);
  });

  it('holds no discourse word that the design frames do not hold too, so the list was not written from them', () => {
    const design = MESSAGE_FRAMES.flatMap((frame) => frame.zh).join('|');
    for (const frame of HELD_OUT_FRAMES) {
      const text = frame.zh.join('|');
      const onlyHere = CHINESE_DISCOURSE_WORDS.filter((word) => text.includes(word) && !design.includes(word));
      expect(onlyHere, frame.name).toEqual([]);
    }
  });

  it('wraps questions as the design frames do', () => {
    const [check] = HELD_OUT_FRAMES as [MessageFrame];
    expect(frameQuery('他家在哪里？', check)).toBe('你帮我看看，他家在哪里？');
    expect(frameQuery('Which app does he use for notes?', check)).toBe('Could you check for me: Which app does he use for notes?');
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

  it('reports the held-out frames apart from the frames', { timeout: 20_000 }, async () => {
    const [empty, noisy] = frames as [MessageFrame, MessageFrame];
    const result = await runZhMemorySet(set, createTestEmbedder(), { frames: [empty], heldOutFrames: [noisy], ks: [1] });
    expect(result.messageShaped?.byFrame).toEqual({ '{q}': { 1: 0.5 } });
    expect(result.messageShapedHeldOut?.byFrame).toEqual({ '茶茶{q}': { 1: 0.5 } });
    expect(result.messageShapedHeldOut?.misses).toEqual(['tea tea tea coffee']);
    expect(result.messageShapedHeldOut?.queries).toBe(2);
  });

  it('leaves messageShaped out without frames', { timeout: 20_000 }, async () => {
    const result = await runZhMemorySet(set, createTestEmbedder());
    expect(result.messageShaped).toBeUndefined();
    expect(result.messageShapedHeldOut).toBeUndefined();
    expect(result.queries).toBe(2);
  });
});
