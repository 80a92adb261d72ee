import { cosineSimilarity, createMemory } from '@memloom/core';
import { createInMemoryStore } from '@memloom/core/testing';
import { testEmbedder } from '@memloom/testkit';
import { describe, expect, it } from 'vitest';
import { createDefaultEmbedder, createOfflineEmbedder } from '../src/index.js';

testEmbedder({ name: 'default (offline)', create: () => createDefaultEmbedder(), tolerance: 1e-4 });
testEmbedder({ name: 'offline, uncached', create: () => createOfflineEmbedder(), tolerance: 1e-4 });

describe('default embedder', () => {
  const embedder = createDefaultEmbedder();

  it('keeps unrelated Chinese sentences apart (USE-lite alone would not)', async () => {
    const [coffee, passport, coffeeAgain] = await embedder.embed(['用户每天早上喝咖啡', '护照明年六月到期', '他早上喝一杯咖啡']);
    expect(cosineSimilarity(coffee as number[], passport as number[])).toBeLessThan(0.3);
    expect(cosineSimilarity(coffee as number[], coffeeAgain as number[])).toBeGreaterThan(0.4);
  });

  it('finds English paraphrases that share no word', async () => {
    const [query, answer, other] = await embedder.embed([
      'How old is your daughter?',
      'My girl just turned seven last week.',
      'I need to renew my passport.',
    ]);
    expect(cosineSimilarity(query as number[], answer as number[])).toBeGreaterThan(cosineSimilarity(query as number[], other as number[]));
  });

  it('lets memloom store and find English and Chinese memories offline, without merging unrelated Chinese ones', async () => {
    const memory = createMemory({ store: createInMemoryStore(), embedder: createDefaultEmbedder() });
    await memory.add('The user is allergic to peanuts.');
    await memory.add('用户每天早上喝一杯美式咖啡。');
    await memory.add('用户的护照明年六月到期。');
    await memory.add('用户的女儿叫小雨，今年七岁。');
    expect(await memory.count()).toBe(4);
    const [coffee] = await memory.search('他喝什么咖啡？', { limit: 1 });
    expect(coffee?.memory.content).toContain('咖啡');
    const [allergy] = await memory.search('Can he eat peanut butter?', { limit: 1 });
    expect(allergy?.memory.content).toContain('peanuts');
    await memory.close();
  });
});
