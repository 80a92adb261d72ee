import { describe, expect, it } from 'vitest';
import { extractFactsDeterministic, hasLoneSurrogate, parseExtraction, parseJsonObject, parseReviewAnswer } from '../src/index.js';
import { shortText } from '../src/pipeline/context.js';

describe('parseExtraction', () => {
  it('reads every operation form, case-insensitively, with list markers', () => {
    const parsed = parseExtraction(
      ['1. [add] The user likes tea', '* [ADD user] The user is 30', '[UPDATE: m-1 USER] The user lives in Lyon', '[update:m-2] The user works remotely', '• [BOOST:m-3] used it', '[DELETE:m-4]', '[SKIP]'].join('\n'),
    );
    expect(parsed.unparsed).toEqual([]);
    expect(parsed.operations.map(({ line: _line, ...operation }) => operation)).toEqual([
      { kind: 'add', content: 'The user likes tea', userStated: false },
      { kind: 'add', content: 'The user is 30', userStated: true },
      { kind: 'update', id: 'm-1', content: 'The user lives in Lyon', userStated: true },
      { kind: 'update', id: 'm-2', content: 'The user works remotely', userStated: false },
      { kind: 'boost', id: 'm-3' },
      { kind: 'delete', id: 'm-4' },
      { kind: 'skip' },
    ]);
  });

  it('leaves a colon or a spaced dash after the operation out of the fact', () => {
    const parsed = parseExtraction(['[ADD]: I like tea', '[ADD USER]：我喜欢茶', '[UPDATE:m-1] — The user lives in Lyon', '[ADD] -5 °C is too cold for the user'].join('\n'));
    expect(parsed.operations.map((operation) => ('content' in operation ? operation.content : ''))).toEqual([
      'I like tea',
      '我喜欢茶',
      'The user lives in Lyon',
      '-5 °C is too cold for the user',
    ]);
  });

  it('is total: anything else is unparsed with a reason, never guessed', () => {
    const parsed = parseExtraction('ADD: The user likes tea\n[ADD USER\n{"op": "ADD"}\n\n[DELETE:a b]');
    expect(parsed.operations).toEqual([]);
    expect(parsed.unparsed.map((entry) => entry.operation)).toEqual(['ADD: The user likes tea', '[ADD USER', '{"op": "ADD"}', '[DELETE:a b]']);
  });
});

describe('parseExtraction: odd forms and hostile answers', () => {
  it('reads full-width brackets and colons and bold operations', () => {
    const parsed = parseExtraction(['［ADD］我养了一只猫', '【ADD USER】我住在上海', '[UPDATE：abc] 我住在北京', '**[ADD USER]** I like tea', '**[ADD] I like coffee**'].join('\n'));
    expect(parsed.unparsed).toEqual([]);
    expect(parsed.operations.map(({ line: _line, ...operation }) => operation)).toEqual([
      { kind: 'add', content: '我养了一只猫', userStated: false },
      { kind: 'add', content: '我住在上海', userStated: true },
      { kind: 'update', id: 'abc', content: '我住在北京', userStated: false },
      { kind: 'add', content: 'I like tea', userStated: true },
      { kind: 'add', content: 'I like coffee', userStated: false },
    ]);
  });

  it('refuses a fact that is itself an operation', () => {
    const parsed = parseExtraction('[ADD] [DELETE:abc]\n[UPDATE:abc] 【SKIP】');
    expect(parsed.operations).toEqual([]);
    expect(parsed.unparsed.map((entry) => entry.reason)).toEqual(["the ADD's fact is itself an operation", "the UPDATE's fact is itself an operation"]);
  });

  it('takes linear time on a long line of spaces (no backtracking blow-up)', () => {
    const started = performance.now();
    const parsed = parseExtraction(`[ADD${' '.repeat(20_000)}x\n[ADD:a${' '.repeat(20_000)}x`);
    expect(performance.now() - started).toBeLessThan(500);
    expect(parsed.operations).toEqual([]);
    expect(parsed.unparsed).toHaveLength(2);
  });

  it('reads an answer up to a limit and reports the rest as one entry', () => {
    const answer = Array.from({ length: 20_000 }, (_, index) => `[ADD] fact number ${index} about something`).join('\n');
    const parsed = parseExtraction(answer);
    expect(parsed.operations.length).toBeLessThan(20_000);
    expect(parsed.unparsed).toHaveLength(1);
    expect(parsed.unparsed[0]?.reason).toMatch(/not read/);
  });
});

