import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, policyOverridesSchema, resolvePolicy } from '../src/index.js';

describe('resolvePolicy', () => {
  it('lets each layer change only the keys it sets', () => {
    expect(policyOverridesSchema.parse({})).toEqual({});
    const policy = resolvePolicy([
      { source: 'config', values: { retrieve_limit: 5, evolution_enabled: true } },
      { source: 'overrides', values: { recent_days: 4 } },
    ]);
    expect(policy).toEqual({ ...DEFAULT_POLICY, retrieve_limit: 5, evolution_enabled: true, recent_days: 4 });
  });

  it('names the layer and the field of a bad value', () => {
    expect(() => resolvePolicy([{ source: 'policy_overrides.json', values: { retrieve_limit: 0 } }])).toThrow(/policy_overrides\.json: retrieve_limit/);
    expect(() => resolvePolicy([{ source: 'config', values: { unknown_key: 1 } }])).toThrow(/unknown key "unknown_key"/);
  });

  it('takes a key given as undefined for one left out: the layer below keeps its value', () => {
    const policy = resolvePolicy([
      { source: 'config', values: { retrieve_limit: 5, recent_days: 4 } },
      { source: 'overrides', values: { retrieve_limit: undefined, recent_days: 2 } },
    ]);
    expect(policy).toEqual({ ...DEFAULT_POLICY, retrieve_limit: 5, recent_days: 2 });
  });
});
