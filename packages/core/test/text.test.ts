import { describe, expect, it } from 'vitest';
import { compressDeterministic, createMemory, fitLines, lastCharacters, hasLoneSurrogate, keywords, keywordTerms, mergeDeterministic, pairSafeEnd, porterStem, TextIndex, tokenize, withoutChineseDiscourse } from '../src/index.js';
import { createFakeClock, createInMemoryStore, createTestEmbedder } from '../src/testing/index.js';
import { referenceKeywords, referenceTokenize } from './reference-text.js';

describe('tokenize', () => {
  it('lowercases, drops stopwords and possessives, and stems English', () => {
    expect(tokenize("Caroline's going to the LGBTQ support groups")).toEqual(['carolin', 'go', 'lgbtq', 'support', 'group']);
  });

  it('splits Chinese into characters and adjacent pairs', () => {
    const tokens = tokenize('我喜欢喝咖啡');
    expect(tokens).toContain('咖啡');
    expect(tokens).toContain('咖');
    expect(tokens).toContain('喜欢');
  });

  it('keeps Chinese function characters (了, 的, 他) only inside pairs, like English stopwords', () => {
    const tokens = tokenize('他孩子多大了');
    expect(tokens).not.toContain('了');
    expect(tokens).not.toContain('他');
    expect(tokens).toEqual(expect.arrayContaining(['孩', '子', '孩子', '多大']));
    expect(tokenize('的')).toEqual([]);
    expect(tokenize('他孩子多大了', { stopwords: false })).toEqual(expect.arrayContaining(['他', '了']));
  });

  it('treats the traditional forms of the function characters as their simplified forms', () => {
    const pairs = [['过', '過'], ['吗', '嗎'], ['们', '們'], ['这', '這'], ['个', '個'], ['与', '與'], ['于', '於']];
    for (const [simplified, traditional] of pairs) {
      for (const char of [simplified, traditional] as string[]) {
        expect(tokenize(`猫${char}狗`), char).not.toContain(char);
        expect(tokenize(`猫${char}狗`, { stopwords: false }), char).toContain(char);
      }
    }
    expect(tokenize('你們好嗎')).toEqual(['你們', '好', '好嗎']);
  });

  it('reads the past forms of common irregular verbs as the verb for keyword search, and leaves ambiguous forms alone', () => {
    for (const [verb, ...forms] of [['go', 'went', 'gone'], ['buy', 'bought'], ['write', 'wrote', 'written'], ['break', 'broken']] as string[][]) {
      for (const form of forms) expect(keywordTerms(`She ${form}`), form).toEqual(keywordTerms(`She ${verb}`));
    }
    expect(keywordTerms('When did Melanie go camping?')).toEqual(['melani', 'go', 'camp']);
    expect(keywordTerms('Melanie went camping')).toEqual(['melani', 'go', 'camp']);
    // As often another word: left (the left side), found (found a company), saw (a saw), felt (the fabric), a thought,
    // a flu shot, the Met, Sat(urday), the Korean won, Drew, I'm broke, a bicycle spoke.
    for (const [form, verb] of [['left', 'leave'], ['found', 'find'], ['saw', 'see'], ['felt', 'feel'], ['thought', 'think'], ['shot', 'shoot'], ['met', 'meet'], ['sat', 'sit'], ['won', 'win'], ['drew', 'draw'], ['broke', 'break'], ['spoke', 'speak']] as const) {
      expect(keywordTerms(form), form).not.toEqual(keywordTerms(verb));
    }
    expect(tokenize('went', { stem: false, pastForms: 'verb' })).toEqual(['went']);
  });

  it('keeps past forms as written unless asked: what compares statements tells a plan from what happened', () => {
    expect(tokenize('I went to Paris')).not.toEqual(tokenize('I go to Paris'));
    expect(tokenize('I bought a house')).toEqual(['bought', 'hous']);
    expect(tokenize('I bought a house', { pastForms: 'verb' })).toEqual(tokenize('I buy a house'));
    // The deterministic merge reads the news, not the plan it settles: "I bought a house" is kept.
    expect(mergeDeterministic('I want to buy a house', 'I bought a house', 'full', 1000)).toBe('I bought a house');
  });

  it('handles mixed scripts, numbers and emoji', () => {
    const tokens = tokenize('AI工程师 in 2023 ☕️');
    expect(tokens).toEqual(expect.arrayContaining(['ai', '工程', '师', '2023']));
    expect(tokens).not.toContain('☕️');
    expect(tokenize('')).toEqual([]);
  });
});

