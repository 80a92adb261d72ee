import { describe, expect, it } from 'vitest';
import { distinctiveKeywordTerms, keywordTerms } from '../src/index.js';
import { WEAK_MATCH_SHARE, weighWeakMatches } from '../src/text/weak-matches.js';
import type { MemoryRecord, ScoredMemory } from '../src/types.js';

describe('distinctiveKeywordTerms', () => {
  // [query, terms it keeps, terms keywordTerms has that it drops]
  const rows: Array<[string, string[], string[]]> = [
    ['我孩子多大了？', ['孩子', '多大'], ['孩', '子', '多', '大']],
    ['我平时做什么运动？', ['平时', '做', '什么', '运动'], ['运', '动', '平', '时']],
    ['我上班的公司是哪家？', ['上班', '公司', '家'], ['上', '班', '公', '司']],
    ['我的车是什么牌子？', ['车', '牌子'], ['我的', '牌', '子']],
    ['我有宠物吗？', ['宠物'], ['我有', '宠', '物']],
  ];
  it.each(rows)('%s keeps the words and single-character words, not their characters or function pairs', (query, kept, dropped) => {
    const terms = distinctiveKeywordTerms(query);
    expect(terms).toEqual(expect.arrayContaining(kept));
    for (const term of dropped) {
      expect(keywordTerms(query)).toContain(term);
      expect(terms).not.toContain(term);
    }
  });

  it('leaves English, kana and Hangul terms as keywordTerms gives them', () => {
    for (const text of ['When did she go to the gym?', '딸이 몇 살이야?', 'ねこがすき']) expect(distinctiveKeywordTerms(text)).toEqual(keywordTerms(text));
  });
});

describe('weighWeakMatches', () => {
  const hit = (content: string, score = 2): ScoredMemory => ({ memory: { id: content, content } as MemoryRecord, score });
  // [query, a memory that shares only characters of its longer words or function pairs with it]
  const rows: Array<[string, string]> = [
    ['我孩子多大了？', '我对花生过敏，吃了会起疹子。'],
    ['我平时做什么运动？', '我现在在字节跳动工作。'],
    ['我上班的公司是哪家？', '我搬到上海了。'],
    ['我的车是什么牌子？', '我的生日是8月15日。'],
  ];
  it.each(rows)('%s scores %s at WEAK_MATCH_SHARE of its BM25', (query, content) => {
    expect(weighWeakMatches([hit(content)], query)[0]?.score).toBeCloseTo(2 * WEAK_MATCH_SHARE, 9);
  });

  it('keeps the whole score of a memory that holds a word of the question, a one-character word included', () => {
    const hits = [hit('我的孩子今年五岁。'), hit('我开车上班。')];
    expect(weighWeakMatches(hits, '我孩子多大了？')[0]?.score).toBe(2);
    expect(weighWeakMatches(hits, '我的车是什么牌子？')[1]?.score).toBe(2);
  });

  it('reads the memory as the keyword index does (NFKC): a word written with a compatibility character still holds', () => {
    // 孩⼦ with U+2F26 (KANGXI RADICAL CHILD), as text copied from a PDF often has it: NFKC reads it as 孩子.
    expect(weighWeakMatches([hit('我的孩\u2F26今年五岁。')], '我孩子多大了？')[0]?.score).toBe(2);
  });

  it('returns the hits of a query without CJK as they are', () => {
    const hits = [hit('I went to the gym')];
    expect(weighWeakMatches(hits, 'gym')).toBe(hits);
  });
});
