import { CONTROL_OR_BIDI_SOURCE, controlCharacterAt, type MemoryRecord, type MemoryVersion } from '@memloom/core';
import { describe, expect, it } from 'vitest';
import type { CommandContext } from '../src/command.js';
import { memoriesText, memoryDetails, memoryLine, oneLine, searchLine, versionLines, withoutControls } from '../src/format.js';
import { clipToWidth, displayWidth } from '../src/text-width.js';

/** Just what the formatters read of a command's context: the terminal (or pipe) and the dim style. */
function terminal(isTTY: boolean, columns = 60): CommandContext {
  return { io: { stdout: { isTTY, columns, write: () => {} } }, dim: (text: string) => text, bold: (text: string) => text } as unknown as CommandContext;
}

const memory: MemoryRecord = {
  id: 'm1', content: 'Has an orange cat called Xiaoju', level: 'full', weight: 1, baseWeight: 1, importance: 1, baseImportance: 1,
  category: 'fact', type: 'user', scope: { userId: 'alice' }, createdAt: '2024-03-01T09:00:00.000Z', updatedAt: '2024-03-01T09:00:00.000Z',
  lastAccessedAt: '2024-03-01T09:00:00.000Z', source: 'user', verified: false, sources: [], tags: [], metadata: {}, revision: 1,
  context: 'Q: 你平时养宠物吗？\nA: yes, a cat, and I talk about her a lot, more than about anything else',
};

describe('a memory\'s context in the detailed view', () => {
  it('is shown on one labelled line after the content, cut to the terminal', () => {
    const lines = memoryDetails(terminal(true), memory);
    const line = lines.find((entry) => entry.startsWith('context '));
    expect(lines.indexOf(line!)).toBe(lines.findIndex((entry) => entry.startsWith('content ')) + 1);
    expect(line).toMatch(/^context {6}Q: 你平时养宠物吗？ ⏎ A: yes, a cat.*…$/);
    expect(displayWidth(line!)).toBeLessThanOrEqual(60);
  });

  it('is shown whole when the output is not a terminal', () => {
    const line = memoryDetails(terminal(false), memory).find((entry) => entry.startsWith('context '));
    expect(line).toBe('context      Q: 你平时养宠物吗？ ⏎ A: yes, a cat, and I talk about her a lot, more than about anything else');
  });

  it('has no line when the memory has no context, and is not in list lines', () => {
    const { context: _context, ...bare } = memory;
    expect(memoryDetails(terminal(false), bare).some((entry) => entry.startsWith('context'))).toBe(false);
    expect(memoryLine(terminal(false), memory)).not.toContain('宠物');
  });
});

describe('counts of memories', () => {
  it('say "memory" for one and "memories" otherwise', () => {
    expect([0, 1, 2].map(memoriesText)).toEqual(['0 memories', '1 memory', '2 memories']);
  });
});

describe('lines cut to a terminal with Chinese text and emoji', () => {
  const wide = { ...memory, content: '我住在上海，非常喜欢喝咖啡☕，每天早上都去楼下的咖啡店买一杯拿铁😀😀', scope: { userId: '用户' } };

  it('count a wide character or an emoji as two columns, and never cut an emoji in half', () => {
    const line = memoryLine(terminal(true, 80), wide);
    expect(displayWidth(line)).toBeLessThanOrEqual(80);
    expect(line).toMatch(/…$/);
    expect(line).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/); // no lone half of a pair
    const emoji = { ...memory, content: `Emoji test ${'😀'.repeat(40)}`, scope: {} };
    for (const columns of [88, 89]) {
      const cut = memoryLine(terminal(true, columns), emoji);
      expect(cut, String(columns)).toMatch(/^.*Emoji test (😀)+…$/u);
    }
  });

  it('measure text as a terminal shows it', () => {
    expect(displayWidth('abc')).toBe(3);
    expect(displayWidth('上海☕😀')).toBe(8);
    expect(displayWidth('é👍🏽🇵🇹')).toBe(5); // a letter with its accent, an emoji with its skin tone, a flag
    expect(clipToWidth('上海上海', 5)).toBe('上海…');
    expect(clipToWidth('上海', 4)).toBe('上海');
  });
});