describe('porterStem', () => {
  it.each([
    ['caresses', 'caress'],
    ['ponies', 'poni'],
    ['running', 'run'],
    ['hopping', 'hop'],
    ['agreed', 'agre'],
    ['relational', 'relat'],
    ['generalization', 'gener'],
    ['meeting', 'meet'],
    ['sky', 'sky'],
  ])('%s -> %s', (word, stem) => {
    expect(porterStem(word)).toBe(stem);
  });
});

describe('TextIndex (BM25)', () => {
  it('ranks the document with more and rarer matches first, and forgets deleted ones', () => {
    const index = new TextIndex();
    index.set('a', 'espresso every morning before work');
    index.set('b', 'green tea in the evening');
    index.set('c', 'espresso machine broke');
    expect(index.search('espresso morning', 10).map((hit) => hit.id)).toEqual(['a', 'c']);
    index.delete('a');
    expect(index.search('espresso morning', 10).map((hit) => hit.id)).toEqual(['c']);
    index.set('c', 'the machine is fixed');
    expect(index.search('espresso', 10)).toEqual([]);
    expect(index.size).toBe(2);
  });

  it('finds a memory told in the past tense from a question in the present (did … buy → bought)', () => {
    const index = new TextIndex();
    index.set('past', 'I bought a red bike last week');
    index.set('other', 'my neighbour wants a bike');
    expect(index.search('When did she buy the bike?', 10).map((hit) => hit.id)).toEqual(['past', 'other']);
  });

  it("weighs terms by FTS5's IDF, as SQLite does: a word in half the documents counts next to nothing", () => {
    const index = new TextIndex();
    index.set('photos', 'photo photo');
    index.set('beach', 'photo of the beach');
    index.set('dancers', 'dancers rehearse on a long summer evening stage');
    index.set('garden', 'garden tools');
    // photo: 2 documents of 4, log((4 - 2 + 0.5) / (2 + 0.5)) = 0, kept at 1e-6; dancer: 1 of 4, log(3.5 / 1.5).
    // With log(1 + …) (Lucene's IDF) photo weighed 0.69 against dancer's 1.20 and 'photos' ranked first.
    const hits = index.search('dancers photo', 10);
    expect(hits.map((hit) => hit.id)).toEqual(['dancers', 'photos', 'beach']);
    // Average length 3 (photo photo: 2; photo beach: 2; dancer rehears long summer even stage: 6; garden tool: 2).
    const saturated = (frequency: number, length: number) => (frequency * 2.2) / (frequency + 1.2 * (0.25 + (0.75 * length) / 3));
    expect(hits[0]?.score).toBeCloseTo(Math.log(3.5 / 1.5) * saturated(1, 6), 9);
    expect(hits[1]?.score).toBeCloseTo(1e-6 * saturated(2, 2), 12);
    expect(hits[1]?.score).toBeGreaterThan(0);
  });

  it('filters before ranking', () => {
    const index = new TextIndex();
    index.set('a', 'lunch with Maria');
    index.set('b', 'lunch with Maria again');
    expect(index.search('lunch', 10, (id) => id === 'b').map((hit) => hit.id)).toEqual(['b']);
  });
});

