import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { describeGit, gitFacts, percentiles, repoRoot } from '../src/bench-report.js';
import { syntheticMemories } from '../src/peers/synthetic.js';

describe('percentiles', () => {
  it('takes the nearest rank of the sorted samples', () => {
    const samples = Array.from({ length: 100 }, (_, index) => 100 - index);
    expect(percentiles(samples)).toEqual({ p50: 50, p95: 95, n: 100 });
  });

  it('handles a single sample and no sample', () => {
    expect(percentiles([7.123])).toEqual({ p50: 7.12, p95: 7.12, n: 1 });
    expect(percentiles([]).n).toBe(0);
  });
});

describe('gitFacts', () => {
  it('stamps the short sha of the checked-out commit and says whether the tree is dirty', () => {
    const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' }).stdout.trim();
    const facts = gitFacts();
    expect(facts.commit).toBe(head);
    expect(typeof facts.dirty).toBe('boolean');
  });

  it('prints the commit, with its uncommitted changes when there are some', () => {
    expect(describeGit({ commit: 'a5488b7', dirty: false })).toBe('a5488b7');
    expect(describeGit({ commit: 'a5488b7', dirty: true })).toBe('a5488b7 + uncommitted changes');
    expect(describeGit({ commit: null, dirty: null })).toBe('not a git checkout');
  });
});

describe('syntheticMemories', () => {
  it('is the same sequence for the same seed, with unit vectors of the asked dimension', () => {
    const first = [...syntheticMemories(5, 16, Date.UTC(2025, 0, 1))];
    const again = [...syntheticMemories(5, 16, Date.UTC(2025, 0, 1))];
    expect(again.map((memory) => memory.text)).toEqual(first.map((memory) => memory.text));
    expect(Array.from(again[3]!.vector)).toEqual(Array.from(first[3]!.vector));
    for (const memory of first) {
      expect(memory.vector).toHaveLength(16);
      expect(Math.hypot(...memory.vector)).toBeCloseTo(1, 5);
    }
    expect(new Set(first.map((memory) => memory.id)).size).toBe(5);
  });
});
