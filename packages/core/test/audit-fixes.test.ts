import { describe, expect, it } from 'vitest';
import { compressDeterministic, createMemory, decideUpdate, indexLine, keywords, MemloomError, strategyConfigSchema, summarizeMessagesDeterministic, tokenize, type MemoryRecord, type MemoryStore } from '../src/index.js';
import { axisVector, createFakeClock, createInMemoryStore, createTestEmbedder, vectorWithSimilarity } from '../src/testing/index.js';

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });
const lastGrapheme = (text: string) => [...graphemes.segment(text)].at(-1)?.segment;

describe('cuts between graphemes', () => {
  const flag = '🇨🇳';
  const family = '👨‍👩‍👧‍👦';
  const record = (content: string) => ({ id: 'm1', content, level: 'full', category: 'fact', type: 'user', weight: 1, importance: 0.5, updatedAt: '2024-01-01T00:00:00.000Z' }) as MemoryRecord;

  it('an index line never ends on half a flag or a dangling joiner', () => {
    for (const emoji of [flag, family]) {
      const line = indexLine(record(`${'我'.repeat(198)}${emoji}${'我'.repeat(10)}`), Date.parse('2024-01-02T00:00:00.000Z'), undefined);
      const body = line.slice(2, line.indexOf('…'));
      // 199 graphemes: 198 × 我 and the whole emoji.
      expect(body).toBe(`${'我'.repeat(198)}${emoji}`);
    }
  });

  it('a summary without clause breaks keeps a flag or a family emoji whole', () => {
    // No punctuation: the summary is the text's first 160 characters, and a cut by code points there
    // left 🇨 (half the flag) or 👨 and a dangling U+200D.
    for (const [emoji, before] of [[flag, 159], [family, 158]] as const) {
      const text = `${'我'.repeat(before)}${emoji}${'我'.repeat(100)}`;
      const summary = compressDeterministic(text, 'summary');
      expect(summary.endsWith('…')).toBe(true);
      const head = summary.slice(0, -1);
      expect(text.startsWith(head)).toBe(true);
      expect([...graphemes.segment(text)].some(({ index }) => index === head.length)).toBe(true);
      expect(lastGrapheme(head)).toBe(before === 159 ? emoji : '我');
    }
  });
});

describe('the clock option', () => {
  it('a clock returning a Date is refused with a typed error naming the option', async () => {
    const t = Date.parse('2026-11-01T04:00:00.000Z');
    const memory = createMemory({ store: createInMemoryStore(), embedder: createTestEmbedder(), clock: { now: () => new Date(t) as unknown as number } });
    const error = await memory.add('I live in Lyon', { scope: { userId: 'u' } }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MemloomError);
    expect(error).toMatchObject({ code: 'INVALID_OPTIONS' });
    expect((error as Error).message).toMatch(/clock\.now\(\) returned a Date/);
    expect((error as Error).message).not.toMatch(/in the future/);
    await memory.close();
  });

  it('a clock without now() is refused at once', () => {
    expect(() => createMemory({ store: createInMemoryStore(), embedder: createTestEmbedder(), clock: {} as never })).toThrow(/clock must be an object with a now\(\) method/);
  });

  it('a clock returning NaN is refused', async () => {
    const memory = createMemory({ store: createInMemoryStore(), embedder: createTestEmbedder(), clock: { now: () => Number.NaN } });
    await expect(memory.add('x', { scope: { userId: 'u' } })).rejects.toMatchObject({ code: 'INVALID_OPTIONS', message: expect.stringMatching(/clock\.now\(\) returned NaN/) });
    await memory.close();
  });
});