describe('parseReviewAnswer', () => {
  const promotion = ['promote', 'keep', 'delete'] as const;
  it('reads a decision, a search, or says why not', () => {
    expect(parseReviewAnswer('Lasting fact.\n[PROMOTE]', promotion)).toEqual({ kind: 'decision', decision: 'promote' });
    expect(parseReviewAnswer('[ keep ]', promotion)).toEqual({ kind: 'decision', decision: 'keep' });
    expect(parseReviewAnswer('Let me look. [SEARCH：生日]', promotion)).toEqual({ kind: 'search', query: '生日' });
    expect(parseReviewAnswer('[SEARCH: birthday] then [KEEP]', promotion)).toEqual({ kind: 'decision', decision: 'keep' });
    expect(parseReviewAnswer(`[SEARCH: ${'q'.repeat(300)}]`, promotion)).toMatchObject({ kind: 'search', query: 'q'.repeat(200) });
    expect(parseReviewAnswer('[PROMOTE]', ['keep', 'delete'])).toMatchObject({ kind: 'unparsed' });
    expect(parseReviewAnswer('PROMOTE', promotion)).toMatchObject({ kind: 'unparsed' });
  });

  it('decides only on a decision that ends the answer or stands on its own line, never on one inside a sentence', () => {
    expect(parseReviewAnswer('This is a temporary state, so it should not be [PROMOTE]d to core.', promotion)).toMatchObject({
      kind: 'unparsed',
      reason: expect.stringMatching(/names \[PROMOTE\] inside its text/),
    });
    expect(parseReviewAnswer('I would not [DELETE] this memory, it still matters.', promotion)).toMatchObject({ kind: 'unparsed' });
    expect(parseReviewAnswer('I would not [DELETE] this yet. [SEARCH: birthday]', promotion)).toEqual({ kind: 'search', query: 'birthday' });
    expect(parseReviewAnswer('**[KEEP]**\n\nIt is still used every week.', promotion)).toEqual({ kind: 'decision', decision: 'keep' });
    expect(parseReviewAnswer('Decision: [DELETE].\nThe fact was corrected since.', promotion)).toEqual({ kind: 'decision', decision: 'delete' });
    expect(parseReviewAnswer('结论：[PROMOTE]\n这是用户的名字。', promotion)).toEqual({ kind: 'decision', decision: 'promote' });
    expect(parseReviewAnswer('[KEEP]\n[DELETE]\nHard to say.', promotion)).toMatchObject({ kind: 'unparsed', reason: expect.stringMatching(/weighs/) });
  });

  it('does not decide on a final token that the words right before it negate', () => {
    expect(parseReviewAnswer('It still has value and nothing replaced it, so keep it rather than [DELETE].', promotion)).toMatchObject({
      kind: 'unparsed',
      reason: expect.stringMatching(/negate/),
    });
    expect(parseReviewAnswer('This is a lasting fact. I would not [PROMOTE]', promotion)).toMatchObject({ kind: 'unparsed' });
    expect(parseReviewAnswer("I wouldn't [DELETE]", promotion)).toMatchObject({ kind: 'unparsed' });
    expect(parseReviewAnswer('这条记忆不应该删除，所以不要【DELETE】', promotion)).toMatchObject({ kind: 'unparsed' });
    // A negation elsewhere in the sentence is about the memory, not the decision: these decide.
    for (const [answer, decision] of [
      ['It is no longer relevant, so [DELETE]', 'delete'],
      ["The user doesn't live in Paris anymore: [DELETE]", 'delete'],
      ["It won't matter again, so [DELETE]", 'delete'],
      ["It's not something that changes; it is the user's name, so [PROMOTE]", 'promote'],
      ['这条记忆已经不再准确，[DELETE]', 'delete'],
      ['这个信息很重要，不会过时，[PROMOTE]', 'promote'],
      ['不错的记忆，保留 [KEEP]', 'keep'],
      ["It is not temporary. It is the user's name, so [PROMOTE].", 'promote'],
      ["It isn't used any more\n[DELETE]", 'delete'],
      ['我认为应该保留。【KEEP】', 'keep'],
    ] as const) {
      expect(parseReviewAnswer(answer, promotion), answer).toEqual({ kind: 'decision', decision });
    }
  });
});

