import { describe, expect, it } from 'vitest';
import { extractFactsDeterministic, parseExtraction, parseJsonObject, parseReviewAnswer } from '../src/index.js';

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
});

describe('parseJsonObject', () => {
  it('finds one object in prose or a fence, braces inside strings included', () => {
    expect(parseJsonObject('Sure: {"a": "x}y", "b": {"c": 1}} done')).toEqual({ ok: true, value: { a: 'x}y', b: { c: 1 } } });
    expect(parseJsonObject('```json\n{"retrieve_limit": 15}\n```')).toEqual({ ok: true, value: { retrieve_limit: 15 } });
    expect(parseJsonObject('{"a": 1,}')).toMatchObject({ ok: false });
    expect(parseJsonObject('no json')).toMatchObject({ ok: false });
  });

  it('passes over braces in prose before the object, prefers a fenced block, and never takes an object inside one that does not parse', () => {
    expect(parseJsonObject('Format {key: value}:\n```json\n{"retrieve_limit": 15}\n```')).toEqual({ ok: true, value: { retrieve_limit: 15 } });
    expect(parseJsonObject('Use {curly} placeholders. {"recent_days": 5}')).toEqual({ ok: true, value: { recent_days: 5 } });
    expect(parseJsonObject('{"note": "see {below}"} ```json\n{"a": 2}\n```')).toEqual({ ok: true, value: { a: 2 } });
    expect(parseJsonObject('{"outer": {"inner": 1}, broken}')).toMatchObject({ ok: false, reason: expect.stringMatching(/not valid JSON/) });
    expect(parseJsonObject('{"open": 1')).toMatchObject({ ok: false, reason: expect.stringMatching(/not closed/) });
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
