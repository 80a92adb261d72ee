import { describe, expect, it } from 'vitest';
import { boostedWeight, decideUpdate, strategyConfigSchema, upgradedLevel } from '../src/index.js';

const config = strategyConfigSchema.parse({});
const nearest = (similarity: number, level: 'full' | 'summary' | 'tag' | 'trace' | 'archive' = 'tag') => ({
  id: 'old',
  level,
  similarity,
});

describe('seed 004 weight boosts', () => {
  it('merge adds 60% of the gap to 1.0: 0.2 -> 0.68', () => {
    expect(boostedWeight(0.2, 'merge_update', config)).toBeCloseTo(0.68, 10);
  });

  it('keep both adds 30% of the gap: 0.3 -> 0.51', () => {
    expect(boostedWeight(0.3, 'keep_both', config)).toBeCloseTo(0.51, 10);
  });

  it('a new memory gives the nearest old one +0.1: 0.3 -> 0.4', () => {
    expect(boostedWeight(0.3, 'create_new', config)).toBeCloseTo(0.4, 10);
  });

  it('never goes above 1', () => {
    expect(boostedWeight(0.95, 'create_new', config)).toBe(1);
    expect(boostedWeight(1, 'merge_update', config)).toBe(1);
  });

  it('is configurable, and 0 turns a boost off', () => {
    const off = strategyConfigSchema.parse({ mediumBoost: 0, lowBoost: 0, highBoost: 0.5 });
    expect(boostedWeight(0.3, 'keep_both', off)).toBe(0.3);
    expect(boostedWeight(0.3, 'create_new', off)).toBe(0.3);
    expect(boostedWeight(0.2, 'merge_update', off)).toBeCloseTo(0.6, 10);
  });
});

describe('seed 004 thresholds', () => {
  it('merges at exactly 0.85 and keeps both just below', () => {
    const at = decideUpdate(nearest(0.85), config);
    expect(at.strategy).toBe('merge_update');
    expect(at.shouldRefreshTimestamp).toBe(true);
    const below = decideUpdate(nearest(0.8499), config);
    expect(below.strategy).toBe('keep_both');
    expect(below.shouldRefreshTimestamp).toBe(false);
    expect(below.shouldUpgradeLevel).toBe(false);
  });

  it('keeps both at exactly 0.60 and creates a new memory just below', () => {
    expect(decideUpdate(nearest(0.6), config).strategy).toBe('keep_both');
    const below = decideUpdate(nearest(0.5999), config);
    expect(below.strategy).toBe('create_new');
    expect(below.shouldRefreshTimestamp).toBe(false);
    expect(below.nearestId).toBe('old');
  });

  it('creates a new memory when the scope is empty', () => {
    const decision = decideUpdate(undefined, config);
    expect(decision).toMatchObject({ strategy: 'create_new', similarity: 0, shouldRefreshTimestamp: false });
    expect(decision.nearestId).toBeUndefined();
  });

  it('explains every decision with the similarity and the rule', () => {
    expect(decideUpdate(nearest(0.92), config).reason).toMatch(/0\.920 >= 0\.85.*tag -> summary/);
    expect(decideUpdate(nearest(0.7), config).reason).toMatch(/0\.700.*kept both/);
    expect(decideUpdate(nearest(0.15), config).reason).toMatch(/0\.150 < 0\.6/);
  });

  it('honours configured thresholds', () => {
    const strict = strategyConfigSchema.parse({ highSimilarity: 0.95, mediumSimilarity: 0.8 });
    expect(decideUpdate(nearest(0.9), strict).strategy).toBe('keep_both');
    expect(decideUpdate(nearest(0.7), strict).strategy).toBe('create_new');
  });

  it('refuses a medium threshold above the high one', () => {
    expect(strategyConfigSchema.safeParse({ highSimilarity: 0.5, mediumSimilarity: 0.7 }).success).toBe(false);
  });
});

describe('seed 004 level upgrades on merge', () => {
  it('lifts archive, trace and tag one level only above 0.90', () => {
    for (const [from, to] of [
      ['archive', 'trace'],
      ['trace', 'tag'],
      ['tag', 'summary'],
    ] as const) {
      expect(upgradedLevel(from, 0.9, config)).toBe(from);
      expect(upgradedLevel(from, 0.9001, config)).toBe(to);
    }
  });

  it('lifts summary to full only above 0.95', () => {
    expect(upgradedLevel('summary', 0.95, config)).toBe('summary');
    expect(upgradedLevel('summary', 0.9501, config)).toBe('full');
    expect(upgradedLevel('full', 1, config)).toBe('full');
  });

  it('says so in the decision', () => {
    expect(decideUpdate(nearest(0.92, 'tag'), config).shouldUpgradeLevel).toBe(true);
    expect(decideUpdate(nearest(0.9, 'tag'), config).shouldUpgradeLevel).toBe(false);
    expect(decideUpdate(nearest(0.96, 'summary'), config).shouldUpgradeLevel).toBe(true);
    expect(decideUpdate(nearest(0.99, 'full'), config).shouldUpgradeLevel).toBe(false);
  });
});
