import { describe, expect, it } from 'vitest';
import { createMemory, MemloomError, recentNotes } from '../src/index.js';
import { axisVector, createFakeClock, createInMemoryStore, createTestEmbedder } from '../src/testing/index.js';

const HOUR = 3_600_000;
const scope = { userId: 'u' };

/** The query and every job fact on one axis, the note on another: the facts always outrank the note. */
function embedder() {
  const vectors: Record<string, number[]> = { 'what is my job?': axisVector(16, 0), [NOTE]: axisVector(16, 1) };
  for (const fact of JOB_FACTS) vectors[fact] = axisVector(16, 0);
  return createTestEmbedder({ dimension: 16, vectors });
}

function rig() {
  const clock = createFakeClock('2024-03-02T09:00:00.000Z');
  const memory = createMemory({ store: createInMemoryStore(), embedder: embedder(), clock });
  return { memory, clock };
}

const JOB_FACTS = [
  'I work as a nurse in Lisbon',
  'my job is hard',
  'I like my job',
  'my job starts at 7',
  'my boss at work is kind',
  'I got a raise at work',
  'work is busy this month',
  'my job pays well',
  'I changed jobs in 2020',
  'my colleague Tom helps at work',
  'I want a new job',
  'job interviews scare me',
  'I commute to work by tram',
];

const NOTE = '今天和Anna讨论了京都旅行计划';

describe('seed 001: the daily notes of the last recent_days days', () => {
  it('renderContext(query) gives the top results plus today’s note, however many memories outrank it', async () => {
    const { memory, clock } = rig();
    for (const fact of JOB_FACTS) await memory.add(fact, { scope, merge: false });
    await memory.add(NOTE, { scope, category: 'episode' });
    clock.advance(HOUR);
    const context = await memory.renderContext('what is my job?', { scope });
    const lines = context.split('\n').filter((line) => line.startsWith('- '));
    expect(lines).toHaveLength(11); // retrieve_limit (10) results, then the note
    expect(lines.at(-1)).toBe(`- [2024-03-02] (episode) ${NOTE}`);
    expect(await memory.renderContext('what is my job?', { scope, recentDays: 0 })).not.toContain('京都');
  });

  it('renderContext shows each note cut as an index line is (200 characters): the notes are not in the limit', async () => {
    const { memory, clock } = rig();
    await memory.add(JOB_FACTS[0] as string, { scope });
    for (let day = 0; day < 3; day++) await memory.add(`旅行日记第${day}天：${'今天走了很多路。'.repeat(200)}`, { scope, category: 'episode', merge: false });
    clock.advance(HOUR);
    const lines = (await memory.renderContext('what is my job?', { scope, limit: 1 })).split('\n').filter((line) => line.startsWith('- '));
    expect(lines).toHaveLength(4);
    for (const line of lines.slice(1)) {
      const text = line.replace('- [2024-03-02] (episode) ', '');
      expect(Array.from(text)).toHaveLength(200);
      expect(text.endsWith('…')).toBe(true);
    }
  });

  it("renderContext's recentDays defaults to the memory's policy.recent_days", async () => {
    const clock = createFakeClock('2024-03-02T09:00:00.000Z');
    const memory = createMemory({ store: createInMemoryStore(), embedder: embedder(), clock, policy: { recent_days: 1, retrieve_limit: 1 } });
    await memory.add('I work as a nurse in Lisbon', { scope });
    await memory.add(NOTE, { scope, category: 'episode' });
    clock.advance(HOUR);
    expect(await memory.renderContext('what is my job?', { scope })).toContain('京都');
    // One result (the job); a day later the note is not of the last 1 day, but it is of the last 2.
    clock.advance(24 * HOUR);
    expect(await memory.renderContext('what is my job?', { scope })).not.toContain('京都');
    expect(await memory.renderContext('what is my job?', { scope, recentDays: 2 })).toContain('京都');
  });

  it('takes today and the days before it up to recent_days, newest first, each note once', async () => {
    const { memory, clock } = rig();
    await memory.add('Booked the ferry to Bergen', { scope, category: 'episode' }); // 2024-03-02
    clock.advanceDays(1);
    await memory.add('The cabin has no wifi', { scope, category: 'episode' }); // 2024-03-03
    clock.advanceDays(1);
    await memory.add('Alice hikes every summer', { scope });
    clock.advance(14 * HOUR); // 2024-03-04 23:00
    const notes = (days: number) => recentNotes(memory, { scope, days }).then((records) => records.map((record) => record.content));
    expect(await notes(3)).toEqual(['The cabin has no wifi', 'Booked the ferry to Bergen']);
    expect(await notes(2)).toEqual(['The cabin has no wifi']);
    expect(await notes(1)).toEqual([]);
    expect(await recentNotes(memory, { scope, days: 3, limit: 1 })).toHaveLength(1);
    // A note the search found already is not repeated after the results.
    const context = await memory.renderContext('cabin wifi', { scope, limit: 1 });
    expect(context.match(/The cabin has no wifi/g)).toHaveLength(1);
    expect(context.indexOf('The cabin has no wifi')).toBeLessThan(context.indexOf('Booked the ferry'));
  });

  it('keeps to the filter and the scope given, and refuses a bad number of days', async () => {
    const { memory } = rig();
    await memory.add('Met Anna for lunch', { scope, category: 'episode', tags: ['daily-note'] });
    await memory.add('Talked about the budget', { scope, category: 'episode' });
    await memory.add('Bob went to Oslo', { scope: { userId: 'bob' }, category: 'episode' });
    const contents = (records: Array<{ content: string }>) => records.map((record) => record.content).sort();
    expect(contents(await recentNotes(memory, { scope, days: 3 }))).toEqual(['Met Anna for lunch', 'Talked about the budget']);
    expect(contents(await recentNotes(memory, { scope, days: 3, filter: { tags: ['daily-note'] } }))).toEqual(['Met Anna for lunch']);
    expect(await recentNotes(memory, { scope, days: 3, filter: { category: ['fact', 'core'] } })).toEqual([]);
    expect(await memory.renderContext('Anna', { scope, filter: { category: 'fact' } })).toBe('');
    for (const days of [-1, 1.5, 91]) {
      const error = await recentNotes(memory, { scope, days }).catch((caught: unknown) => caught);
      expect(MemloomError.isInstance(error) && error.code, String(days)).toBe('INVALID_OPTIONS');
    }
    const bad = await memory.renderContext('Anna', { scope, recentDays: -1 }).catch((caught: unknown) => caught);
    expect(MemloomError.isInstance(bad) && bad.code).toBe('INVALID_OPTIONS');
  });

  it('refuses a limit that is not a whole number above 0, even when no note would be read (0 days, no episodes asked for)', async () => {
    const { memory } = rig();
    await memory.add('Met Anna for lunch', { scope, category: 'episode' });
    const cases = [
      { days: 3, limit: 0 },
      { days: 0, limit: 0 },
      { days: 3, limit: 0, filter: { category: 'fact' as const } },
      { days: 0, limit: -1 },
      { days: 0, limit: 1.5 },
    ];
    for (const options of cases) {
      const error = await recentNotes(memory, { scope, ...options }).catch((caught: unknown) => caught);
      expect(MemloomError.isInstance(error) && error.code, JSON.stringify(options)).toBe('INVALID_OPTIONS');
    }
  });
});