describe('deterministic compression keeps the key words', () => {
  const text = 'I am Zhang San, an AI engineer working in Beijing';
  it.each([
    ['summary', 'I am Zhang San, an AI engineer…'],
    ['tag', '#Zhang #San #AI #Beijing'],
    ['trace', 'Faded memory about: Zhang, Beijing'],
    ['archive', '[archived] #Zhang #Beijing'],
  ] as const)('%s', (level, expected) => {
    expect(compressDeterministic(text, level)).toBe(expected);
  });

  it('follows seed 004 for Chinese', () => {
    const chinese = '我叫张三，是一名AI工程师，目前在北京工作';
    expect(compressDeterministic(chinese, 'summary')).toBe('我叫张三，是一名AI工程师…');
    expect(compressDeterministic(chinese, 'tag')).toBe('#张三 #工程师 #北京 #工作');
    expect(compressDeterministic(chinese, 'trace')).toBe('曾有关于张三、工程师的记忆');
    expect(compressDeterministic(chinese, 'archive')).toBe('[已归档] #张三 #工程师');
  });

  it('picks names and numbers as keywords', () => {
    expect(keywords('We met Maria at the cafe on 12 May', 3)).toEqual(['Maria', '12', 'May']);
  });
});

describe('deterministic merge', () => {
  it('lets the new statement replace what it supersedes and keeps the rest', () => {
    expect(mergeDeterministic('I live in Paris. I have a dog named Rex.', 'I live in Lyon now.', 'full', 1000)).toBe(
      'I live in Lyon now. I have a dog named Rex.',
    );
    expect(mergeDeterministic('我住在北京。我养了一只猫。', '我现在住在上海。', 'full', 1000)).toBe('我现在住在上海。我养了一只猫。');
  });

  it('keeps the clauses of a superseded Chinese sentence that speak of other things, not an English one\'s', () => {
    expect(mergeDeterministic('我叫张三，是一名AI工程师，目前在北京工作', '我是AI工程师张三', 'full', 1000)).toBe('我是AI工程师张三。目前在北京工作');
    expect(mergeDeterministic('我叫张三，目前在北京工作，喜欢喝咖啡，是一名AI工程师', '我是AI工程师张三', 'full', 1000)).toBe(
      '我是AI工程师张三。目前在北京工作，喜欢喝咖啡',
    );
    expect(mergeDeterministic('我叫张三，是AI工程师，在北京工作。我养了一只猫。', '我是AI工程师张三', 'full', 1000)).toBe('我是AI工程师张三。在北京工作。我养了一只猫。');
    // English clauses are not weighed one by one: a superseded sentence goes whole.
    expect(mergeDeterministic('My name is Zhang San, I work in Beijing as an AI engineer', "I'm Zhang San, a machine learning engineer", 'full', 1000)).toBe(
      "I'm Zhang San, a machine learning engineer",
    );
  });

  it('keeps no Chinese clause that leans on one left out, and no item of a list: each would say something else alone', () => {
    // Since 2019 was said of Beijing; the condition of "I don't run"; the cats of the list are what changed.
    expect(mergeDeterministic('我在北京工作，从2019年开始', '我在上海工作', 'full', 1000)).toBe('我在上海工作');
    expect(mergeDeterministic('如果下雨，我就不去跑步', '我每天都去跑步', 'full', 1000)).toBe('我每天都去跑步');
    expect(mergeDeterministic('我喜欢猫、狗和兔子', '我不喜欢猫了', 'full', 1000)).toBe('我不喜欢猫了');
    expect(mergeDeterministic('我不吃肉，也不喝酒', '我现在吃肉了', 'full', 1000)).toBe('我现在吃肉了');
    expect(mergeDeterministic('我叫张三，是一名AI工程师，但是不喜欢写代码', '我是AI工程师张三', 'full', 1000)).toBe('我是AI工程师张三');
    // A clause that starts with a time word, or with a verb that starts like a connective (从事, 就职), and a whole list, stand alone.
    expect(mergeDeterministic('我叫张三，是一名AI工程师，现在住在杭州', '我是AI工程师张三', 'full', 1000)).toBe('我是AI工程师张三。现在住在杭州');
    expect(mergeDeterministic('我叫张三，是一名AI工程师，从事推荐系统研究', '我是AI工程师张三', 'full', 1000)).toBe('我是AI工程师张三。从事推荐系统研究');
    expect(mergeDeterministic('我叫张三，是一名AI工程师，就职于腾讯', '我是AI工程师张三', 'full', 1000)).toBe('我是AI工程师张三。就职于腾讯');
    expect(mergeDeterministic('我叫张三，是一名AI工程师，喜欢猫、狗和兔子', '我是AI工程师张三', 'full', 1000)).toBe('我是AI工程师张三。喜欢猫、狗和兔子');
  });

  it('replaces a compressed shadow with the new statement (seed 004: "#job:engineer" + "I am AI engineer Zhang San")', () => {
    expect(mergeDeterministic('#职业:工程师', '我是AI工程师张三', 'tag', 1000)).toBe('我是AI工程师张三');
  });

  it('keeps the longer text when the new one says nothing new', () => {
    expect(mergeDeterministic('I live in Paris with my wife', 'I live in Paris', 'full', 1000)).toBe('I live in Paris with my wife');
  });
});

