import { describe, expect, it } from 'vitest';
import { createMemory } from '../src/index.js';

// The audit's four questions, each sharing only a character of its words (子, 动, 上) or a function
// pair (我的) with a memory that does not answer it: that memory once took the whole keyword part (text 1.00) and ranked first.
const facts = ['我对花生过敏，吃了会起疹子。', '我们有一个女儿叫朵朵，今年五岁。', '我现在在字节跳动工作。', '我每天早上跑步5公里。', '我搬到上海了。', '我的生日是8月15日。', '我开一辆特斯拉Model 3。'];
// [question, the memory that shares only a character or a function pair with it, the answer, or undefined where the
// default embedder alone ranks another memory first]
const questions: Array<[string, string, string | undefined]> = [
  ['我孩子多大了？', '我对花生过敏，吃了会起疹子。', '我们有一个女儿叫朵朵，今年五岁。'],
  ['我平时做什么运动？', '我现在在字节跳动工作。', undefined],
  ['我上班的公司是哪家？', '我搬到上海了。', '我现在在字节跳动工作。'],
  ['我的车是什么牌子？', '我的生日是8月15日。', '我开一辆特斯拉Model 3。'],
];

describe('search in Chinese (default embedder, in-memory store)', () => {
  it('gives a memory that shares only a character of a word or a function pair with the question at most half the keyword part, not all of it', { timeout: 60_000 }, async () => {
    const memory = await createMemory({ store: 'memory:', env: {} });
    try {
      const scope = { userId: 'u' };
      for (const fact of facts) await memory.add(fact, { scope, merge: false });
      for (const [question, collision, answer] of questions) {
        const results = await memory.search(question, { scope, limit: facts.length });
        const weak = results.find((result) => result.memory.content === collision);
        // Still a keyword match, at half its BM25 over the best (another weak match may be the best: 早上 holds 上 too).
        expect(weak?.parts.text, question).toBeGreaterThan(0);
        expect(weak?.parts.text, question).toBeLessThanOrEqual(0.5);
        if (answer) expect(results[0]?.memory.content, question).toBe(answer);
      }
    } finally {
      await memory.close();
    }
  });
});
