import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { userStatements } from '../src/after-turn.js';
import { textsAtPath } from '../src/json-path.js';
import { latestUserInput, safeCutoff } from '../src/messages.js';
import { summaryMessage } from '../src/summary.js';

describe('userStatements (the deterministic after-turn path)', () => {
  it.each([
    ['Hi! I live in Lisbon and work as a nurse. What is the weather like?', ['I live in Lisbon and work as a nurse.']],
    ['Please remember that my sister is called Ana.', ['my sister is called Ana.']],
    ['Remember: I am allergic to peanuts', ['I am allergic to peanuts']],
    ['Can you book a table? Tell me a joke.', []],
    ['Thanks a lot!', []],
    ['The sky is blue.', []],
    ['Do I like tea', []],
    ['我养了一只猫。你喜欢猫吗？', ['我养了一只猫。']],
    ['请记住：我每天早上跑步。', ['我每天早上跑步。']],
    ['I like tea. I like tea.', ['I like tea.']],
  ])('%s', (text, expected) => {
    expect(userStatements(text)).toEqual(expected);
  });
});

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

describe('where a conversation is cut for a summary', () => {
  const call = new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'search', args: {}, type: 'tool_call' }] });
  const result = new ToolMessage({ content: 'found', tool_call_id: 'c1' });

  it('keeps the last messages, but never cuts into the current turn or between a tool call and its result', () => {
    const history = [new HumanMessage('a'), call, result, new AIMessage('b'), new HumanMessage('c'), new AIMessage('d')];
    expect(safeCutoff(history, 4)).toBe(1); // 6 - 4 = 2 is the tool result: moved back to its call
    expect(safeCutoff(history, 3)).toBe(3);
    const turns = [new HumanMessage('a'), new AIMessage('b'), new HumanMessage('c'), new AIMessage('d'), new HumanMessage('e'), call, result];
    expect(safeCutoff(turns, 1)).toBe(4); // the current turn (from "e") stays whole
    expect(safeCutoff([new HumanMessage('a')], 4)).toBe(0);
  });

  it('finds the user’s latest input, skipping the summary that stands for older messages', () => {
    const messages = [summaryMessage('earlier'), new HumanMessage('one'), new HumanMessage('two'), new AIMessage('reply')];
    expect(latestUserInput(messages).map((message) => message.content)).toEqual(['one', 'two']);
    expect(latestUserInput([summaryMessage('earlier'), new AIMessage('reply')])).toEqual([]);
  });
});