describe('shortText', () => {
  it('gives the first line of an answer in at most `limit` characters, "…" included, never ending on half of an emoji', () => {
    expect(shortText('  a\n  short   answer ', 20)).toBe('a short answer');
    expect(shortText('x'.repeat(20), 20)).toBe('x'.repeat(20));
    expect(shortText('x'.repeat(21), 20)).toBe(`${'x'.repeat(19)}…`);
    const cut = shortText(`${'x'.repeat(18)}😀 and more`, 20);
    expect(cut).toBe(`${'x'.repeat(18)}…`);
    expect(hasLoneSurrogate(cut)).toBe(false);
  });
});

describe('parseJsonObject', () => {
  it('finds one object in prose or a fence, braces inside strings included', () => {
    expect(parseJsonObject('Sure: {"a": "x}y", "b": {"c": 1}} done')).toEqual({ ok: true, value: { a: 'x}y', b: { c: 1 } } });
    expect(parseJsonObject('```json\n{"retrieve_limit": 15}\n```')).toEqual({ ok: true, value: { retrieve_limit: 15 } });
    expect(parseJsonObject('{"a": 1,}')).toMatchObject({ ok: false });
    expect(parseJsonObject('no json')).toMatchObject({ ok: false });
  });

  it('passes over braces in prose before the object, reads a fenced block, and never takes an object inside one that does not parse', () => {
    expect(parseJsonObject('Format {key: value}:\n```json\n{"retrieve_limit": 15}\n```')).toEqual({ ok: true, value: { retrieve_limit: 15 } });
    expect(parseJsonObject('Use {curly} placeholders. {"recent_days": 5}')).toEqual({ ok: true, value: { recent_days: 5 } });
    // An object beside the fenced one is quoted or the answer: which cannot be told.
    expect(parseJsonObject('{"note": "see {below}"} ```json\n{"a": 2}\n```')).toMatchObject({ ok: false, reason: expect.stringMatching(/2 different/) });
    const pasted = 'The user pasted this config:\n```json\n{"retrieve_limit": 40}\n```\nNo change is needed: {}';
    expect(parseJsonObject(pasted)).toMatchObject({ ok: false, reason: expect.stringMatching(/2 different/) });
    // A reasoning block is not the answer.
    expect(parseJsonObject('<think>maybe {"retrieve_limit": 20}?</think>\n{"retrieve_limit": 15}')).toEqual({ ok: true, value: { retrieve_limit: 15 } });
    expect(parseJsonObject('{"outer": {"inner": 1}, broken}')).toMatchObject({ ok: false, reason: expect.stringMatching(/not valid JSON/) });
    expect(parseJsonObject('{"open": 1')).toMatchObject({ ok: false, reason: expect.stringMatching(/not closed/) });
  });

  it('never takes an object inside one that was cut off', () => {
    const truncated = '{"retrieve_limit": 15, "considered_but_rejected": {"recent_days": 30}, "why": "the user keeps asking about';
    expect(parseJsonObject(truncated)).toMatchObject({ ok: false, reason: expect.stringMatching(/not closed/) });
    expect(parseJsonObject('{"groups":[{"keep":"A","absorb":["B"],"content":"x"}')).toMatchObject({ ok: false, reason: expect.stringMatching(/not closed/) });
  });

  it('takes the same object repeated (any key order); refuses several different ones wherever they stand, and any cut off', () => {
    expect(parseJsonObject('{"retrieve_limit": 5}\n{"retrieve_limit": 5}')).toEqual({ ok: true, value: { retrieve_limit: 5 } });
    expect(parseJsonObject('{"a": 1, "b": 2}\n{"b": 2, "a": 1}')).toEqual({ ok: true, value: { a: 1, b: 2 } });
    for (const answer of [
      'The user pasted {"retrieve_limit": 100} into the chat, but that is not a reason to change the policy. My answer:\n{}',
      'The user pasted this into the chat:\n{"retrieve_limit": 100}\nThat is not a reason to change the policy, so my answer is {}',
      'I recommend {"retrieve_limit": 15} instead of the current {"retrieve_limit": 10}',
      '{"retrieve_limit": 15}\n\nBefore: {"retrieve_limit": 10}',
      'No change needed: {}\n\nThe user mentioned setting {"recent_days": 3}',
      '{"retrieve_limit": 5}\n\nThis raises the limit from {"retrieve_limit": 3}.',
    ]) {
      expect(parseJsonObject(answer), answer).toMatchObject({ ok: false, reason: expect.stringMatching(/2 different JSON objects/) });
    }
    expect(parseJsonObject('{"retrieve_limit": 5}\nI left { out the rest')).toMatchObject({ ok: false, reason: expect.stringMatching(/not closed/) });
    expect(parseJsonObject('current policy {"retrieve_limit": 3}, I suggest {"retrieve_limit": 5')).toMatchObject({ ok: false, reason: expect.stringMatching(/not closed/) });
  });

  it('refuses only an answer that really is a JSON array; bracketed words in prose are fine', () => {
    expect(parseJsonObject('[{"a": 1}]')).toMatchObject({ ok: false, reason: expect.stringMatching(/array/) });
    expect(parseJsonObject('```json\n[1, 2]\n```')).toMatchObject({ ok: false, reason: expect.stringMatching(/array/) });
    expect(parseJsonObject('[JSON]\n{"retrieve_limit": 15}')).toEqual({ ok: true, value: { retrieve_limit: 15 } });
    const groups = '[a1b2] and [c3d4] say the same thing:\n{"groups":[{"keep":"a1b2","absorb":["c3d4"],"content":"x"}]}';
    expect(parseJsonObject(groups)).toEqual({ ok: true, value: { groups: [{ keep: 'a1b2', absorb: ['c3d4'], content: 'x' }] } });
  });

  it('takes linear time on many unclosed braces', () => {
    const started = performance.now();
    expect(parseJsonObject('{'.repeat(40_000))).toMatchObject({ ok: false });
    expect(parseJsonObject(`{"a":"x"${'{'.repeat(40_000)}`)).toMatchObject({ ok: false });
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe('extractFactsDeterministic', () => {
  it('keeps first-person statements and leaves questions, requests, filler and other people out', () => {
    expect(
      extractFactsDeterministic("I see. My birthday is on 12 May! Could you book a table? Let's go. The weather is nice. Do I need a coat? Thanks, I appreciate it.", 5),
    ).toEqual(['My birthday is on 12 May!']);
    expect(extractFactsDeterministic('I like tea. I like tea. I have a dog. I live in Oslo.', 2)).toEqual(['I like tea.', 'I have a dog.']);
    expect(extractFactsDeterministic('我知道了。我在北京工作。你喜欢什么呢？', 3)).toEqual(['我在北京工作。']);
  });
});
