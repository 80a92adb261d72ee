import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PAIRS_FILE, mergeFailures, pairsFileProblems, type MergePair } from '../src/merge-bench.js';

const shipped = JSON.parse(readFileSync(DEFAULT_PAIRS_FILE, 'utf8')) as { about: string; sets: Record<string, string>; pairs: MergePair[] };

describe('merge bench data', () => {
  it('has the shape the bench reads: unique ids, typed fields, non-empty labels, a known set', () => {
    expect(pairsFileProblems(shipped)).toEqual([]);
    expect(shipped.pairs.length).toBeGreaterThan(100);
    for (const pair of shipped.pairs) {
      // A label the merge could never meet: a stale substring inside one to keep.
      for (const drop of pair.drop) expect(pair.keep.filter((keep) => keep.includes(drop)), pair.id).toEqual([]);
    }
  });

  it('names what is wrong with a malformed pairs file', () => {
    const pair = { id: 'A1', set: 's', old: 'I live in Porto.', new: 'I live in Lisbon now.', keep: ['Lisbon'], drop: ['Porto'], once: [] };
    const file = (pairs: unknown[]) => ({ about: 'test', sets: { s: 'one set' }, pairs });
    expect(pairsFileProblems(file([pair]))).toEqual([]);
    expect(pairsFileProblems(file([pair, pair]))).toEqual(['pairs[1].id "A1" is not unique']);
    expect(pairsFileProblems(file([{ ...pair, keep: ['Lisbon', ' '] }]))).toEqual(['pairs[0].keep is not a list of non-empty strings']);
    expect(pairsFileProblems(file([{ ...pair, drop: 'Porto' }]))).toEqual(['pairs[0].drop is not a list of non-empty strings']);
    expect(pairsFileProblems(file([{ ...pair, keep: [] }]))).toEqual(['pairs[0].keep is empty']);
    expect(pairsFileProblems(file([{ ...pair, set: 'other', new: 3 }]))).toEqual(['pairs[0].new is not a non-empty string', 'pairs[0].set "other" is not one of sets']);
    expect(pairsFileProblems([pair])).toEqual(['a pairs file is an object with about (string), sets (object) and pairs (array)']);
  });
});

describe('mergeFailures', () => {
  const labels = { keep: ['Lisbon', 'cat'], drop: ['Porto'], once: ['sister'] };

  it('passes a text that keeps every keep, holds no drop and each once at most once', () => {
    expect(mergeFailures('I live with my sister in Lisbon now. I have a cat.', labels)).toEqual([]);
  });

  it('flags a lost keep, a kept stale drop and a repeat, each by name', () => {
    expect(mergeFailures('I live with my sister in Lisbon now.', labels)).toEqual(['lost "cat"']);
    expect(mergeFailures('I live with my sister in Lisbon now. I have a cat. I lived in Porto.', labels)).toEqual(['kept stale "Porto"']);
    expect(mergeFailures('I live with my sister in Lisbon now. My sister has a cat.', labels)).toEqual(['repeats "sister"']);
    expect(mergeFailures('My sister and I live in Porto. My sister has a dog.', labels)).toEqual(['lost "Lisbon"', 'lost "cat"', 'kept stale "Porto"', 'repeats "sister"']);
  });

  it('reads Chinese labels as substrings too', () => {
    expect(mergeFailures('我妈妈在医院工作，我现在在杭州工作。', { keep: ['医院', '杭州'], drop: ['北京'], once: ['妈妈'] })).toEqual([]);
    expect(mergeFailures('我现在在杭州工作。我在北京工作。', { keep: ['医院', '杭州'], drop: ['北京'], once: ['工作'] })).toEqual(['lost "医院"', 'kept stale "北京"', 'repeats "工作"']);
  });
});
