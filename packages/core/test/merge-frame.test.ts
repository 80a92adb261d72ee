import { describe, expect, it } from 'vitest';
import { mergeDeterministic } from '../src/index.js';

const merge = (old: string, fresh: string) => mergeDeterministic(old, fresh, 'full', 1000);

describe('deterministic merge: a sentence in the new one\'s frame is superseded, however long its old value', () => {
  it.each([
    // Short values were already superseded (they share 30 % of their terms or more); they stay so.
    ['我在阿里巴巴工作', '我在腾讯工作', '我在腾讯工作'],
    ['I work at Google', 'I work at Meta now', 'I work at Meta now'],
    ['My favourite colour is blue', 'My favourite colour is green', 'My favourite colour is green'],
    // A long old value shares less than 30 % of the terms, but the frame is the same: one employer, one home.
    ['I work at Google as a senior software engineer', 'I work at Meta now', 'I work at Meta now'],
    ['I worked at Google in Mountain View. I have a dog.', 'I work at Meta now.', 'I work at Meta now. I have a dog.'],
    ['I live in San Francisco with my partner', 'I live in Lyon now', 'I live in Lyon now'],
    ['我在阿里巴巴杭州总部工作。我养了一只猫。', '我在腾讯工作。', '我在腾讯工作。我养了一只猫。'],
    ['我在阿里巴巴做前端开发工作', '我在腾讯工作', '我在腾讯工作'],
    ['My phone number is +86 138 1234 5678, call after 6 pm', 'My phone number is 139 8765 4321', 'My phone number is 139 8765 4321'],
  ])('%s + %s', (old, fresh, merged) => {
    expect(merge(old, fresh)).toBe(merged);
  });
});

describe('deterministic merge: a sentence about another thing is kept, frame or not', () => {
  it.each([
    // Another predicate.
    ['我养了一只猫', '我在腾讯工作', '我在腾讯工作。我养了一只猫'],
    ['I have a dog', 'I work at Meta now', 'I work at Meta now. I have a dog'],
    // A frame of function words only ("I have a", "我在") is no frame: a cat does not replace a dog.
    ['I have a dog', 'I have a cat now', 'I have a cat now. I have a dog'],
    ['我在家里养了一只很可爱的橘猫', '我在腾讯工作', '我在腾讯工作。我在家里养了一只很可爱的橘猫'],
    // Another subject: the wife's or the mother's job is not the user's.
    ['My wife works at Google as a senior software engineer', 'I work at Meta now', 'I work at Meta now. My wife works at Google as a senior software engineer'],
    ['我妈妈在阿里巴巴杭州总部工作', '我在腾讯工作', '我在腾讯工作。我妈妈在阿里巴巴杭州总部工作'],
    // The shared words are not most of the new statement: working out is not a job.
    ['I work at Google as a senior software engineer', 'I work out every morning', 'I work out every morning. I work at Google as a senior software engineer'],
    // The new statement only adds to the old one ("I work at Google" says no other value): nothing is superseded by the frame.
    ['I work at Google as a senior software engineer in the Ads team. I have a dog.', 'I work at Google. I love sushi.', 'I work at Google. I love sushi. I work at Google as a senior software engineer in the Ads team. I have a dog.'],
  ])('%s + %s', (old, fresh, merged) => {
    expect(merge(old, fresh)).toBe(merged);
  });
});

describe('当 leans on another clause only as "当…时/以后/之后", not as the verb "to be, to serve as"', () => {
  it('keeps a clause of a superseded Chinese sentence that starts with the verb 当, or with the time word 当前', () => {
    expect(merge('我叫张三，是一名AI工程师，当过兵', '我是AI工程师张三')).toBe('我是AI工程师张三。当过兵');
    expect(merge('我叫张三，是一名AI工程师，当老师三年了', '我是AI工程师张三')).toBe('我是AI工程师张三。当老师三年了');
    expect(merge('我叫张三，是一名AI工程师，当前在北京工作', '我是AI工程师张三')).toBe('我是AI工程师张三。当前在北京工作');
  });

  it('still drops a "当…时" clause, and "当时", without the clause it leans on', () => {
    expect(merge('我叫张三，是一名AI工程师，当我在北京的时候', '我是AI工程师张三')).toBe('我是AI工程师张三');
    expect(merge('我叫张三，是一名AI工程师，当我搬到上海以后', '我是AI工程师张三')).toBe('我是AI工程师张三');
    expect(merge('我叫张三，是一名AI工程师，当时在北京工作', '我是AI工程师张三')).toBe('我是AI工程师张三');
  });
});
