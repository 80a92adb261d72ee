import { describe, expect, it } from 'vitest';
import { sameSubject, subjectOf } from '../src/text/statement-subject.js';

describe('subjectOf: who a sentence is about, from its first words', () => {
  it.each([
    ['I work at Meta now.', 'I'],
    ["I'm Zhang San, an AI engineer", 'I'],
    ['My favourite colour is blue.', 'I'],
    ['My wife and I live in Paris.', 'I'],
    ['我在腾讯工作。', 'I'],
    ['我的手机号是13812345678。', 'I'],
    ['He works at Google as an engineer.', 'he'],
    ['Her name is Emma.', 'she'],
    ['They live in London.', 'they'],
    ['My mother works at a hospital.', 'mother'],
    ["My older sister's flat is in Lisbon.", 'sister'],
    ['My sister Emma lives in Porto.', 'sister emma'],
    ['"My friend Tom lives in Paris," I said.', 'friend tom'],
    ['我妈妈在医院工作。', 'mother'],
    ['我妈在医院工作。', 'mother'],
    ['我的姐姐在银行工作。', 'sister'],
    ['他在腾讯工作。', 'he'],
    ['她们住在上海。', 'they'],
    // Forms the rule does not read.
    ['Coffee is my favourite drink.', 'unknown'],
    ['Emma works at Google.', 'unknown'],
    ['We moved to Berlin.', 'unknown'],
    ['我们住在上海。', 'unknown'],
    ['现在我住在上海。', 'unknown'],
    ['在北京工作', 'unknown'],
  ])('%s → %s', (sentence, subject) => {
    expect(subjectOf(sentence)).toBe(subject);
  });
});

describe('sameSubject: whether two subjects may be one person', () => {
  it.each([
    ['I', 'I', true],
    ['I', 'unknown', true],
    ['he', 'unknown', true],
    ['I', 'he', false],
    ['I', 'mother', false],
    ['he', 'she', false],
    // A pronoun may stand for anyone named.
    ['he', 'brother', true],
    ['sister', 'sister emma', true],
    ['sister emma', 'sister anna', false],
    ['sister', 'brother', false],
  ] as const)('%s, %s → %s', (a, b, same) => {
    expect(sameSubject(a, b)).toBe(same);
    expect(sameSubject(b, a)).toBe(same);
  });
});