describe('the reason of a new memory when nothing of its category is in scope', () => {
  const DIM = 16;
  const setup = () => {
    const embedder = createTestEmbedder({ dimension: DIM, vectors: { 'I live in Lyon': axisVector(DIM, 0), 'Be brief': axisVector(DIM, 1) } });
    return createMemory({ store: createInMemoryStore(), embedder, clock: createFakeClock('2024-01-01T00:00:00.000Z') });
  };
  const scope = { userId: 'u' };

  it('a fact after the same text as an episode says facts and core memories were compared, not "no memory"', async () => {
    const memory = setup();
    await memory.add('I live in Lyon', { scope, category: 'episode' });
    await memory.add('Be brief', { scope, category: 'system' });
    const fact = await memory.add('I live in Lyon', { scope, category: 'fact' });
    expect(fact.decision.strategy).toBe('create_new');
    expect(fact.decision.reason).toBe('no fact or core memory in this scope yet (other categories are not compared): created a new full memory');
    const episode = await memory.add('Be brief', { scope, category: 'episode' });
    expect(episode.decision.reason).toMatch(/^similarity 0\.000 < /);
    const system = await memory.add('I live in Lyon', { scope: { userId: 'v' }, category: 'system' });
    expect(system.decision.reason).toBe('no system memory in this scope yet (other categories are not compared): created a new full memory');
    await memory.close();
  });

  it('decideUpdate without the categories keeps its plain reason', () => {
    expect(decideUpdate(undefined, strategyConfigSchema.parse({})).reason).toBe('no memory in this scope yet: created a new full memory');
  });
});

