import { cosineSimilarity, createMemory, type Embedder } from '@memloom/core';
import { createInMemoryStore } from '@memloom/core/testing';
import { testEmbedder } from '@memloom/testkit';
import { describe, expect, it } from 'vitest';
import { createCachedEmbedder, createDefaultEmbedder, createOfflineEmbedder, type PersistentEmbeddingCache } from '../src/index.js';

testEmbedder({ name: 'default (offline)', create: () => createDefaultEmbedder() });
testEmbedder({ name: 'offline, uncached', create: () => createOfflineEmbedder() });
testEmbedder({ name: 'offline, semanticWeight 0.5', create: () => createOfflineEmbedder({ semanticWeight: 0.5 }) });
testEmbedder({ name: 'offline, 768 + 256 lexical buckets', create: () => createOfflineEmbedder({ lexical: { wordDimension: 768, charDimension: 256 } }) });

const cos = (a: number[] | undefined, b: number[] | undefined) => cosineSimilarity(a as number[], b as number[]);

describe('default embedder', () => {
  const embedder = createDefaultEmbedder();

  it('names its vector space and has 100 + 384 dimensions', () => {
    expect(embedder.id).toBe('memloom/offline-v3(memloom/word-vectors-v4:glove100d-50k-sif-abtt2+cedict*0.8+lexical-v2:t5:w256:c128*0.2)');
    expect(embedder.dimension).toBe(484);
    expect(createOfflineEmbedder({ semanticWeight: 0.5 }).id).not.toBe(createOfflineEmbedder().id);
  });

  it('takes other lexical bucket counts, and names them in its id', async () => {
    const wide = createOfflineEmbedder({ lexical: { wordDimension: 768, charDimension: 256 } });
    expect(wide.dimension).toBe(1124);
    expect(wide.id).toContain('lexical-v2:t5:w768:c256');
    const [vector] = await wide.embed(['I drink espresso every morning']);
    expect(vector).toHaveLength(1124);
    expect(() => createOfflineEmbedder({ lexical: { wordDimension: 3 } })).toThrow(/wordDimension/);
  });

  it('names every lexical setting that changes its vectors, keeping the default id', async () => {
    const base = createOfflineEmbedder();
    // Only the bucket counts are typed, but JavaScript callers can pass the rest, and they change the vectors.
    const other = createOfflineEmbedder({ lexical: { charWeight: 0.9, charNgramSize: 5 } as never });
    expect(other.id).not.toBe(base.id);
    expect(other.id).toContain('lexical-v2:t5:w256:c128x5@0.9*0.2');
    expect(createOfflineEmbedder({ lexical: { charWeight: 0.9 } as never }).id).toContain(':c128@0.9*');
    expect(createOfflineEmbedder({ lexical: { charNgramSize: 4 } as never }).id).toContain(':c128x4*');
    const [a] = await base.embed(['photography hobby']);
    const [b] = await other.embed(['photography hobby']);
    expect(a).not.toEqual(b);
    // Settings equal to the defaults, spelt out or not, keep the id every existing store holds.
    const explicit = createOfflineEmbedder({ lexical: { wordDimension: 256, charDimension: 128, charNgramSize: 3, charWeight: 0.3 } as never });
    expect(explicit.id).toBe(base.id);
    expect(base.id).toBe('memloom/offline-v3(memloom/word-vectors-v4:glove100d-50k-sif-abtt2+cedict*0.8+lexical-v2:t5:w256:c128*0.2)');
  });

  it('rejects null options with INVALID_OPTIONS; undefined means the defaults', () => {
    const invalid = expect.objectContaining({ code: 'INVALID_OPTIONS' });
    expect(() => createDefaultEmbedder(null as never)).toThrow(invalid);
    expect(() => createOfflineEmbedder(null as never)).toThrow(invalid);
    expect(() => createOfflineEmbedder({ lexical: null as never })).toThrow(invalid);
    expect(createDefaultEmbedder(undefined).id).toBe(embedder.id);
    expect(createOfflineEmbedder(undefined).id).toBe(embedder.id);
    expect(createOfflineEmbedder({ lexical: undefined }).id).toBe(embedder.id);
  });

  it('rejects a semanticWeight outside (0, 1)', () => {
    for (const semanticWeight of [0, 1, -0.1, Number.NaN]) expect(() => createOfflineEmbedder({ semanticWeight })).toThrow(/semanticWeight/);
  });

  it('keeps unrelated Chinese sentences apart and related ones together', async () => {
    const [coffee, passport, coffeeAgain] = await embedder.embed(['用户每天早上喝咖啡', '护照明年六月到期', '他早上喝一杯咖啡']);
    expect(cos(coffee, passport)).toBeLessThan(0.3);
    expect(cos(coffee, coffeeAgain)).toBeGreaterThan(0.6);
  });

  it('connects Chinese paraphrases that share no character (孩子 / 女儿, 宠物 / 猫)', async () => {
    const [child, daughter, passport, pet, cat] = await embedder.embed(['他孩子多大了？', '用户的女儿叫小雨，今年七岁。', '用户的护照明年六月到期。', '用户家里有宠物吗？', '用户养了一只橘猫。']);
    expect(cos(child, daughter)).toBeGreaterThan(cos(child, passport) + 0.15);
    expect(cos(pet, cat)).toBeGreaterThan(cos(pet, passport) + 0.1);
  });

  it('finds English paraphrases that share no word', async () => {
    const [query, answer, other] = await embedder.embed(['How old is your daughter?', 'My girl just turned seven last week.', 'I need to renew my passport.']);
    expect(cos(query, answer)).toBeGreaterThan(cos(query, other) + 0.15);
  });

  it('puts English and Chinese in one space', async () => {
    const [query, cat, passport] = await embedder.embed(['Does the user have a pet?', '用户养了一只橘猫。', '用户的护照明年六月到期。']);
    expect(cos(query, cat)).toBeGreaterThan(cos(query, passport) + 0.1);
  });

  it('reads traditional Chinese as it reads simplified Chinese', async () => {
    // The same sentence in both scripts: the word part agrees (cosine 1 here), only the lexical part sees other
    // characters. Before traditional headwords were glossed these were 0.33-0.57 (below the merge threshold).
    const pairs: [string, string][] = [
      ['我在银行工作。', '我在銀行工作。'],
      ['我买了一台新电脑。', '我買了一台新電腦。'],
      ['我老婆是护士。', '我老婆是護士。'],
      ['我每天开车上班。', '我每天開車上班。'],
      ['字节跳动', '字節跳動'],
    ];
    const vectors = await embedder.embed(pairs.flat());
    const [unrelated] = await embedder.embed(['我对猫毛过敏。']);
    pairs.forEach(([simplified, traditional], index) => {
      // 0.85: memloom's merge threshold (0.886-0.933 here).
      expect(cos(vectors[2 * index], vectors[2 * index + 1]), `${simplified} / ${traditional}`).toBeGreaterThan(0.85);
      expect(cos(vectors[2 * index + 1], unrelated), traditional).toBeLessThan(0.5);
    });
  });

  it('merges a fact restated in the other script, and finds a traditional memory from English', { timeout: 30_000 }, async () => {
    const memory = createMemory({ store: createInMemoryStore(), embedder: createDefaultEmbedder() });
    const scope = { userId: 'u1' };
    expect((await memory.add('我在银行工作。', { scope })).decision.strategy).toBe('create_new');
    expect((await memory.add('我在銀行工作。', { scope })).decision.strategy).toBe('merge_update');
    expect(await memory.count({ scope })).toBe(1);
    for (const text of ['我喜歡聽音樂。', '我兒子在學鋼琴。', '我對貓毛過敏。', '我老婆是護士。', '我買了一台新電腦。']) await memory.add(text, { scope, merge: false });
    const [allergy] = await memory.search('What am I allergic to?', { scope, limit: 1 });
    expect(allergy?.memory.content).toBe('我對貓毛過敏。');
    const [computer] = await memory.search('我买了什么？', { scope, limit: 1 });
    expect(computer?.memory.content).toBe('我買了一台新電腦。');
    await memory.close();
  });

  it('gives text it cannot read (Japanese, Korean, emoji) only its lexical part, so unrelated texts stay apart', async () => {
    const [korean, otherKorean, emoji] = await embedder.embed(['안녕하세요 반갑습니다', '내일 비가 온다고 합니다', '🎉🎉']);
    expect(cos(korean, otherKorean)).toBeLessThan(0.3);
    expect(cos(korean, emoji)).toBeLessThan(0.3);
    expect((korean as number[]).slice(0, 100).every((value) => value === 0)).toBe(true);
  });

  it('keeps unrelated emoji-only, punctuation-only and stopword-only texts apart', async () => {
    const [party, dog, sad, bang, question, itIs, iAm] = await embedder.embed(['🎉🎂', '🐶', '😢💔', '!!!', '???', 'It is', 'I am']);
    expect(cos(party, dog)).toBeLessThan(0.2);
    expect(cos(party, sad)).toBeLessThan(0.2);
    expect(cos(bang, question)).toBeLessThan(0.2);
    expect(cos(itIs, iAm)).toBeLessThan(0.2);
  });

  it('does not merge three different emoji messages into one memory', async () => {
    const memory = createMemory({ store: createInMemoryStore(), embedder: createDefaultEmbedder() });
    const scope = { userId: 'u1' };
    for (const message of ['🎉🎂', '🐶', '😢💔']) {
      const { decision } = await memory.add(message, { scope });
      expect(decision.strategy, message).toBe('create_new');
    }
    expect((await memory.list({ scope })).map((record) => record.content).sort()).toEqual(['🎉🎂', '🐶', '😢💔'].sort());
    const [dog] = await memory.search('🐶', { scope, limit: 1 });
    expect(dog?.memory.content).toBe('🐶');
    // The same emoji again is still the same memory.
    expect((await memory.add('🐶', { scope })).decision.strategy).toBe('merge_update');
    expect(await memory.count({ scope })).toBe(3);
    await memory.close();
  });

  it('lets memloom store and find English and Chinese memories offline, without merging unrelated Chinese ones', async () => {
    const memory = createMemory({ store: createInMemoryStore(), embedder: createDefaultEmbedder() });
    await memory.add('The user is allergic to peanuts.');
    await memory.add('用户每天早上喝一杯美式咖啡。');
    await memory.add('用户的护照明年六月到期。');
    await memory.add('用户的女儿叫小雨，今年七岁。');
    await memory.add('用户养了一只橘猫，名字叫土豆。');
    expect(await memory.count()).toBe(5);
    const [coffee] = await memory.search('他喝什么咖啡？', { limit: 1 });
    expect(coffee?.memory.content).toContain('咖啡');
    const [allergy] = await memory.search('Can he eat peanut butter?', { limit: 1 });
    expect(allergy?.memory.content).toContain('peanuts');
    const [child] = await memory.search('他孩子多大了？', { limit: 1 });
    expect(child?.memory.content).toContain('女儿');
    const [pet] = await memory.search('用户家里有宠物吗？', { limit: 1 });
    expect(pet?.memory.content).toContain('猫');
    await memory.close();
  });

  it('reads a Chinese query without the words that frame it in a message; documents and English queries whole', { timeout: 30_000 }, async () => {
    const offline = createOfflineEmbedder();
    const message = '对了，他家在哪里？你还记得吗？';
    const [bare, framed] = await offline.embed(['他家在哪里？', message], { purpose: 'query' });
    // 对了 and 还记得 add nothing to the query (你, 吗 never did).
    expect(cos(framed, bare)).toBeCloseTo(1, 9);
    const [document] = await offline.embed([message], { purpose: 'document' });
    expect(cos(document, bare)).toBeLessThan(0.95);
    const english = 'By the way, where does he live? Do you remember?';
    const [englishQuery] = await offline.embed([english], { purpose: 'query' });
    expect(englishQuery).toEqual((await offline.embed([english]))[0]);
  });

  it('caches a query apart from a document of the same text', { timeout: 30_000 }, async () => {
    const cached = createDefaultEmbedder();
    const message = '我想问一下，他家在哪里？';
    const [document] = await cached.embed([message], { purpose: 'document' });
    const [query] = await cached.embed([message], { purpose: 'query' });
    const [bare] = await cached.embed(['他家在哪里？'], { purpose: 'query' });
    expect(query).not.toEqual(document);
    expect(cos(query, bare)).toBeCloseTo(1, 9);
  });

  it("never serves a query vector cached before the query reading, nor lets query and document share one", { timeout: 30_000 }, async () => {
    const offline = createOfflineEmbedder();
    const message = '对了，他家在哪里？你还记得吗？';
    const held = new Map<string, number[]>();
    const persistent: PersistentEmbeddingCache = {
      getMany: async (keys) => new Map(keys.filter((key) => held.has(key)).map((key) => [key, held.get(key) as number[]])),
      setMany: async (entries) => {
        for (const [key, vector] of entries) held.set(key, [...vector]);
      },
    };
    // A cache filled before queries were read otherwise: the same id, every text embedded whole.
    const before: Embedder = { id: offline.id, dimension: offline.dimension, embed: (texts) => offline.embed(texts, { purpose: 'document' }) };
    await createCachedEmbedder(before, { persistent }).embed([message], { purpose: 'query' });
    await createCachedEmbedder(before, { persistent }).embed([message], { purpose: 'document' });

    const after = createCachedEmbedder(createOfflineEmbedder(), { persistent });
    const [query] = await after.embed([message], { purpose: 'query' });
    const [bare] = await offline.embed(['他家在哪里？'], { purpose: 'query' });
    expect(cos(query, bare)).toBeCloseTo(1, 9);
    expect(after.stats().persistentHits).toBe(0);
    // Documents keep their keys: the stored document vector is still served.
    await after.embed([message], { purpose: 'document' });
    expect(after.stats().persistentHits).toBe(1);

    expect(() => createCachedEmbedder(createOfflineEmbedder(), { sharePurposes: true })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
    expect(createDefaultEmbedder().queryReading).toBe(offline.queryReading);
  });

  it('finds a Chinese question asked inside a longer message as it finds the bare question', { timeout: 30_000 }, async () => {
    const memory = createMemory({ store: createInMemoryStore(), embedder: createDefaultEmbedder() });
    for (const text of ['用户每天早上喝一杯美式咖啡。', '用户的护照明年六月到期。', '用户的女儿叫小雨，今年七岁。', '用户养了一只橘猫，名字叫土豆。', '用户下周要去上海出差，需要有人帮忙喂猫。']) {
      await memory.add(text);
    }
    // (A frame with words of its own, such as 问题 and 回答, which a memory may be about, still pulls the query away.)
    for (const message of ['他孩子多大了？', '请问他孩子多大了？谢谢！', '請問他孩子多大了？謝謝！', '对了，他孩子多大了？你还记得吗？']) {
      const [hit] = await memory.search(message, { limit: 1 });
      expect(hit?.memory.content, message).toContain('女儿');
    }
    await memory.close();
  });

  it('embeds a new text in well under a millisecond once loaded', async () => {
    const offline = createOfflineEmbedder();
    await offline.embed(['load the tables']);
    const texts = Array.from({ length: 200 }, (_, index) => `Caroline: I went to the support group yesterday, number ${index}, and it was so powerful.`);
    const start = performance.now();
    for (const text of texts) await offline.embed([text]);
    // Generous for shared CI machines; about 0.1-0.3 ms here.
    expect((performance.now() - start) / texts.length).toBeLessThan(5);
  });
});
