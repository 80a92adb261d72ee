import { describe, expect, it } from 'vitest';
import { copyRecord, importStandIn, lastWrittenVersion, versionHolding, versionOf } from '../src/records.js';
import type { MemoryLevel, MemoryRecord, MemoryVersion, UpdateTrigger, VersionAction } from '../src/types.js';

function record(overrides: Partial<MemoryRecord> = {}): MemoryRecord {
  return {
    id: 'm1',
    content: 'I drink espresso every morning',
    level: 'full',
    weight: 1,
    baseWeight: 1,
    importance: 1.5,
    baseImportance: 1.5,
    category: 'fact',
    type: 'user',
    scope: { userId: 'alice', agentId: 'a1' },
    createdAt: '2025-01-01T00:00:00.000Z',
    updatedAt: '2025-01-02T00:00:00.000Z',
    lastAccessedAt: '2025-01-03T00:00:00.000Z',
    source: 'user',
    verified: true,
    sources: ['turn-1', 'turn-2'],
    tags: ['drinks'],
    metadata: { n: 1, nested: { list: [1, 'two', null, { deep: true }], empty: {} }, missing: undefined },
    revision: 3,
    ...overrides,
  };
}

/** { level: { level: ... { leaf: true } } }, `depth` objects deep: deeper than the copy recurses. */
function nestedObject(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true };
  for (let level = 0; level < depth; level++) value = { level: value };
  return value;
}

describe('copyRecord', () => {
  it('equals structuredClone on records of every shape, and shares nothing with the original', () => {
    const sparse: unknown[] = [1];
    sparse[3] = 4;
    const nullPrototype = Object.assign(Object.create(null) as Record<string, unknown>, { a: 1 });
    const cases = [
      record(),
      record({ scope: {}, sources: [], tags: [], metadata: {} }),
      record({ metadata: { when: new Date('2025-02-03T04:05:06.000Z'), map: new Map([['k', 1]]), big: 10n, sparse, nullPrototype } }),
      record({ metadata: { deep: nestedObject(20) } }),
    ];
    for (const original of cases) {
      const copy = copyRecord(original);
      expect(copy).toStrictEqual(structuredClone(original));
      expect(copy).not.toBe(original);
      expect(copy.scope).not.toBe(original.scope);
      expect(copy.sources).not.toBe(original.sources);
      expect(copy.metadata).not.toBe(original.metadata);
    }
    const nested = cases[0]!;
    const copy = copyRecord(nested);
    ((copy.metadata['nested'] as { list: unknown[] }).list[3] as { deep: boolean }).deep = false;
    copy.tags.push('changed');
    expect(nested.metadata).toEqual(record().metadata);
    expect(nested.tags).toEqual(['drinks']);
  });

  it('copies cycles and refuses functions and symbols, as structuredClone does', () => {
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic['self'] = cyclic;
    const copy = copyRecord(record({ metadata: { cyclic } }));
    const inner = copy.metadata['cyclic'] as Record<string, unknown>;
    expect(inner['self']).toBe(inner);
    expect(inner).not.toBe(cyclic);
    expect(() => copyRecord(record({ metadata: { run: () => 1 } }))).toThrow(/could not be cloned/);
    expect(() => copyRecord(record({ metadata: { tag: Symbol('x') } }))).toThrow(/could not be cloned/);
  });
});

describe('versionOf', () => {
  it('keeps copies of before and after, so later changes to either leave the version alone', () => {
    const before = record();
    const after = record({ content: 'I drink tea', revision: 4 });
    const version = versionOf(before, after, { trigger: 'manual_edit', action: 'edit', reason: 'test', atIso: '2025-03-01T00:00:00.000Z' });
    expect(version).toEqual({
      memoryId: 'm1',
      version: 4,
      at: '2025-03-01T00:00:00.000Z',
      trigger: 'manual_edit',
      action: 'edit',
      reason: 'test',
      before: structuredClone(before),
      after: structuredClone(after),
    });
    before.tags.push('x');
    after.scope.userId = 'bob';
    expect(version.before?.tags).toEqual(['drinks']);
    expect(version.after.scope.userId).toBe('alice');
  });
});