/** Sentences of every script the tokenizer meets, numbered, run together to `length` characters or more. */
function mixedText(length: number): string {
  const sentences = ['我住在杭州西湖附近，每天早上喝一杯拿铁咖啡。', '周末喜欢去爬山！', "My favorite café is Blue Bottle; I go there 3.5 times a week, isn't it? ", '東京の友達に会いに行きます。', '한국어도 조금 할 수 있어요. ', 'snake_case_name, e.g. U.S.A. 1,000 items: done. '];
  const parts: string[] = [];
  for (let index = 0, total = 0; total < length; index++) {
    const part = `${sentences[index % sentences.length]}${index} `;
    parts.push(part);
    total += part.length;
  }
  return parts.join('');
}

describe('tokenize on long text', () => {
  it('gives the same terms as sentence by sentence (it segments long text a piece at a time, cut only where no word continues)', () => {
    const sentences = ['我住在杭州西湖附近，每天早上喝一杯拿铁咖啡。', '周末喜欢去爬山！', 'My favorite café is Blue Bottle; I go there 3 times a week. ', '東京の友達に会いに行きます。', '한국어도 조금 할 수 있어요. '];
    const parts: string[] = [];
    for (let index = 0; parts.join('').length < 30_000; index++) parts.push(`${sentences[index % sentences.length]}${index} `);
    const text = parts.join('');
    expect(tokenize(text)).toEqual(parts.flatMap((part) => tokenize(part)));
  });

  it('gives the terms of a single pass when the 2,000th character is a mark inside a word (isn\'t, 3.14, a_b, e.g, 1,000)', () => {
    for (const word of ["isn't", 'can’t', '3.14', 'a_b', 'e.g', '1,000', 'a:b']) {
      // The mark is the text's 2,000th character: a piece that ended right after it would split the word.
      const before = 1999 - word.search(/[^\p{L}\p{N}]/u);
      const filler = `${'café '.repeat(Math.floor(before / 5))}${' '.repeat(before % 5)}`;
      const text = `${filler}${word} and more words after it. `.padEnd(2600, 'x ');
      expect(text[1999], word).toMatch(/[^\p{L}\p{N}]/u);
      expect(tokenize(text), word).toEqual(referenceTokenize(text));
      expect(tokenize(text, { stopwords: false, stem: false }), word).toEqual(referenceTokenize(text, { stopwords: false, stem: false }));
    }
  });

  it('never cuts a long run of letters outside the BMP through a UTF-16 pair', () => {
    // 1 + 2 × 1,500 units with nowhere to cut: the first piece's last unit would be the first half of a pair.
    const text = 'x' + '𐐀'.repeat(1500);
    const tokens = tokenize(text);
    expect(tokens.some(hasLoneSurrogate)).toBe(false);
    expect(tokens.join('')).toBe(text.toLowerCase());
  });
});

describe('keywords on long text', () => {
  it('gives the words of a single pass on a medium text', () => {
    const text = mixedText(30_000);
    expect(keywords(text)).toEqual(referenceKeywords(text));
    expect(keywords(text, 2)).toEqual(referenceKeywords(text, 2));
  }, 30_000);

  it('finishes on 200,000 characters of mixed Chinese and English, with the words of the block they repeat', () => {
    const block = mixedText(5_000);
    const text = block.repeat(40);
    expect(text.length).toBeGreaterThan(200_000);
    // A single pass over the block (5,000 characters) is quick; over the whole text it took minutes.
    expect(keywords(text)).toEqual(referenceKeywords(block));
    expect(keywords(text, 3)).toEqual(referenceKeywords(block, 3));
  }, 60_000);
});

