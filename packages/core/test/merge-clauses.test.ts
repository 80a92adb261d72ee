import { describe, expect, it } from 'vitest';
import { mergeDeterministic } from '../src/index.js';

const merge = (old: string, fresh: string) => mergeDeterministic(old, fresh, 'full', 1000);

describe('deterministic merge: an old sentence about another thing is kept', () => {
  // Each of these merges at 0.85 or more with the offline default embedder: the new text repeats a
  // sentence of the old memory and adds another. The other old fact must stay (a rule that took "I am
  // allergic to …" or "我去过…" for one value replaced by the new one dropped it).
  it.each([
    [
      'I live in Lisbon and work as a nurse at Santa Maria hospital. I am allergic to peanuts and shellfish since childhood.',
      'I live in Lisbon and work as a nurse at Santa Maria hospital. I am allergic to cats.',
      'I live in Lisbon and work as a nurse at Santa Maria hospital. I am allergic to cats. I am allergic to peanuts and shellfish since childhood.',
    ],
    ['我养了一只橘猫，名字叫小橘。我去过巴黎和伦敦旅游。', '我养了一只橘猫，名字叫小橘。我去过东京。', '我养了一只橘猫，名字叫小橘。我去过东京。我去过巴黎和伦敦旅游。'],
    // Kept whole: its later clause is about Paris, not about the new Tokyo.
    [
      '我叫张三，是一名AI工程师，目前在北京工作。我去过巴黎，在那里住了三个月。',
      '我叫张三，是一名AI工程师，目前在北京工作。我去过东京。',
      '我叫张三，是一名AI工程师，目前在北京工作。我去过东京。我去过巴黎，在那里住了三个月。',
    ],
    ['I have two kids. I play tennis every weekend with my brother.', 'I have two kids. I play the guitar.', 'I have two kids. I play the guitar. I play tennis every weekend with my brother.'],
  ])('%s + %s', (old, fresh, merged) => {
    expect(merge(old, fresh)).toBe(merged);
  });
});

describe('当 leans on another clause only as "当…时/以后/后/前" (or 当时), not as the verb "to be, to serve as"', () => {
  it('keeps a clause of a superseded Chinese sentence that starts with the verb 当, or with the time word 当前', () => {
    expect(merge('我叫张三，是一名AI工程师，当过兵', '我是AI工程师张三')).toBe('我是AI工程师张三。当过兵');
    expect(merge('我叫张三，是一名AI工程师，当老师三年了', '我是AI工程师张三')).toBe('我是AI工程师张三。当老师三年了');
    expect(merge('我叫张三，是一名AI工程师，当老师有一段时间了', '我是AI工程师张三')).toBe('我是AI工程师张三。当老师有一段时间了');
    expect(merge('我叫张三，是一名AI工程师，当保安十个小时', '我是AI工程师张三')).toBe('我是AI工程师张三。当保安十个小时');
    expect(merge('我叫张三，是一名AI工程师，当前在北京工作', '我是AI工程师张三')).toBe('我是AI工程师张三。当前在北京工作');
  });

  it('still drops a clause that ends "当…时/的时候/以后/后/之前", and "当时…", without the clause it leans on', () => {
    expect(merge('我叫张三，是一名AI工程师，当我在北京的时候', '我是AI工程师张三')).toBe('我是AI工程师张三');
    expect(merge('我叫张三，是一名AI工程师，当我搬到上海以后', '我是AI工程师张三')).toBe('我是AI工程师张三');
    expect(merge('我叫张三，是一名AI工程师，当我读完研究生后', '我是AI工程师张三')).toBe('我是AI工程师张三');
    expect(merge('我叫张三，是一名AI工程师，当我毕业之前', '我是AI工程师张三')).toBe('我是AI工程师张三');
    expect(merge('我叫张三，是一名AI工程师，当时在北京工作', '我是AI工程师张三')).toBe('我是AI工程师张三');
    expect(merge('我叫张三，当我们结婚后，搬到了上海', '我叫张三，我们搬到了杭州')).toBe('我叫张三，我们搬到了杭州');
  });
});
