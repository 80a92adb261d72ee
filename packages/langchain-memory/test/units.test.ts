import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import { createRequire } from 'node:module';
import { MemloomError } from '@memloom/core';
import { describe, expect, it } from 'vitest';
import { memloomErrorOf } from '../src/errors.js';
import { summarizedEpisodeIds, summaryMessage, toConversation } from '../src/conversation.js';
import { textsAtPath, tokenizePath } from '../src/json-path.js';
import { latestUserInput } from '../src/messages.js';

/** The path reading of LangGraph's own stores (store/utils of @langchain/langgraph-checkpoint, which its package exports do not expose). */
function langGraphPaths(): { getTextAtPath: (value: unknown, path: string) => string[]; tokenizePath: (path: string) => string[] } {
  const langgraph = createRequire(import.meta.url).resolve('@langchain/langgraph');
  const checkpoint = createRequire(langgraph).resolve('@langchain/langgraph-checkpoint');
  return createRequire(checkpoint)('./store/utils.cjs');
}

describe('textsAtPath (LangGraph index fields)', () => {
  const value = { title: 'Trip', tags: ['oslo', 'winter'], stops: [{ city: 'Oslo' }, { city: 'Bergen' }], days: 4, meta: { ok: true } };
  it.each([
    ['$', [JSON.stringify(value, null, 2)]],
    ['title', ['Trip']],
    ['tags[*]', ['oslo', 'winter']],
    ['stops[*].city', ['Oslo', 'Bergen']],
    ['stops[-1].city', ['Bergen']],
    ['stops[0]', [JSON.stringify({ city: 'Oslo' }, null, 2)]],
    ['days', ['4']],
    ['meta.ok', ['true']],
    ['{title,days}', ['Trip', '4']],
    ['meta.*', ['true']],
    ['stops[*].{city}', ['Oslo', 'Bergen']],
    ['missing.field', []],
    ['tags[7]', []],
  ])('%s', (path, expected) => {
    expect(textsAtPath(value, path)).toEqual(expected);
  });

  it('gives the same texts, in the same order, as LangGraph’s getTextAtPath', () => {
    const langgraph = langGraphPaths();
    const values: Record<string, unknown>[] = [
      value,
      { title: 'Notes', body: { a: 'first', b: 'second', n: 3, none: null, empty: '' }, list: [{ t: 'x', k: [1, 2] }, { t: 'y' }, 'bare'] },
      { items: [], nested: { deep: { deeper: ['p', { q: 'r' }] } }, 'odd key': 'spaced', flag: false, zero: 0 },
      { matrix: [[1, 2], [3, [4, 5]]], tags: ['a', 'b', 'c'], body: 'plain text', meta: null },
    ];
    const paths = [
      '', '$', '$.title', 'title', 'body', 'body.a', 'body.*', 'body.{a,b}', '{title,body}', '{title, body.a, missing}', '{body.none,body.empty}',
      '*', '*.a', 'list[0]', 'list[-1]', 'list[*]', 'list[*].t', 'list[*].k[*]', 'list[1].t', 'list[9]', 'list[x]', 'list.0.t', 'list.length',
      'tags[*]', 'tags[-2]', 'tags.*', 'matrix[*][*]', 'matrix[1][1][0]', 'matrix[-1][-1]', 'nested.deep.deeper[*]', 'nested.*.deeper[1].q',
      'nested.{deep.deeper}', 'list[*].{t,k}', '{list[0]}', '{title,body}.a', 'items[*]', 'items', 'odd key', 'flag', 'zero', 'meta', 'meta.x',
    ];
    for (const each of values) {
      for (const path of paths) {
        expect([path, textsAtPath(each, path)]).toEqual([path, langgraph.getTextAtPath(each, path)]);
      }
    }
    for (const path of paths) expect(tokenizePath(path)).toEqual(langgraph.tokenizePath(path));
  });
});

describe('conversations for core’s pipeline', () => {
  it('maps each kind of message to a role, with the tools an assistant called', () => {
    const call = new AIMessage({ content: 'Let me look.', id: 'a1', tool_calls: [{ id: 'c1', name: 'search', args: {}, type: 'tool_call' }] });
    const conversation = toConversation([
      summaryMessage('Summary of the earlier conversation: Oslo.', 'memloom-summary:e1'),
      new SystemMessage('Be brief.'),
      new HumanMessage({ content: 'Find flights', id: 'h1' }),
      call,
      new ToolMessage({ content: 'two flights', tool_call_id: 'c1', name: 'search', id: 't1' }),
      new AIMessage({ content: 'Two flights.', id: 'x'.repeat(600) }),
    ]);
    expect(conversation).toEqual([
      { role: 'system', content: 'Summary of the earlier conversation: Oslo.', id: 'memloom-summary:e1' },
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Find flights', id: 'h1' },
      { role: 'assistant', content: 'Let me look. [called search]', id: 'a1' },
      { role: 'tool', content: 'two flights', id: 't1' },
      { role: 'assistant', content: 'Two flights.' },
    ]);
  });

  it('finds the user’s latest input, skipping the summary that stands for older messages', () => {
    const messages = [summaryMessage('earlier'), new HumanMessage('one'), new HumanMessage('two'), new AIMessage('reply')];
    expect(latestUserInput(messages).map((message) => message.content)).toEqual(['one', 'two']);
    expect(latestUserInput([summaryMessage('earlier'), new AIMessage('reply')])).toEqual([]);
    expect([...summarizedEpisodeIds([summaryMessage('s', 'memloom-summary:e7'), summaryMessage('t', 'other'), new HumanMessage({ content: 'x', id: 'memloom-summary:e8' })])]).toEqual(['e7']);
  });
});

describe('memloomErrorOf', () => {
  it('finds the MemloomError itself or along the cause chain, and nothing elsewhere', () => {
    const ours = new MemloomError({ code: 'NOT_FOUND', backend: 'langchain', message: 'gone' });
    expect(memloomErrorOf(ours)).toBe(ours);
    expect(memloomErrorOf(new Error('wrapped', { cause: new Error('again', { cause: ours }) }))).toBe(ours);
    const looped: Error & { cause?: unknown } = new Error('loop');
    looped.cause = looped;
    expect(memloomErrorOf(looped)).toBeUndefined();
    expect(memloomErrorOf('text')).toBeUndefined();
    expect(memloomErrorOf(undefined)).toBeUndefined();
  });
});