describe('versionHolding', () => {
  it('holds the records it is given, for a caller that changes neither afterwards', () => {
    const before = record();
    const after = record({ content: 'compressed', revision: 4 });
    const version = versionHolding(before, after, { trigger: 'passive_decay', action: 'compress', reason: 'age', atIso: '2025-03-01T00:00:00.000Z' });
    expect(version.before).toBe(before);
    expect(version.after).toBe(after);
    expect(version).toEqual(versionOf(before, after, { trigger: 'passive_decay', action: 'compress', reason: 'age', atIso: '2025-03-01T00:00:00.000Z' }));
  });
});

/** A memory's history, one version per step, each `after` the `before` of the next. */
function historyOf(steps: Array<[trigger: UpdateTrigger, action: VersionAction, level: MemoryLevel, content: string]>): MemoryVersion[] {
  let before: MemoryRecord | null = null;
  return steps.map(([trigger, action, level, content], index) => {
    const after = record({ level, content, revision: index + 1 });
    const version = versionOf(before, after, { trigger, action, reason: action, atIso: '2025-03-01T00:00:00.000Z' });
    before = after;
    return version;
  });
}

const writtenAt = (history: MemoryVersion[], revision = history.length) => lastWrittenVersion(history, revision)?.version;

describe('lastWrittenVersion', () => {
  it('takes a merge with trigger import as written, below full level too (memloom import --merge, add with trigger import)', () => {
    const history = historyOf([
      ['user_mention', 'create', 'full', 'I work in Beijing'],
      ['passive_decay', 'compress', 'summary', 'I work…'],
      ['import', 'merge', 'summary', 'I work in Beijing at Acme'],
      ['passive_decay', 'compress', 'tag', '#Beijing #Acme'],
    ]);
    expect(writtenAt(history)).toBe(3);
    expect(writtenAt(history, 2)).toBe(1);
  });

  it("skips an import's stand-ins for versions its source did not have: they hold the state imported, not a text written", () => {
    const [created] = historyOf([['user_mention', 'create', 'full', 'I work in Beijing']]);
    const compressed = record({ level: 'tag', content: '#Beijing', revision: 2 });
    const standIn = importStandIn(created!.after, compressed, 'imported: version 2 was not in the export');
    expect(standIn).toMatchObject({ version: 2, trigger: 'import', action: 'edit', at: compressed.updatedAt, before: created!.after, after: compressed });
    expect(writtenAt([created!, standIn])).toBe(1);
    // A memory imported without any of its history: no version holds its text.
    const alone = importStandIn(null, record({ level: 'tag', content: '#Beijing', revision: 1 }), 'copied: version 1 was not in the source history');
    expect(alone.action).toBe('create');
    expect(writtenAt([alone])).toBeUndefined();
  });

  it('reads a restore below full as the version it restored: the text that version stood for', () => {
    const history = historyOf([
      ['user_mention', 'create', 'full', 'I work in Beijing'],
      ['passive_decay', 'compress', 'summary', 'I work…'],
      ['user_mention', 'merge', 'full', 'I work at Acme'],
      ['restore', 'restore', 'summary', 'I work…'],
      ['passive_decay', 'compress', 'tag', '#work'],
      // A restore of the restore: the same text again.
      ['restore', 'restore', 'summary', 'I work…'],
      // A restore to full level holds the text it brings back.
      ['restore', 'restore', 'full', 'I work at Acme'],
    ]);
    expect(writtenAt(history, 4)).toBe(1);
    expect(writtenAt(history, 6)).toBe(1);
    expect(writtenAt(history, 7)).toBe(7);
  });

  it('reads a restore of a text written below full (an edit) as that text, and skips a restore whose version is not in the history', () => {
    const edited = historyOf([
      ['user_mention', 'create', 'full', 'I work in Beijing'],
      ['manual_edit', 'edit', 'summary', 'I work in Shanghai…'],
      ['passive_decay', 'compress', 'tag', '#Shanghai'],
      ['restore', 'restore', 'summary', 'I work in Shanghai…'],
    ]);
    expect(writtenAt(edited)).toBe(2);
    const lost = historyOf([
      ['user_mention', 'create', 'full', 'I work in Beijing'],
      ['restore', 'restore', 'summary', 'a text no version holds…'],
    ]);
    expect(writtenAt(lost)).toBe(1);
  });
});
