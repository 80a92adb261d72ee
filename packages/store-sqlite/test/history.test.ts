import type { MemoryChange, MemoryRecord, MemoryStore, MemoryVersion } from '@memloom/core';
import { createInMemoryStore, seededRandom } from '@memloom/core/testing';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createSqliteStore, SCHEMA_VERSION } from '../src/index.js';
import { DIMENSION, EMBEDDER_ID, newRecord, vectorFor } from './fixtures/records.mjs';
import { applyBeforePatch, beforePatch } from '../src/version-patch.js';
import { inspect, tempFolders } from './helpers.js';

const folder = tempFolders();
const file = (): string => folder().file();

/** A record with a class of its own: JSON keeps its fields, nothing else. */
class ImportedRecord {}

/**
 * One memory through versions of every shape a version can take: created,
 * compressed, touched between versions (so `before` is not the last
 * `after`), moved to another user, metadata with nested values (JSON data: stores refuse a Date),
 * fields only one side has or holds undefined, a `__proto__` field, and a
 * `before` that is not a plain object.
 */
function versionsOfOneMemory(): { version: MemoryVersion; vector?: number[]; touchBefore?: string }[] {
  const created: MemoryRecord = { ...newRecord('m1', 'I drink espresso every morning at the office', 'alice'), tags: ['drinks'], metadata: { n: 1 } };
  const compressed: MemoryRecord = { ...created, content: 'espresso every morning…', level: 'summary', weight: 0.714, importance: 0.8, revision: 2 };
  const touched: MemoryRecord = { ...compressed, lastAccessedAt: '2024-02-01T00:00:00.000Z' };
  const moved: MemoryRecord = {
    ...touched,
    scope: { userId: 'bob', sessionId: 's1' },
    tags: [],
    metadata: { n: 2, nested: { list: [1, 'two', null, { deep: true }] }, when: '2024-03-01T00:00:00.000Z' },
    revision: 3,
  };
  const extra = { ...moved, revision: 4, importedFrom: 'legacy', note: undefined } as MemoryRecord;
  const withProto = { ...(JSON.parse('{"__proto__": {"polluted": true}}') as object), ...extra, importedFrom: undefined, revision: 5 } as MemoryRecord;
  const plain = { ...moved, importedFrom: 'again', revision: 6 } as MemoryRecord;
  const unplainBefore = Object.assign(new ImportedRecord(), plain) as MemoryRecord;
  const restored: MemoryRecord = { ...created, lastAccessedAt: moved.lastAccessedAt, scope: moved.scope, revision: 7 };
  const version = (before: MemoryRecord | null, after: MemoryRecord, action: MemoryVersion['action']): MemoryVersion => ({
    memoryId: 'm1',
    version: after.revision,
    at: after.updatedAt,
    trigger: before ? 'manual_edit' : 'import',
    action,
    reason: `${action} for the history test`,
    before,
    after,
  });
  return [
    { version: version(null, created, 'create'), vector: vectorFor(1) },
    { version: version(created, compressed, 'compress') },
    { version: version(touched, moved, 'edit'), vector: vectorFor(2), touchBefore: touched.lastAccessedAt },
    { version: version(moved, extra, 'edit') },
    { version: version(extra, withProto, 'edit') },
    { version: version(withProto, plain, 'edit') },
    { version: version(unplainBefore, restored, 'restore'), vector: vectorFor(3) },
  ];
}

async function replay(store: MemoryStore): Promise<MemoryVersion[]> {
  await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
  const given: MemoryVersion[] = [];
  for (const { version, vector, touchBefore } of versionsOfOneMemory()) {
    if (touchBefore) await store.touch(['m1'], touchBefore);
    const change: MemoryChange = { op: 'put', memory: version.after, expectedRevision: version.version - 1, version, ...(vector ? { vector } : {}) };
    await store.apply([change]);
    given.push(version);
  }
  return given;
}

/** What a version is once stored as JSON: the bar schema 1 set, and the one schema 2 must meet. */
function asJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