describe('pairSafeEnd', () => {
  it('steps back from the first half of a UTF-16 pair, and only from it', () => {
    const text = 'ab😀c'; // 😀 is units 2 and 3
    expect(pairSafeEnd(text, 3)).toBe(2);
    expect(text.slice(0, pairSafeEnd(text, 3))).toBe('ab');
    for (const end of [0, 1, 2, 4, 5]) expect(pairSafeEnd(text, end)).toBe(end);
    expect(pairSafeEnd('', 0)).toBe(0);
  });
});

describe('fitLines', () => {
  const wrap = (body: string) => `<fence>\n${body}\n</fence>`;
  const within = (limit: number) => (block: string) => block.length <= limit;
  const text = ['# Index', '', '- one', '- two', '', '- three'].join('\n');

  it('gives the text whole, wrapped, when it fits', () => {
    expect(fitLines(text, { wrap, warning: ' [cut]', fits: within(1000) })).toBe(wrap(text));
  });

  it('keeps the longest run of first lines that fits with the warning, white space before the warning dropped', () => {
    const warning = '\n[cut]';
    // "# Index\n\n- one\n- two" and the warning fit; "…\n\n- three" does not: the blank line is dropped, not kept before the warning.
    const limit = wrap(`# Index\n\n- one\n- two${warning}`).length;
    expect(fitLines(text, { wrap, warning, fits: within(limit) })).toBe(wrap(`# Index\n\n- one\n- two${warning}`));
    const onlyTitle = wrap(`# Index${warning}`).length;
    expect(fitLines(text, { wrap, warning, fits: within(onlyTitle + 3) })).toBe(wrap(`# Index${warning}`));
  });

  it("gives '' when not even the first line fits with the warning", () => {
    expect(fitLines(text, { wrap, warning: '\n[cut]', fits: within(10) })).toBe('');
  });

  it('measures what wrap makes of the lines, escaping included', () => {
    const escaping = (body: string) => wrap(body.replace(/</g, '&lt;'));
    const tags = ['<a>', '<b>', '<c>'].join('\n');
    const fits = within(escaping(`&lt;a>\n&lt;b>!`).length);
    expect(fitLines(tags, { wrap: escaping, warning: '!', fits })).toBe(escaping('<a>\n<b>!'));
  });
});

describe('longestFitting', () => {
  it('finds the largest n that fits when what is measured grows with n', async () => {
    const { longestFitting } = await import('../src/index.js');
    expect(longestFitting(100, (n) => n * 3 <= 200)).toBe(66);
    expect(longestFitting(10, () => true)).toBe(10);
    expect(longestFitting(10, () => false)).toBe(0);
    expect(longestFitting(0, () => true)).toBe(0);
  });
});

describe("the in-memory store's text index", () => {
  it('forgets deleted memories: a text search scores as in a store that never held them', async () => {
    const kept = 'I drink coffee every morning';
    // Three kept, coffee in one: its IDF is log(2.5 / 1.5), not the floor a term in half the memories gets.
    const keptTexts = [kept, 'The dog sleeps all day', 'We painted the fence blue'];
    const build = async (extra: string[]) => {
      const memory = createMemory({ store: createInMemoryStore(), embedder: createTestEmbedder(), clock: createFakeClock('2024-05-01T09:00:00.000Z') });
      const ids = [];
      for (const text of [...keptTexts, ...extra]) ids.push((await memory.add(text, { scope: { userId: 'a' }, merge: false })).memory.id);
      for (const id of ids.slice(keptTexts.length)) await memory.delete(id);
      return memory.store.textSearch!({ text: 'coffee', limit: 5 });
    };
    const afterDeletes = await build(['Tea, not coffee, for me', 'My sister sells garden tools', 'We met at the bakery', 'The train was late again']);
    const fresh = await build([]);
    expect(afterDeletes.map((hit) => hit.memory.content)).toEqual([kept]);
    expect(afterDeletes[0]?.score).toBeCloseTo(fresh[0]?.score as number, 9);
  });
});