describe('text a terminal shows narrower or wider than its characters', () => {
  it('counts a keycap emoji as two columns, a zero-width or format character as none', () => {
    expect(displayWidth('1️⃣')).toBe(2); // 1, U+FE0F, U+20E3
    expect(displayWidth('#️⃣ ok')).toBe(5);
    expect(displayWidth('a\u200Bb')).toBe(2); // zero-width space
    expect(displayWidth('co\u00ADop')).toBe(4); // soft hyphen
    expect(displayWidth('\u001b')).toBe(0);
    expect(clipToWidth('1️⃣2️⃣3️⃣', 5)).toBe('1️⃣2️⃣…');
  });

  it('shows stored text on one line with a tab as a space and no terminal escape sequence', () => {
    expect(oneLine('a\tb')).toBe('a b');
    expect(oneLine('\u001b[31mred\u001b[0m and \u001b]0;new title\u0007plain\u0007\rline')).toBe('red and plain ⏎ line');
    expect(oneLine('one\r\ntwo')).toBe('one ⏎ two');
    const line = memoryLine(terminal(true, 80), { ...memory, content: `\u001b[2J\u001b[H${'tab\t'.repeat(30)}`, scope: {} });
    expect(line).not.toMatch(/[\u0000-\u001f]/);
    expect(displayWidth(line)).toBeLessThanOrEqual(80);
    expect(line).toMatch(/ tab tab .*…$/);
    const details = memoryDetails(terminal(false), { ...memory, content: 'first\u001b[31m line\nsecond\tline' });
    expect(details.find((entry) => entry.startsWith('content '))).toBe('content      first line\n             second line');
  });
});

describe('stored strings that could drive the terminal', () => {
  // U+202E shows what follows right to left; U+2066..U+2069 isolate, U+200E/U+200F mark; U+009B is a one-byte CSI.
  const bidi = '\u202Egnp.exe\u202C \u2066iso\u2069 \u200Emark\u200F \u061Calm';

  it('has no bidi control left in a line (it would reorder what the line shows after it), and keeps a zero-width joiner', () => {
    expect(oneLine(bidi)).toBe('gnp.exe iso mark alm');
    expect(oneLine('family 👨\u200D👩\u200D👧')).toBe('family 👨\u200D👩\u200D👧');
    const line = memoryLine(terminal(false), { ...memory, content: `${bidi} end`, scope: { userId: 'al\u202Eice', agentId: 'a\u009b31mb' } });
    expect(line).not.toMatch(/[\u009b\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u);
    expect(line).toContain('user:alice agent:ab  gnp.exe');
  });

  it("removes exactly core's control and bidi characters (one set, exported by core), but a line break and a tab", () => {
    // Before: the CLI kept its own copy of the set, and core exported none.
    expect(typeof CONTROL_OR_BIDI_SOURCE).toBe('string');
    const differ: string[] = [];
    for (let code = 0; code <= 0xffff; code++) {
      if (code >= 0xd800 && code <= 0xdfff) continue; // lone surrogates are not characters
      const character = String.fromCharCode(code);
      if (character === '\n' || character === '\t' || character === '\u001b' || character === '\u009b') continue; // kept, a space, escape sequences
      const removed = withoutControls(`a${character}b`) === 'ab';
      if (removed !== (controlCharacterAt(character) !== undefined)) differ.push(`U+${code.toString(16).toUpperCase().padStart(4, '0')}`);
    }
    expect(differ).toEqual([]);
    expect(withoutControls('a\nb\tc\u001bd')).toBe('a\nb c');
  });

  it('shows tags, sources, metadata, the id and the scope in "show" as stored text: no escape sequence, line break or bidi control', () => {
    const details = memoryDetails(terminal(false), {
      ...memory,
      id: 'm1\u001b]0;owned\u0007',
      scope: { userId: 'bob\u202E' },
      tags: ['\u001b[2J\u001b[Hcleared', 'two\nlines', 'rtl\u202Etag'],
      sources: ['D1:\u001b[31m2'],
      metadata: { note: 'x\u009b2Jy\u2067' },
    });
    const field = (name: string) => details.find((entry) => entry.startsWith(`${name} `));
    expect(field('id')).toBe('id           m1');
    expect(field('scope')).toBe('scope        user bob');
    expect(field('tags')).toBe('tags         cleared, two ⏎ lines, rtltag');
    expect(field('sources')).toBe('sources      D1:2');
    expect(field('metadata')).toBe('metadata     {"note":"xy"}');
    for (const entry of details) expect(entry, entry).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u);
  });

  it('shows the reason of a version (a restore\'s --reason, an imported history) as stored text', () => {
    const version: MemoryVersion = {
      memoryId: 'm1', version: 2, at: '2024-03-02T09:00:00.000Z', trigger: 'user_mention', action: 'restore', reason: 'undo\u001b[2K\nthe \u202Emerge', before: memory, after: memory,
    };
    expect(versionLines(terminal(false), version)[0]).toBe('v2  2024-03-02T09:00:00.000Z  user_mention/restore: undo ⏎ the merge');
  });
});

describe('a search result\'s score parts', () => {
  it('name the date part only when the query named a period', () => {
    const parts = { semantic: 0.5, text: 1, weight: 1, recency: 0.25 };
    const partsLine = (date?: number) => searchLine(terminal(false), { memory, score: 0.7, parts: { ...parts, ...(date === undefined ? {} : { date }) } }, 1)[1];
    expect(partsLine()).toBe('    fact, full, updated 2024-03-01; semantic 0.50, text 1.00, weight 1.00, recency 0.25');
    expect(partsLine(1)).toBe('    fact, full, updated 2024-03-01; semantic 0.50, text 1.00, weight 1.00, recency 0.25, date 1.00');
  });
});