describe('history() with compact versions (schema 2)', () => {
  it('returns every version exactly as it was given, as schema 1 did and as the in-memory store does', async () => {
    const path = file();
    const store = createSqliteStore({ path });
    const given = await replay(store);
    const history = await store.history('m1');
    expect(history).toStrictEqual(given.map(asJson));
    // A field named __proto__ comes back as a field, not as a prototype.
    expect(Object.keys(history[4]!.after)).toContain('__proto__');
    expect(Object.keys(history[5]!.before!)).toContain('__proto__');
    expect(Object.getPrototypeOf(history[5]!.before)).toBe(Object.prototype);
    expect((history[5]!.before as unknown as Record<string, unknown>)['polluted']).toBeUndefined();

    const memory = createInMemoryStore();
    await replay(memory);
    expect(history).toEqual(asJson(await memory.history('m1')));
    await store.close();
    expect(inspect(path)).toMatchObject({ memories: 1, incomplete: 0, orphans: 0, integrity: 'ok' });
  });

  it("keeps `before` as a patch of the fields that changed, and a `before` that is not a plain object whole", async () => {
    const path = file();
    const store = createSqliteStore({ path });
    const given = await replay(store);
    await store.close();
    const raw = new Database(path, { readonly: true });
    const rows = raw.prepare('SELECT version, before_json, before_patch, length(after_json) AS after_length FROM versions ORDER BY version').all() as {
      version: number;
      before_json: string | null;
      before_patch: string | null;
      after_length: number;
    }[];
    raw.close();
    expect(rows.map((row) => [row.before_json === null, row.before_patch === null])).toEqual([
      [true, true],
      [true, false],
      [true, false],
      [true, false],
      [true, false],
      [true, false],
      [false, true],
    ]);
    // The compression: only content, level, weight, importance and revision differ.
    expect(JSON.parse(rows[1]!.before_patch!)).toEqual([
      { content: given[0]!.after.content, level: 'full', weight: 1, importance: 1, revision: 1 },
    ]);
    expect(rows[1]!.before_patch!.length).toBeLessThan(rows[1]!.after_length / 2);
  });

  it('opens a schema 1 file, migrates it in place, reads its whole-record versions as before and appends patched ones', async () => {
    const path = file();
    const store = createSqliteStore({ path });
    const given = await replay(store);
    await store.close();

    // Turn the file into what schema 1 wrote: both records whole, no before_patch column.
    const raw = new Database(path);
    const rows = raw.prepare('SELECT rowid, version FROM versions ORDER BY version').all() as { rowid: number; version: number }[];
    const legacy = raw.prepare('UPDATE versions SET before_json = ?, before_patch = NULL WHERE rowid = ?');
    for (const row of rows) {
      const before = given[row.version - 1]!.before;
      legacy.run(before === null ? null : JSON.stringify(before), row.rowid);
    }
    raw.exec('ALTER TABLE versions DROP COLUMN before_patch');
    raw.exec('ALTER TABLE memories DROP COLUMN context');
    raw.exec('DROP TABLE vector_changes');
    raw.pragma('user_version = 1');
    raw.close();

    const reopened = createSqliteStore({ path });
    await reopened.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    expect(await reopened.history('m1')).toStrictEqual(given.map(asJson));
    const current = (await reopened.get('m1'))!;
    const next: MemoryRecord = { ...current, content: 'espresso, one a day', revision: current.revision + 1 };
    const version: MemoryVersion = { ...given[1]!, version: next.revision, before: current, after: next };
    await reopened.apply([{ op: 'put', memory: next, expectedRevision: current.revision, version }]);
    expect(await reopened.history('m1')).toStrictEqual([...given, version].map(asJson));
    await reopened.close();

    const migrated = new Database(path, { readonly: true });
    expect(migrated.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect((migrated.prepare('SELECT count(*) AS n FROM versions WHERE before_patch IS NOT NULL').get() as { n: number }).n).toBe(1);
    migrated.close();
  });
});

describe('version patches', () => {
  it('turn any `after` back into its `before`, as JSON would keep it, on 20,000 random pairs', () => {
    const next = seededRandom(11);
    const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)]!;
    const shared = { userId: 'alice' };
    const values = (): unknown =>
      pick([
        () => undefined,
        () => null,
        () => 0,
        () => -0,
        () => 1.5,
        () => Number.NaN,
        () => true,
        () => 'text',
        () => 'other "quoted" text',
        () => '',
        () => shared,
        () => ({ userId: 'alice' }),
        () => ({ userId: 'bob', nested: [1, { deep: undefined, kept: 'x' }] }),
        () => [],
        () => ['a', 'b'],
        () => new Date(0),
        () => () => 1,
      ])();
    const keys = ['content', 'level', 'weight', 'scope', 'tags', 'metadata', 'extra', '__proto__', '0', 'revision'];
    const randomRecord = (): Record<string, unknown> => {
      const record: Record<string, unknown> = {};
      for (const key of keys) {
        if (next() < 0.3) continue;
        Object.defineProperty(record, key, { value: values(), writable: true, enumerable: true, configurable: true });
      }
      return record;
    };
    for (let round = 0; round < 20_000; round++) {
      const after = randomRecord();
      const before = next() < 0.5 ? randomRecord() : { ...after, ...(next() < 0.5 ? { content: 'changed' } : {}) };
      const patch = beforePatch(before, after);
      expect(patch).toBeDefined();
      expect(applyBeforePatch(JSON.stringify(after), patch!)).toStrictEqual(JSON.parse(JSON.stringify(before)));
    }
  });

  it('declines records that are not plain objects, which are then kept whole', () => {
    expect(beforePatch(new ImportedRecord(), {})).toBeUndefined();
    expect(beforePatch({}, { toJSON: () => ({}) })).toBeUndefined();
    expect(() => applyBeforePatch('{}', '{"content":"x"}')).toThrow(/not a version patch/);
  });
});
