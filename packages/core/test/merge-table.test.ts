import { describe, expect, it } from 'vitest';
import { mergeDeterministic } from '../src/index.js';

const merge = (old: string, fresh: string) => mergeDeterministic(old, fresh, 'full', 2000);

// [old memory, new statement, merged text]
type Row = [string, string, string];

describe('deterministic merge: updates, additions and repeats (merged alike before the subject and coverage rules)', () => {
  it.each<Row>([
    // An update supersedes the old value; a fact about another thing stays.
    ['I live in Paris.', 'I live in Lyon now.', 'I live in Lyon now.'],
    ['I live in Paris. I have a dog named Rex.', 'I live in Lyon now.', 'I live in Lyon now. I have a dog named Rex.'],
    ['I like coffee.', 'I like tea.', 'I like tea.'],
    ['My favourite colour is blue.', 'My favourite colour is green.', 'My favourite colour is green.'],
    ['I work at Google.', 'I work at Meta now.', 'I work at Meta now.'],
    ['I have a dog.', 'I work at Meta now.', 'I work at Meta now. I have a dog.'],
    ['I like coffee. I have a dog.', "I don't like coffee.", "I don't like coffee. I have a dog."],
    ['I am 1.85 m tall. I have a dog.', 'I am 1.90 m tall.', 'I am 1.90 m tall. I have a dog.'],
    ['My phone number is 555 1234.', 'My phone number is 555 9876.', 'My phone number is 555 9876.'],
    ['My name is Anna. I live in Berlin.', 'My name is Anna. I live in Munich now.', 'My name is Anna. I live in Munich now.'],
    // The same other person, updated.
    ['My sister Emma lives in Lisbon.', 'My sister Emma lives in Porto now.', 'My sister Emma lives in Porto now.'],
    ['My brother lives in Porto.', 'My brother lives in Madrid now.', 'My brother lives in Madrid now.'],
    ['He works at Google.', 'He works at Meta now.', 'He works at Meta now.'],
    // A pronoun may stand for the person named: the rule does not tell them apart.
    ['My brother lives in Madrid with his two kids. He works at a bank.', 'My brother works at Google now.', 'My brother works at Google now. My brother lives in Madrid with his two kids.'],
    // Another person's fact that shares little with the new statement was already kept.
    ['My sister Emma loves coffee.', 'I love tea.', 'I love tea. My sister Emma loves coffee.'],
    // An old sentence says all the new text says: the old text stays.
    ['I live in Paris with my wife.', 'I live in Paris.', 'I live in Paris with my wife.'],
    ['I live in Paris. I have a dog named Rex.', 'I have a dog.', 'I live in Paris. I have a dog named Rex.'],
    // The new text repeats the old one and adds to it (apps/demo's Lisbon nurse among them).
    ['I live in Lisbon and work as a nurse', 'I live in Lisbon and I work as a nurse', 'I live in Lisbon and I work as a nurse'],
    ['I live in Lisbon and work as a nurse.', 'I live in Lisbon and work as a nurse. I have a cat.', 'I live in Lisbon and work as a nurse. I have a cat.'],
    ['I have a dog.', 'I have a dog. I have a cat.', 'I have a dog. I have a cat.'],
    ['I have two kids. I play tennis every weekend.', 'I have two kids. I play the guitar.', 'I have two kids. I play the guitar. I play tennis every weekend.'],
    // A subject the rule does not know ("Coffee") is compared by its terms alone, as before.
    ['Coffee is my favourite drink.', 'I prefer tea now.', 'I prefer tea now. Coffee is my favourite drink.'],
    ['我住在北京。我养了一只猫。', '我现在住在上海。', '我现在住在上海。我养了一只猫。'],
    // Seed 004 (apps/demo asserts it too).
    ['我叫张三，是一名AI工程师，目前在北京工作', '我是AI工程师张三', '我是AI工程师张三。目前在北京工作'],
    ['我在阿里巴巴工作', '我在腾讯工作', '我在腾讯工作'],
    ['我喜欢咖啡。', '我喜欢喝茶。', '我喜欢喝茶。'],
    ['我的手机号是13812345678。', '我的手机号是13987654321。', '我的手机号是13987654321。'],
    ['我养了一只橘猫，名字叫小橘。我去过巴黎和伦敦旅游。', '我养了一只橘猫，名字叫小橘。我去过东京。', '我养了一只橘猫，名字叫小橘。我去过东京。我去过巴黎和伦敦旅游。'],
    ['我妈妈在医院工作。', '我妈妈现在在学校工作。', '我妈妈现在在学校工作。'],
    ['他在腾讯工作。', '他现在在阿里巴巴工作。', '他现在在阿里巴巴工作。'],
    ['我每天早上跑步。', '我每天早上跑步。我喜欢吃辣。', '我每天早上跑步。我喜欢吃辣。'],
    ['我住在北京。我妈妈住在上海。', '我现在住在杭州。', '我现在住在杭州。我妈妈住在上海。'],
  ])('%s + %s', (old, fresh, merged) => {
    expect(merge(old, fresh)).toBe(merged);
  });
});