describe('withoutChineseDiscourse', () => {
  it('blanks the words that frame a Chinese question, longest first, so none of their characters is a search term', () => {
    const message = '我想问一下，他家在哪里？如果不记得就直接说不知道。';
    expect(withoutChineseDiscourse(message)).toBe('  ，他家在哪里？  就直接说 。');
    // 下, 记, 得, 知, 道 and the pairs across the gaps are gone; the question's own terms stay.
    const terms = tokenize(withoutChineseDiscourse(message));
    for (const framing of ['想', '问', '下', '一下', '如果', '不', '记', '记得', '知道', '道']) expect(terms).not.toContain(framing);
    expect(terms).toEqual(expect.arrayContaining(['家', '哪里']));
    expect(tokenize(withoutChineseDiscourse('对了，他家在哪里？你还记得吗？'))).toEqual(tokenize('他家在哪里？'));
  });

  it('blanks a listed word only where it is a word of its own, so content words that hold one keep their terms', () => {
    // 的话|剧, 的话|费, 一下|班, 一|下午, 最|好的, 对|了解, 名副其|实, 健康|问题: none is a discourse word here.
    for (const query of ['她最喜欢的话剧是哪部？', '她每个月的话费是多少？', '她一下班就去哪里？', '周六一下午她都在做什么？', '她最好的朋友是谁？', '她对了解历史感兴趣吗？', '名副其实的美食家是谁？', '她有什么健康问题？', '她写稿时不想被打扰吗？']) {
      expect(withoutChineseDiscourse(query), query).toBe(query);
    }
    // The same words framing a question are still blanked.
    expect(withoutChineseDiscourse('等我一下，如果有时间的话，他家在哪里？')).toBe('等我 ，如果有时间 ，他家在哪里？');
    expect(withoutChineseDiscourse('好的，谢谢你刚才的回答。我还有一个问题想请教：他家在哪里？')).toBe(' ， 你 的回答。我还有一个问题想 ：他家在哪里？');
  });

  it('blanks the traditional spellings too', () => {
    expect(withoutChineseDiscourse('對了，他家在哪裡？你還記得嗎？')).toBe(' ，他家在哪裡？你 嗎？');
    expect(withoutChineseDiscourse('請問他女兒幾歲？謝謝！')).toBe(' 他女兒幾歲？ ！');
    expect(withoutChineseDiscourse('如果有時間的話，他家在哪裡？')).toBe('如果有時間 ，他家在哪裡？');
  });

  it('leaves text without Han characters as it is, Japanese (text with kana), and a query that would keep no term', () => {
    for (const text of ["By the way, where does he live? Do you remember?", 'Je me souviens', 'おぼえていますか']) expect(withoutChineseDiscourse(text)).toBe(text);
    // Kanji beside kana are Japanese: 回答 (an answer) and 知道 are read as written.
    for (const text of ['アンケートの回答の締め切りはいつ？', '北海道を知道していますか']) expect(withoutChineseDiscourse(text)).toBe(text);
    expect(withoutChineseDiscourse('谢谢！')).toBe('谢谢！');
    expect(withoutChineseDiscourse('请问你还记得吗？')).toBe('请问你还记得吗？');
    expect(withoutChineseDiscourse('請問你還記得嗎？')).toBe('請問你還記得嗎？');
    // Latin words beside the Chinese ones are kept.
    expect(withoutChineseDiscourse('请问他在 GitHub 上叫什么？')).toBe(' 他在 GitHub 上叫什么？');
  });
});

describe('lastCharacters', () => {
  it('keeps the last max characters, never starting on the second half of a UTF-16 pair', () => {
    expect(lastCharacters('short', 10)).toBe('short');
    expect(lastCharacters('abcdef', 3)).toBe('def');
    // "🎉" is two halves: a cut through it starts after it.
    expect(lastCharacters('a🎉bc', 3)).toBe('bc');
    expect(lastCharacters('a🎉bc', 4)).toBe('🎉bc');
    // A lone first half before the cut is no pair: nothing more is dropped.
    expect(lastCharacters('a\uD83Dbc', 2)).toBe('bc');
    expect(lastCharacters('\uDC00bc', 3)).toBe('\uDC00bc');
    expect(lastCharacters('x\uDC00bc', 3)).toBe('\uDC00bc');
  });
});
