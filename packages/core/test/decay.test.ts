import { describe, expect, it } from 'vitest';
import { currentValues, daysBetween, decayConfigSchema, decayedWeight, levelForAge, planMaintenance, type MemoryRecord } from '../src/index.js';

const config = decayConfigSchema.parse({});
const DAY = 24 * 60 * 60 * 1000;
const start = Date.parse('2024-01-01T00:00:00.000Z');

function memory(overrides: Partial<MemoryRecord> = {}): MemoryRecord {
  const at = new Date(start).toISOString();
  return {
    id: 'm',
    content: 'I am Zhang San, an AI engineer working in Beijing',
    level: 'full',
    weight: 1,
    baseWeight: 1,
    importance: 1,
    baseImportance: 1,
    category: 'fact',
    type: 'user',
    scope: { userId: 'u' },
    createdAt: at,
    updatedAt: at,
    lastAccessedAt: at,
    source: 'user',
    verified: true,
    sources: [],
    tags: [],
    metadata: {},
    revision: 1,
    ...overrides,
  };
}

describe('seed 004 weight decay w0 / (1 + a t)', () => {
  it('follows the curve 1.0 -> 0.909 -> 0.714 -> 0.5 -> 0.357', () => {
    expect(decayedWeight(1, 0, 0.01)).toBe(1);
    expect(decayedWeight(1, 10, 0.01)).toBeCloseTo(0.909, 3);
    expect(decayedWeight(1, 40, 0.01)).toBeCloseTo(0.714, 3);
    expect(decayedWeight(1, 100, 0.01)).toBeCloseTo(0.5, 3);
    expect(decayedWeight(1, 180, 0.01)).toBeCloseTo(0.357, 3);
  });

  it('scales with the starting weight and the configured alpha', () => {
    expect(decayedWeight(0.5, 100, 0.01)).toBeCloseTo(0.25, 6);
    expect(decayedWeight(1, 10, 0.1)).toBeCloseTo(0.5, 6);
  });
});

describe('seed 004 compression by age', () => {
  it('switches level at 7, 30, 90 and 180 days', () => {
    expect(levelForAge(6.99, config)).toBe('full');
    expect(levelForAge(7, config)).toBe('summary');
    expect(levelForAge(29.99, config)).toBe('summary');
    expect(levelForAge(30, config)).toBe('tag');
    expect(levelForAge(89.99, config)).toBe('tag');
    expect(levelForAge(90, config)).toBe('trace');
    expect(levelForAge(179.99, config)).toBe('trace');
    expect(levelForAge(180, config)).toBe('archive');
  });

  it('plans a compression with decay and never touches the timestamp', () => {
    const plan = planMaintenance(memory(), start + 10 * DAY, config);
    expect(plan.kind).toBe('update');
    expect(plan.compressTo).toBe('summary');
    expect(plan.weight).toBeCloseTo(0.909091, 6);
    expect(plan).not.toHaveProperty('updatedAt');
  });

  it('never moves a memory back up by age', () => {
    const plan = planMaintenance(memory({ level: 'tag' }), start + 10 * DAY, config);
    expect(plan.compressTo).toBeUndefined();
  });

  it('plans nothing the second time at the same instant', () => {
    const now = start + 40 * DAY;
    const first = planMaintenance(memory(), now, config);
    const applied = memory({ level: first.compressTo!, weight: first.weight, importance: first.importance });
    expect(planMaintenance(applied, now, config).kind).toBe('keep');
  });
});

describe('weight-only decay waits for minWeightChange', () => {
  // A core memory of importance 1 so importance never moves: only the weight decays.
  const weightOnly = (overrides: Partial<MemoryRecord> = {}) => memory({ level: 'archive', category: 'fact', ...overrides });

  it('keeps a memory whose weight moved by less than minWeightChange, and writes it once it has moved enough', () => {
    // Written at day 1 (weight 0.990099); at day 2 the formula gives 0.980392: 0.0097 < 0.02.
    const written = weightOnly({ weight: decayedWeight(1, 1, 0.01) });
    expect(planMaintenance(written, start + 2 * DAY, { ...config, fact: { ...config.fact, everyDays: 1000 } }).kind).toBe('keep');
    const later = planMaintenance(written, start + 4 * DAY, { ...config, fact: { ...config.fact, everyDays: 1000 } });
    expect(later).toMatchObject({ kind: 'update' });
    expect(later.weight).toBeCloseTo(1 / 1.04, 6);
  });

  it('writes every change when minWeightChange is 0, and the exact weight whenever something else changes', () => {
    const noWait = { ...config, minWeightChange: 0, fact: { ...config.fact, everyDays: 1000 } };
    const written = weightOnly({ weight: decayedWeight(1, 1, 0.01) });
    expect(planMaintenance(written, start + 2 * DAY, noWait).kind).toBe('update');
    // A level change at 7 days carries the exact weight even though it moved by less than 0.02 since day 6.
    const sixDays = memory({ weight: decayedWeight(1, 6, 0.01) });
    const plan = planMaintenance(sixDays, start + 7 * DAY, config);
    expect(plan.compressTo).toBe('summary');
    expect(plan.weight).toBeCloseTo(1 / 1.07, 6);
  });

  it('lets daily passes over a year write a weight-only memory about 40 times instead of 365', () => {
    const yearly = { ...config, fact: { ...config.fact, everyDays: 10_000 }, compressAfterDays: { summary: 0, tag: 0, trace: 0, archive: 0 } };
    let record = weightOnly();
    let writes = 0;
    for (let day = 1; day <= 365; day++) {
      const plan = planMaintenance(record, start + day * DAY, yearly);
      if (plan.kind !== 'update') continue;
      writes++;
      record = { ...record, weight: plan.weight, importance: plan.importance, ...(plan.compressTo ? { level: plan.compressTo } : {}) };
      expect(Math.abs(record.weight - decayedWeight(1, day, 0.01))).toBe(0);
    }
    expect(writes).toBeGreaterThan(30);
    expect(writes).toBeLessThan(45);
    // Between writes the stored weight lags the formula by less than minWeightChange.
    expect(record.weight - decayedWeight(1, 365, 0.01)).toBeLessThan(0.02);
  });
});

