import { beforeAll, describe, expect, it } from 'vitest';
import { decisions, found, markdownBlocks, memories, merged, report, runDemo, section, type DemoRun } from './demo-output.js';

// The README's first command (`sh scripts/dev.sh demo`) runs the built demo: seed 004's story on a
// simulated clock, then one application on two backends chosen by configuration. Offline: the
// test embedder in part 1, the bundled offline embedder in part 2.

let run: DemoRun;
beforeAll(async () => {
  run = await runDemo();
});

describe('the demo (node dist/main.js)', () => {
  it('ends with exit code 0 and writes nothing to stderr', () => {
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
  });
});

describe("part 1: seed 004's story on the in-memory store", () => {
  const day = (heading: string) => section(run.stdout, heading);

  it('day 1: three independent new memories', () => {
    expect(decisions(day('Day 1 ('))).toEqual([
      { said: '我叫张三，是一名AI工程师，目前在北京工作', strategy: 'create_new', similarity: 0 },
      { said: '我喜欢喝咖啡，每天早上一杯拿铁', strategy: 'create_new', similarity: 0 },
      { said: '我养了一只橘猫，名字叫小橘', strategy: 'create_new', similarity: 0 },
    ]);
  });

  it('day 10: all three compressed to summaries, their timestamps kept', () => {
    expect(report(day('Day 10 ('))).toMatchObject({ compressed: 3, deleted: 0 });
    const listed = memories(day('Day 10 ('));
    expect(listed).toHaveLength(3);
    for (const memory of listed) expect(memory).toMatchObject({ level: 'summary', updated: '2024-01-01' });
    expect(listed.find((memory) => memory.content.startsWith('我叫张三'))?.content.length).toBeLessThan('我叫张三，是一名AI工程师，目前在北京工作'.length);
  });

  it('day 15: the engineer mention merges into the summary, with the text the summary hid, back to full', () => {
    const text = day('Day 15 (');
    expect(decisions(text)).toEqual([{ said: '我是AI工程师张三', strategy: 'merge_update', similarity: 0.96 }]);
    expect(merged(text)).toEqual({ level: 'full', content: '我是AI工程师张三。目前在北京工作' });
  });

  it('day 40: compression goes on by age since the last update (the merge refreshed the engineer memory)', () => {
    const listed = memories(day('Day 40 ('));
    expect(listed.filter((memory) => memory.updated === '2024-01-01').map((memory) => memory.level)).toEqual(['tag', 'tag']);
    expect(listed.filter((memory) => memory.updated === '2024-01-15')).toMatchObject([{ level: 'summary' }]);
    expect(listed.find((memory) => memory.updated === '2024-01-15')?.content).toMatch(/^我是AI工程师张三/);
  });

  it('day 45: the changed coffee habit keeps both tracks', () => {
    expect(decisions(day('Day 45 ('))).toEqual([{ said: '我现在更喜欢喝茶了，偶尔喝咖啡', strategy: 'keep_both', similarity: 0.7 }]);
    // Both tracks are still there later: the old coffee memory from day 1 and the new tea memory from day 45.
    const later = memories(day('Day 100 ('));
    expect(later.find((memory) => memory.updated === '2024-02-14')?.content).toContain('喝茶');
    expect(later.filter((memory) => memory.updated === '2024-01-01').map((memory) => memory.content)).toContainEqual(expect.stringContaining('咖啡'));
  });

  it('day 100: the day-1 memories fade to traces and their weights decay further', () => {
    expect(report(day('Day 100 ('))).toMatchObject({ compressed: 4, deleted: 0 });
    const before = memories(day('Day 40 (')).filter((memory) => memory.updated === '2024-01-01');
    const after = memories(day('Day 100 ('));
    const traces = after.filter((memory) => memory.updated === '2024-01-01');
    expect(traces.map((memory) => memory.level)).toEqual(['trace', 'trace']);
    for (const trace of traces) expect(trace.weight).toBeLessThan(Math.min(...before.map((memory) => memory.weight)));
    expect(after.filter((memory) => memory.updated !== '2024-01-01').map((memory) => memory.level)).toEqual(['tag', 'tag']);
  });

  it('day 105: a new topic is a new full memory beside the faded ones', () => {
    expect(decisions(day('Day 105 ('))).toMatchObject([{ said: '我下周要去东京出差', strategy: 'create_new' }]);
    const now = memories(day('Day 105:'));
    expect(now).toHaveLength(5);
    expect(now).toContainEqual(expect.objectContaining({ level: 'full', updated: '2024-04-14', content: '我下周要去东京出差' }));
  });

  it("keeps the merge in the engineer memory's history", () => {
    expect(day('History of')).toMatch(/ 2024-01-15 user_mention\/merge: 我是AI工程师张三。目前在北京工作$/m);
  });

  it("alice's memories are her own and her search finds her sister's line", () => {
    const text = day('Another user');
    expect(decisions(text).map((decision) => decision.strategy)).toEqual(['create_new', 'create_new']);
    expect(found(text, 'where does my sister live?')).toBe('My sister Emma lives in Lisbon');
  });
});

describe('part 2: one application on two backends chosen by configuration', () => {
  const runs = [
    { backend: 'sqlite', heading: '$ node configured.js   # no configuration at all', chosenBy: /\(store from default\b/ },
    { backend: 'markdown', heading: '$ node configured.js   # MEMLOOM_STORE=markdown:', chosenBy: /\(store from .*MEMLOOM_STORE\b/ },
  ];

  it.each(runs)('runs on $backend, chosen by its configuration, with the same decisions', ({ backend, heading, chosenBy }) => {
    const text = section(run.stdout, heading);
    const backendLine = text.split('\n').find((line) => line.startsWith('backend: '));
    expect(backendLine).toMatch(new RegExp(`^backend: ${backend} `));
    expect(backendLine).toMatch(chosenBy);
    const decided = decisions(text);
    expect(decided.map((decision) => decision.said)).toEqual([
      'I live in Lisbon and work as a nurse',
      'My sister Emma lives in Porto',
      'I live in Lisbon and I work as a nurse',
      'Yes, every week since March',
    ]);
    expect(decided[0]?.strategy).toBe('create_new');
    expect(decided[1]?.strategy).not.toBe('merge_update');
    expect(decided[2]?.strategy).toBe('merge_update');
    expect(merged(text)).toEqual({ level: 'full', content: 'I live in Lisbon and I work as a nurse' });
    expect(found(text, 'where does my sister live?')).toBe('My sister Emma lives in Porto');
    expect(found(text, 'pottery')).toBe('Yes, every week since March');
    expect(text).toMatch(/^ {2}3 memories for alice$/m);
  });

  it("leaves alice's three memories in a MEMORY.md on disk after the Markdown run", () => {
    const blocks = markdownBlocks(section(run.stdout, 'What the Markdown run'));
    expect(blocks.map((block) => block.content)).toEqual(['I live in Lisbon and I work as a nurse', 'My sister Emma lives in Porto', 'Yes, every week since March']);
    expect(blocks[0]?.meta).toMatchObject({ level: 'full', revision: 2 });
    expect(blocks[2]?.meta).toMatchObject({ context: 'Do you still go to the pottery class on Thursdays?' });
  });
});