describe("deterministic merge: a fact about another person is not superseded by the user's", () => {
  it.each<Row>([
    ['He works at Google as an engineer.', 'I work at Meta now.', 'I work at Meta now. He works at Google as an engineer.'],
    ['She lives in Berlin.', 'I live in Lyon now.', 'I live in Lyon now. She lives in Berlin.'],
    ['They live in London.', 'I live in London now.', 'I live in London now. They live in London.'],
    ['He works at Google.', 'I work at Google.', 'I work at Google. He works at Google.'],
    ['My mother works at a hospital.', 'I work at Meta now.', 'I work at Meta now. My mother works at a hospital.'],
    ['My wife works at Google.', 'I work at Google.', 'I work at Google. My wife works at Google.'],
    ['I live in Paris. My brother lives in Rome.', 'I live in Lyon now.', 'I live in Lyon now. My brother lives in Rome.'],
    // As merges come with the default embedder: the new text repeats an old sentence and adds one.
    ['I live in Lisbon. My mother lives in Porto.', 'I live in Lisbon. I have a cat.', 'I live in Lisbon. I have a cat. My mother lives in Porto.'],
    // Two friends named apart are two people.
    ['My friend Tom lives in Paris.', 'My friend Anna lives in Paris.', 'My friend Anna lives in Paris. My friend Tom lives in Paris.'],
    ['我妈妈在医院工作。', '我在腾讯工作。', '我在腾讯工作。我妈妈在医院工作。'],
    ['他在腾讯工作。', '我在腾讯工作。', '我在腾讯工作。他在腾讯工作。'],
    ['她住在上海。', '我住在北京。', '我住在北京。她住在上海。'],
    ['我姐姐在银行工作。', '我在腾讯工作。', '我在腾讯工作。我姐姐在银行工作。'],
    ['我爸爸喜欢喝茶。', '我喜欢喝咖啡。', '我喜欢喝咖啡。我爸爸喜欢喝茶。'],
    ['我老婆喜欢猫。', '我喜欢狗。', '我喜欢狗。我老婆喜欢猫。'],
    ['她是一名医生。我是一名老师。', '我是一名程序员。', '我是一名程序员。她是一名医生。'],
    ['我住在北京。我妹妹在上海工作。', '我在上海工作。', '我在上海工作。我住在北京。我妹妹在上海工作。'],
    // A clause of a superseded Chinese sentence about another person stays.
    ['我叫张三，我妈妈在医院工作。', '我叫张三，在腾讯工作。', '我叫张三，在腾讯工作。我妈妈在医院工作。'],
  ])('%s + %s', (old, fresh, merged) => {
    expect(merge(old, fresh)).toBe(merged);
  });
});

describe('deterministic merge: the old text is kept for the new one only when one old sentence says it all', () => {
  it.each<Row>([
    // Every new term is somewhere in the old text, but no old sentence says the new one.
    ['My sister Emma lives in Lisbon. My brother lives in Porto.', 'My sister Emma lives in Porto now.', 'My sister Emma lives in Porto now. My brother lives in Porto.'],
    ['I work in Lisbon. I have a small flat in Porto near the river.', 'I work in Porto.', 'I work in Porto. I have a small flat in Porto near the river.'],
    ['I have a dog. My sister works in Berlin.', 'I work in Berlin.', 'I work in Berlin. I have a dog. My sister works in Berlin.'],
    ['I have a dog. My brother has a cat.', 'I have a cat.', 'I have a cat. I have a dog. My brother has a cat.'],
    ['I like tea. My wife likes coffee.', 'I like coffee.', 'I like coffee. My wife likes coffee.'],
    ['我喜欢茶。我老公喜欢咖啡。', '我喜欢咖啡。', '我喜欢咖啡。我老公喜欢咖啡。'],
  ])('%s + %s', (old, fresh, merged) => {
    expect(merge(old, fresh)).toBe(merged);
  });
});