/** The in-memory store keeping float32 vectors, as SQLite does: a similarity of 0.7 on paper reads 0.699999988. */
function float32Store(): MemoryStore {
  const store = createInMemoryStore();
  const round = (vector: readonly number[]) => vector.map((value) => Math.fround(value));
  return new Proxy(store, {
    get(target, key, receiver) {
      if (key === 'apply') {
        return (changes: Parameters<MemoryStore['apply']>[0]) =>
          target.apply(changes.map((change) => (change.op === 'put' && change.vector ? { ...change, vector: round(change.vector) } : change)));
      }
      if (key === 'vectorSearch') return (query: Parameters<MemoryStore['vectorSearch']>[0]) => target.vectorSearch({ ...query, vector: round(query.vector) });
      const value = Reflect.get(target, key, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe('a threshold read from float32 vectors', () => {
  const DIM = 64;
  for (const threshold of [0.7, 0.85]) {
    it(`highSimilarity ${threshold}: a float32 store decides as an exact one`, async () => {
      const decisions: string[] = [];
      const similarities: number[] = [];
      for (const store of [createInMemoryStore(), float32Store()]) {
        const embedder = createTestEmbedder({ dimension: DIM, vectors: { A: axisVector(DIM, 0), B: vectorWithSimilarity(DIM, 0, 1, threshold) } });
        const memory = createMemory({ store, embedder, clock: createFakeClock(), strategy: { highSimilarity: threshold, mediumSimilarity: 0.5 } });
        await memory.add('A', { scope: { userId: 'u' } });
        const { decision } = await memory.add('B', { scope: { userId: 'u' } });
        decisions.push(decision.strategy);
        similarities.push(decision.similarity);
        expect(decision.reason).toMatch(new RegExp(`^similarity ${threshold.toFixed(3)} >= ${threshold}`));
        await memory.close();
      }
      // The float32 store does read another number; it still decides the same.
      expect(similarities[1]).not.toBe(similarities[0]);
      expect(decisions).toEqual(['merge_update', 'merge_update']);
    });
  }
});

describe('Chinese keywords, tags and session summaries', () => {
  it('keeps whole words and never joins a grammar character or a verb into one', () => {
    expect(keywords('第一天去宽窄巷子')).toEqual(['第一天', '宽窄巷子']);
    expect(keywords('我弟弟在北京读研究生，学计算机。')).toEqual(['弟弟', '北京', '研究生', '计算机']);
    expect(keywords('我叫王小明，今年32岁，是一名后端工程师。')).toEqual(['王小明', '今年', '32', '后端', '工程师']);
    expect(keywords('我在字節跳動當後端工程師')).toEqual(['字節', '跳動', '後端', '工程師']);
  });

  it('a negated fact keeps its negation: the tag does not say the opposite', () => {
    expect(compressDeterministic('我老婆现在不当老师了，她在做自由翻译。', 'tag')).toBe('#老婆 #不当老师 #自由 #翻译');
    expect(compressDeterministic('我不吃辣。', 'tag')).toBe('#不吃辣');
    expect(keywords('我从来没去过日本，不过明年想去。')).toEqual(['从来没去过日本', '明年']);
  });

  // The review of the rules above: an event word made of two verbs is a word, a lone character joins no time or
  // number and no grammar word, and a pronoun is not part of what is negated.
  it.each([
    ['明天下午三点开会', ['明天', '下午', '三点', '开会']],
    ['孩子下周一开学', ['孩子', '周一', '开学']],
    ['我在做买卖', ['买卖']],
    ['周日去教会', ['周日', '教会']],
    ['我学会了游泳', ['学会', '游泳']],
    ['我养猫三年了', ['养猫', '三年']],
    ['我的狗今年五岁', ['今年', '五岁']],
    ['我有车有房', ['有车', '有房']],
    // The negated phrase whole: "#香菜" alone would say the opposite.
    ['我不喜欢吃香菜', ['不喜欢吃香菜']],
    ['我还没吃饭', ['还没吃饭']],
    // A lone character still joins a place word before it.
    ['我住在杭州西湖区', ['杭州', '西湖区']],
  ])('%s -> %j', (text, expected) => {
    expect(keywords(text)).toEqual(expected);
    expect(compressDeterministic(text, 'tag')).toBe(expected.map((word) => `#${word}`).join(' '));
  });

  it('English keywords are as they were', () => {
    expect(keywords('My name is Tom and I work at Google as a software engineer.')).toEqual(['name', 'Tom', 'work', 'Google', 'software', 'engineer']);
    expect(compressDeterministic('I live in Lyon with my sister, who is a nurse.', 'tag')).toBe('#live #Lyon #sister #nurse');
  });

  it('a session summary leaves greetings out and joins quoted messages without doubled punctuation', () => {
    const turns = ['你好！', '我叫王小明，今年32岁，是一名前端工程师。', '我在杭州的阿里巴巴工作，主要写React。', '我老婆叫李娜，她是小学老师。', '我不吃辣。'];
    const messages = turns.flatMap((content) => [
      { role: 'user' as const, content },
      { role: 'assistant' as const, content: '好的。' },
    ]);
    expect(summarizeMessagesDeterministic(messages)).toBe(
      '聊了王小明、今年、前端、工程师、阿里巴巴、不吃辣。用户说：我叫王小明，今年32岁，是一名前端工程师；我在杭州的阿里巴巴工作，主要写React；我老婆叫李娜，她是小学老师。',
    );
    expect(summarizeMessagesDeterministic([{ role: 'user', content: '你好！' }, { role: 'assistant', content: '你好，有什么可以帮你？' }])).toBe('共2条消息');
  });

  it('an English summary leaves greetings and thanks out of its topics', () => {
    const messages = ['Hi!', 'I have an interview on Friday at Acme.', 'My sister Emma lives in Lisbon.'].flatMap((content) => [
      { role: 'user' as const, content },
      { role: 'assistant' as const, content: 'Sure, noted.' },
    ]);
    expect(summarizeMessagesDeterministic(messages)).toBe(
      'Talked about interview, Friday, Acme, sister, Emma, Lisbon. The user said: I have an interview on Friday at Acme. / My sister Emma lives in Lisbon.',
    );
  });
});

describe('English negations and Chinese numbers in keywords and tags', () => {
  // "#teacher" alone would read as the opposite of the memory: the negation keeps what it negates, as 不当老师 does.
  it.each([
    ["I'm not a teacher anymore", '#not-teacher-anymore'],
    ["I don't eat meat", '#not-eat-meat'],
    ['I have never been to Japan', '#never-Japan'],
    ["My sister doesn't drink coffee after dinner", '#sister #not-drink-coffee #dinner'],
    ['I no longer work at Google; now I freelance in Berlin', '#no-longer-work #Google #freelance #Berlin'],
    ['We are not moving to Canada this year', '#not-moving #Canada #year'],
    ["Tom isn't my manager anymore, Sarah is", '#Tom #not-manager-anymore #Sarah'],
    // A contraction written without its apostrophe is one too.
    ['I dont eat pork', '#not-eat-pork'],
    ['I eat neither fish nor eggs', '#eat #neither-fish #nor-eggs'],
    // A punctuation mark, or a stopword after a word it took, ends what is negated.
    ["I can't swim, but I love the beach", '#not-swim #love #beach'],
    ["I'm not allergic to peanuts, only to shellfish", '#not-allergic #peanuts #shellfish'],
    ["I don't like spicy food and I hate cilantro", '#not-like-spicy-food #hate #cilantro'],
    // Three words at most: the fourth stands alone.
    ["I don't eat red meat anymore", '#not-eat-red-meat #anymore'],
    // A line break ends it too (a session summary joins its messages with one).
    ['Married: no\nKids: two daughters', '#Married #Kids #two #daughters'],
    // Mixed: either negation takes a word of the other language.
    ["I don't like 香菜", '#not-like-香菜'],
    ["我不吃meat, I'm vegetarian", '#不吃meat #vegetarian'],
    // Where a negation does not negate what follows, the words stay as they were.
    ["I can't wait to see my grandma", '#wait #see #grandma'],
    ["I couldn't be happier", '#happier'],
    ["I can't believe I passed", '#believe #passed'],
    ["I don't just like cats, I love them", '#like #cats #love'],
    ["I'm not simply tired", '#simply #tired'],
    ['Why don\'t we go hiking on Sunday?', '#hiking #Sunday'],
    ["Isn't Paris lovely in spring?", '#Paris #lovely #spring'],
    ["Can't you just call me tomorrow?", '#call #tomorrow'],
    ['No I live in Paris', '#live #Paris'],
    ["No I'm vegetarian", '#vegetarian'],
    ["I don't think I like jazz", '#think #like #jazz'],
    ['No Country for Old Men', '#Country #Old #Men'],
    ['She said no he is too young', '#said #young'],
    // A question ends at its question mark: the sentence after it is read as any other.
    ["Is it far? I don't drive", '#far #not-drive'],
    // A question undoes only the negations of its own clause: a tag question after a fact leaves the fact negated.
    ['I do not eat meat, do you?', '#not-eat-meat'],
    ["I'm not married, right?", '#not-married #right'],
  ])('%s -> %s', (text, tag) => {
    expect(compressDeterministic(text, 'tag')).toBe(tag);
  });

  it('ends a negated phrase at a line break in a session summary', () => {
    const messages = [
      { role: 'user' as const, content: 'I have an interview at Google on Friday' },
      { role: 'assistant' as const, content: 'Great! Are you nervous?' },
      { role: 'user' as const, content: 'No' },
      { role: 'user' as const, content: 'Salary negotiation tips please' },
    ];
    expect(summarizeMessagesDeterministic(messages)).toMatch(/^Talked about interview, Google, Friday, nervous, Salary, negotiation\./u);
  });

  it('leaves a negation that negates nothing after it as it was', () => {
    expect(compressDeterministic('No, I live in Paris with my wife Anna', 'tag')).toBe('#live #Paris #wife #Anna');
    expect(compressDeterministic("I'm not only a teacher but also a writer", 'tag')).toBe('#teacher #writer');
    expect(compressDeterministic('Nothing beats homemade pasta', 'tag')).toBe('#Nothing #beats #homemade #pasta');
  });

  it('writes the negated phrase at the trace and archive levels too, and maintenance stores it', async () => {
    expect(compressDeterministic("I'm not a teacher anymore", 'trace')).toBe('Faded memory about: not-teacher-anymore');
    expect(compressDeterministic('I have never been to Japan', 'archive')).toBe('[archived] #never-Japan');
    const clock = createFakeClock('2024-01-01T00:00:00.000Z');
    const memory = createMemory({ store: createInMemoryStore(), embedder: createTestEmbedder(), clock });
    const { memory: added } = await memory.add("I don't eat meat", { scope: { userId: 'u' } });
    clock.advance(45 * 86_400_000);
    await memory.maintain();
    expect(await memory.get(added.id)).toMatchObject({ level: 'tag', content: '#not-eat-meat' });
    // Search still reads the words of a hyphenated tag.
    expect(tokenize('#not-eat-meat')).toEqual(tokenize('eat meat'));
  });

  // A number the segmenter cut in two (三|十二岁, 二十|八岁, 两千|五百元) read as two numbers, or as a part of the word before it (今年三).
  it.each([
    ['我今年三十二岁', ['今年', '三十二岁']],
    ['我今年二十八岁了', ['今年', '二十八岁']],
    ['两千五百元', ['两千五百元']],
    ['第十二次', ['第十二次']],
    ['用户的生日是十一月二十三日', ['用户', '生日', '十一月', '二十三日']],
    ['隔壁的李爷爷八十多岁了', ['隔壁', '李爷爷', '八十多岁']],
    ['我有两只猫', ['两只猫']],
    // As they were: a number with its unit is one keyword, a number and a measure word alone ("两只") none.
    ['这件衣服九十九元', ['件衣服', '九十九元']],
    ['我花了三百块买了鞋', ['三百块']],
    ['我学了两年钢琴', ['两年', '钢琴']],
    ['这是我第三次去日本', ['第三次', '日本']],
    ['我十一月去北京', ['十一月', '北京']],
    ['两室一厅', ['两室一厅']],
    ['我有两只兔子', ['兔子']],
    // 把 and 对 are measure words too: "两把", "两对" alone say nothing.
    ['买了两把雨伞', ['雨伞']],
    ['她有两对耳环', ['耳环']],
    // A word starting with a numeral goes on a number only where a place value (十百千万亿) is at the cut.
    ['五一一起去爬山', ['五一', '一起去', '爬山']],
    ['十一一直在加班', ['十一', '一直在', '加班']],
    ['万一一直', ['万一']],
    ['第一一定', ['第一']],
    ['我们三一起去', ['我们三', '一起去']],
    ['一万一千一百一十一元', ['一万一千一百一十一元']],
    ['二三十岁', ['二三十岁']],
    // Numerals read digit by digit up to a unit of time (a year) go on too.
    ['二零一九年我结婚了', ['二零一九年', '结婚']],
    ['我二零二三年毕业', ['二零二三年', '毕业']],
    ['二〇二三年', ['二〇二三年']],
    // A Chinese negation takes one English word, and ends there.
    ['他没有car但有bike', ['没有car', '但有', 'bike']],
    ['我不吃meat和fish', ['不吃meat', 'fish']],
  ])('%s -> %j', (text, expected) => {
    expect(keywords(text)).toEqual(expected);
  });

  // 一千|二百|三十|四万|五千|六百|一千…: a number of twelve characters takes no more, so with the segment it took last
  // (two characters here) a word has fourteen at most.
  it('stops a long run of numbers once it has twelve characters, and the segment it took last', () => {
    const words = keywords('一千二百三十四万五千六百'.repeat(1_000));
    expect(words.length).toBeGreaterThan(0);
    for (const word of words) expect(Array.from(word).length).toBeLessThanOrEqual(14);
    expect(words[0]).toBe('一千二百三十四万五千六百一千');
  }, 30_000);
});
