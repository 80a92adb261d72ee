import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { summarizedEpisodeIds, summaryMessage, toConversation } from '../src/conversation.js';
import { textsAtPath } from '../src/json-path.js';
import { latestUserInput } from '../src/messages.js';

describe('textsAtPath (LangGraph index fields)', () => {
  const value = { title: 'Trip', tags: ['oslo', 'winter'], stops: [{ city: 'Oslo' }, { city: 'Bergen' }], days: 4, meta: { ok: true } };
  it.each([
    ['$', [JSON.stringify(value)]],
    ['title', ['Trip']],
    ['tags[*]', ['oslo', 'winter']],
    ['stops[*].city', ['Oslo', 'Bergen']],
    ['stops[-1].city', ['Bergen']],
    ['stops[0]', ['{"city":"Oslo"}']],
    ['days', ['4']],
    ['meta.ok', ['true']],
    ['missing.field', []],
    ['tags[7]', []],
  ])('%s', (path, expected) => {
    expect(textsAtPath(value, path)).toEqual(expected);
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