describe('seed 002 category rules', () => {
  it('never decays system, core, or importance >= 3', () => {
    for (const overrides of [{ category: 'system' as const }, { category: 'core' as const }, { importance: 3, baseImportance: 3 }]) {
      expect(planMaintenance(memory(overrides), start + 400 * DAY, config).kind).toBe('keep');
    }
    expect(planMaintenance(memory({ importance: 2.99, baseImportance: 2.99 }), start + 400 * DAY, config).kind).not.toBe('keep');
  });

  it('multiplies episode importance by 0.8 after 7 days and deletes episodes at 14 days', () => {
    const episode = memory({ category: 'episode' });
    expect(planMaintenance(episode, start + 6.9 * DAY, config).importance).toBe(1);
    const week = planMaintenance(episode, start + 7 * DAY, config);
    expect(week.kind).toBe('update');
    expect(week.importance).toBeCloseTo(0.8, 10);
    expect(planMaintenance(episode, start + 13.9 * DAY, config).kind).toBe('update');
    const gone = planMaintenance(episode, start + 14 * DAY, config);
    expect(gone.kind).toBe('delete');
    expect(gone.reasons[0]).toMatch(/deleted after 14 days/);
  });

  it('multiplies fact importance by 0.95 per 7 days and deletes facts below 0.3', () => {
    const fact = memory({ importance: 0.35, baseImportance: 0.35 });
    expect(planMaintenance(fact, start + 6 * DAY, config).kind).toBe('update');
    expect(planMaintenance(fact, start + 6 * DAY, config).importance).toBe(0.35);
    const week = planMaintenance(fact, start + 7 * DAY, config);
    expect(week.importance).toBeCloseTo(0.3325, 10);
    expect(week.kind).toBe('update');
    // 0.35 * 0.95^4 = 0.2851 < 0.3
    const deleted = planMaintenance(fact, start + 28 * DAY, config);
    expect(deleted.kind).toBe('delete');
    expect(deleted.reasons[0]).toMatch(/< 0.3/);
    const kept = planMaintenance(fact, start + 27 * DAY, config);
    expect(kept.kind).toBe('update');
    expect(kept.importance).toBeCloseTo(0.35 * 0.95 ** 3, 6);
  });

  it('keeps a fact at exactly importance 0.3 and deletes it only below (P-D21)', () => {
    const atThreshold = planMaintenance(memory({ importance: 0.3, baseImportance: 0.3 }), start + DAY, config);
    expect(atThreshold.kind).not.toBe('delete');
    expect(atThreshold.importance).toBe(0.3);
    expect(planMaintenance(memory({ importance: 0.2999, baseImportance: 0.2999 }), start + DAY, config).kind).toBe('delete');
  });

  it('takes its numbers from configuration', () => {
    const custom = decayConfigSchema.parse({ episode: { deleteAfterDays: 30 }, fact: { factor: 0.5, deleteBelowImportance: 0.1 } });
    expect(planMaintenance(memory({ category: 'episode' }), start + 20 * DAY, custom).kind).toBe('update');
    expect(planMaintenance(memory(), start + 7 * DAY, custom).importance).toBe(0.5);
  });
});

describe('currentValues: the weight and importance the decay rules give a memory now', () => {
  it('decays a fact by its age, and leaves what never decays (system, core, importance >= 3) as stored', () => {
    const old = start + 100 * DAY;
    expect(currentValues(memory(), old, config).weight).toBeCloseTo(0.5, 3);
    for (const overrides of [{ category: 'core' as const }, { category: 'system' as const }, { importance: 3, baseImportance: 3 }]) {
      expect(currentValues(memory({ ...overrides, weight: 0.8, baseWeight: 0.8 }), old, config), JSON.stringify(overrides)).toEqual({
        weight: 0.8,
        importance: overrides.importance ?? 1,
      });
    }
  });

  it('counts a memory dated ahead of the clock (up to a day is taken) as age 0: its weight and importance never grow past the stored ones', () => {
    expect(daysBetween(new Date(start + 12 * 60 * 60 * 1000).toISOString(), start)).toBe(0);
    const ahead = memory({ updatedAt: new Date(start + 12 * 60 * 60 * 1000).toISOString(), weight: 0.6, baseWeight: 0.6, importance: 0.9, baseImportance: 0.9 });
    expect(currentValues(ahead, start, config)).toEqual({ weight: 0.6, importance: 0.9 });
  });
});
