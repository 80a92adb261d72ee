import { describe, expect, it } from 'vitest';
import { createMemory, type MemoryRecord } from '../src/index.js';
import { axisVector, createFakeClock, createInMemoryStore, createTestEmbedder, vectorWithSimilarity } from '../src/testing/index.js';

/**
 * Seed 004's integration scenario, day 1 to day 105, on a fake clock.
 * Similarities are chosen through the test embedder's vectors.
 */
describe('seed 004 scenario: compression and activation over 105 days', () => {
  const DIM = 16;
  const job = '我叫张三，是一名AI工程师，目前在北京工作';
  const coffee = '我喜欢喝咖啡，每天早上一杯拿铁';
  const cat = '我养了一只橘猫，名字叫小橘';
  const jobMention = '我是AI工程师张三';
  // The mention merged into the text day 10's compression hid: the clause about Beijing stays.
  const mergedJob = '我是AI工程师张三。目前在北京工作';
  const coffeeMention = '我现在更喜欢喝茶了，偶尔喝咖啡';
  const newTopic = '我下周要去东京出差';

  const embedder = createTestEmbedder({
    dimension: DIM,
    vectors: {
      [job]: axisVector(DIM, 0),
      [coffee]: axisVector(DIM, 1),
      [cat]: axisVector(DIM, 2),
      [jobMention]: vectorWithSimilarity(DIM, 0, 5, 0.96),
      [mergedJob]: vectorWithSimilarity(DIM, 0, 5, 0.96),
      [coffeeMention]: vectorWithSimilarity(DIM, 1, 6, 0.7),
      // cos with the merged job memory (0.96 on axis 0) = 0.96 × 0.2 = 0.192
      [newTopic]: vectorWithSimilarity(DIM, 0, 7, 0.2),
    },
  });
  const clock = createFakeClock('2024-01-01T10:00:00.000Z');
  const memory = createMemory({ store: createInMemoryStore(), embedder, clock });
  const scope = { userId: 'zhangsan' };
  const day = (n: number) => new Date(Date.parse('2024-01-01T10:00:00.000Z') + (n - 1) * 86_400_000).toISOString();
  const ids: Record<string, string> = {};
  const get = async (name: string): Promise<MemoryRecord> => (await memory.get(ids[name]!))!;
  // Boosts start from the weight the decay formula gives at the mention, not the one the last pass
  // stored: at day 15 the job memory is 14 days old (1 / 1.14), though day 10's pass stored 1 / 1.09.
  const mergedAt15 = 1 / 1.14 + (1 - 1 / 1.14) * 0.6;
  // At day 45 the coffee memory is 44 days old (1 / 1.44); day 40's pass stored 1 / 1.39.
  const boostedAt45 = 1 / 1.44 + (1 - 1 / 1.44) * 0.3;

  it('day 1: creates three independent full memories', async () => {
    ids.job = (await memory.add(job, { scope })).memory.id;
    ids.coffee = (await memory.add(coffee, { scope })).memory.id;
    const third = await memory.add(cat, { scope });
    ids.cat = third.memory.id;
    expect(third.decision.strategy).toBe('create_new');
    for (const name of ['job', 'coffee', 'cat']) {
      const record = await get(name);
      expect(record).toMatchObject({ level: 'full', weight: 1, updatedAt: day(1) });
    }
  });

  it('day 10: compresses everything to summary and keeps the timestamps', async () => {
    clock.set(day(10));
    const report = await memory.maintain();
    expect(report.compressed).toBe(3);
    const record = await get('job');
    expect(record.level).toBe('summary');
    expect(record.content).toBe('我叫张三，是一名AI工程师…');
    expect(record.updatedAt).toBe(day(1));
    expect(record.weight).toBeCloseTo(1 / 1.09, 5);
    expect((await get('coffee')).level).toBe('summary');
    // The full text is still in the history.
    const history = await memory.history(ids.job!);
    expect(history[0]?.after.content).toBe(job);
    expect(history[1]).toMatchObject({ trigger: 'passive_decay', action: 'compress' });
  });

  it('day 15: the engineer mention merges, refreshes the timestamp and upgrades summary -> full', async () => {
    clock.set(day(15));
    const result = await memory.add(jobMention, { scope });
    expect(result.decision).toMatchObject({
      strategy: 'merge_update',
      shouldRefreshTimestamp: true,
      shouldUpgradeLevel: true,
      nearestId: ids.job,
    });
    expect(result.decision.similarity).toBeCloseTo(0.96, 5);
    const record = await get('job');
    expect(record.level).toBe('full');
    expect(record.updatedAt).toBe(day(15));
    expect(record.content).toBe(mergedJob);
    expect(record.weight).toBeCloseTo(mergedAt15, 5);
    expect(await memory.count({ scope })).toBe(3);
  });

  it('day 40: compresses again by age since each memory was last updated', async () => {
    clock.set(day(40));
    await memory.maintain();
    const jobRecord = await get('job');
    expect(jobRecord.level).toBe('summary'); // 25 days since day 15
    expect(jobRecord.updatedAt).toBe(day(15));
    expect(jobRecord.weight).toBeCloseTo(mergedAt15 / 1.25, 5);
    const coffeeRecord = await get('coffee');
    expect(coffeeRecord.level).toBe('tag'); // 39 days since day 1
    expect(coffeeRecord.updatedAt).toBe(day(1));
    expect(coffeeRecord.weight).toBeCloseTo(1 / 1.39, 5);
    expect(coffeeRecord.content.startsWith('#')).toBe(true);
  });

  it('day 45: the coffee mention keeps both; the old memory keeps content, level and timestamp', async () => {
    clock.set(day(45));
    const before = await get('coffee');
    const result = await memory.add(coffeeMention, { scope });
    expect(result.decision.strategy).toBe('keep_both');
    expect(result.decision.shouldRefreshTimestamp).toBe(false);
    expect(result.decision.similarity).toBeCloseTo(0.7, 5);
    ids.tea = result.memory.id;
    expect(result.memory).toMatchObject({ level: 'full', weight: 1, updatedAt: day(45), content: coffeeMention });
    const after = await get('coffee');
    expect(after.content).toBe(before.content);
    expect(after.level).toBe('tag');
    expect(after.updatedAt).toBe(day(1));
    expect(before.weight).toBeCloseTo(1 / 1.39, 5);
    expect(after.weight).toBeCloseTo(boostedAt45, 5);
    expect(await memory.count({ scope })).toBe(4);
  });

  it('day 100: compression continues; the boost survives the decay pass', async () => {
    clock.set(day(100));
    await memory.maintain();
    expect((await get('job')).level).toBe('tag'); // 85 days
    const coffeeRecord = await get('coffee');
    expect(coffeeRecord.level).toBe('trace'); // 99 days
    expect(coffeeRecord.updatedAt).toBe(day(1));
    expect(coffeeRecord.weight).toBeCloseTo((boostedAt45 * 1.44) / 1.99, 4);
    const catRecord = await get('cat');
    expect(catRecord.level).toBe('trace');
    expect(catRecord.weight).toBeCloseTo(1 / 1.99, 5);
    expect((await get('tea')).level).toBe('tag'); // 55 days
    expect((await get('tea')).updatedAt).toBe(day(45));
  });

  it('day 105: a new topic becomes an independent memory; the nearest old one only gains +0.1', async () => {
    clock.set(day(105));
    const jobBefore = await get('job');
    const result = await memory.add(newTopic, { scope });
    expect(result.decision.strategy).toBe('create_new');
    expect(result.decision.similarity).toBeCloseTo(0.192, 5);
    expect(result.decision.nearestId).toBe(ids.job);
    expect(result.memory).toMatchObject({ level: 'full', weight: 1, updatedAt: day(105) });
    const jobAfter = await get('job');
    expect(jobAfter.content).toBe(jobBefore.content);
    expect(jobAfter.level).toBe('tag');
    expect(jobAfter.updatedAt).toBe(day(15));
    expect(jobBefore.weight).toBeCloseTo(mergedAt15 / 1.85, 5); // day 100's pass, 85 days
    expect(jobAfter.weight).toBeCloseTo(mergedAt15 / 1.9 + 0.1, 5); // the formula at 90 days, + 0.1
    expect(await memory.count({ scope })).toBe(5);
  });

  it('running maintenance twice at the same instant changes nothing the second time', async () => {
    await memory.maintain();
    const again = await memory.maintain();
    expect(again.changes).toEqual([]);
    expect(again.unchanged).toBe(again.scanned);
  });
});
