import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TOKENIZER_VERSION, type MemoryChange } from '@memloom/core';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createDefaultSqliteStore, createSqliteStore, DEFAULT_SQLITE_PATH, resolveDefaultSqlitePath, SCHEMA_VERSION, SQLITE_PATH_ENV } from '../src/index.js';
import { TERMS_TOKENIZER } from '../src/schema.js';
import { indexTerms } from '../src/text.js';
import { VECTOR_LOG_KEPT } from '../src/writes.js';
import { createChange, DIMENSION, EMBEDDER_ID, newRecord, replaceChange, vectorFor } from './fixtures/records.mjs';
import { inspect, tempFolders } from './helpers.js';

const folder = tempFolders();

describe('keyword terms and the tokenizer version', () => {
  it('records the tokenizer version in a new file', async () => {
    const path = folder().file();
    const store = createSqliteStore({ path });
    await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    await store.close();
    const database = new Database(path, { readonly: true });
    expect(database.prepare("SELECT value FROM meta WHERE key = 'tokenizer'").get()).toEqual({ value: String(TOKENIZER_VERSION) });
    database.close();
  });

  it('re-indexes the terms of a file written with another tokenizer when it is opened, scope included', async () => {
    const path = folder().file();
    const store = createSqliteStore({ path });
    await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    await store.apply([
      createChange(newRecord('zh', '他养了一只猫', 'alice'), vectorFor(1)),
      createChange(newRecord('en', 'walking the dogs', 'bob'), vectorFor(2)),
    ]);
    await store.close();
    // What an older tokenizer left: other terms in the index, and no version (or an older one) in meta.
    const database = new Database(path);
    const row = database.prepare("SELECT row_id AS rowId FROM memories WHERE id = 'zh'").get() as { rowId: number };
    const scopeTerms = (database.prepare('SELECT scope_terms FROM memory_text WHERE rowid = ?').get(row.rowId) as { scope_terms: string | null } | undefined)?.scope_terms;
    database.prepare('DELETE FROM memory_text WHERE rowid = ?').run(row.rowId);
    // The scope tokens of user alice (hex of the id), as the store writes them.
    database.prepare('INSERT INTO memory_text (rowid, terms, scope_terms) VALUES (?, ?, ?)').run(row.rowId, 'stale 了 他', scopeTerms ?? `u${Buffer.from('alice').toString('hex')} a_ s_`);
    database.prepare("DELETE FROM meta WHERE key = 'tokenizer'").run();
    const stale = (term: string) => (database.prepare('SELECT count(*) AS n FROM memory_text WHERE memory_text MATCH ?').get(`terms : "${term}"`) as { n: number }).n;
    expect(stale('stale')).toBe(1);
    database.close();

    const reopened = createSqliteStore({ path });
    await reopened.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    expect((await reopened.textSearch({ text: 'stale', limit: 10 })).length).toBe(0);
    expect((await reopened.textSearch({ text: '猫', scope: { userId: 'alice' }, limit: 10 })).map((hit) => hit.memory.id)).toEqual(['zh']);
    expect((await reopened.textSearch({ text: '猫', scope: { userId: 'bob' }, limit: 10 })).length).toBe(0);
    expect((await reopened.textSearch({ text: 'dog', scope: { userId: 'bob' }, limit: 10 })).map((hit) => hit.memory.id)).toEqual(['en']);
    await reopened.close();
    const after = new Database(path, { readonly: true });
    expect(after.prepare("SELECT value FROM meta WHERE key = 'tokenizer'").get()).toEqual({ value: String(TOKENIZER_VERSION) });
    // 了 and 他 are no terms of their own any more (core's tokenizer 2).
    expect((after.prepare('SELECT count(*) AS n FROM memory_text WHERE memory_text MATCH ?').get('terms : "了"') as { n: number }).n).toBe(0);
    after.close();
  });
});

describe('reopening a file', () => {
  it('finds every memory, vector, text entry, filter field and version again', async () => {
    const path = folder().file();
    const store = createSqliteStore({ path });
    await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    const memories = Array.from({ length: 30 }, (_, index) => ({
      ...newRecord(`m-${index}`, index === 7 ? '我喜欢喝咖啡' : `note ${index} about turquoise`, index % 2 ? 'alice' : 'bob'),
      tags: index % 3 === 0 ? ['triple'] : [],
      metadata: { index, even: index % 2 === 0 },
    }));
    await store.apply(memories.map((memory, index) => createChange(memory, vectorFor(index))));
    const edited = { ...memories[3]!, content: 'note 3, edited', revision: 2 };
    await store.apply([replaceChange(memories[3]!, edited)]);
    await store.apply([{ op: 'delete', id: 'm-4' }]);
    await store.touch(['m-5'], '2025-01-01T00:00:00.000Z');
    await store.close();

    const reopened = createSqliteStore({ path });
    await reopened.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    expect(await reopened.count({})).toBe(29);
    expect(await reopened.get('m-3')).toEqual(edited);
    expect(await reopened.get('m-4')).toBeUndefined();
    expect((await reopened.get('m-5'))?.lastAccessedAt).toBe('2025-01-01T00:00:00.000Z');
    expect((await reopened.history('m-3')).map((version) => version.after.content)).toEqual(['note 3 about turquoise', 'note 3, edited']);
    // vectorFor repeats every 8 indexes: bob's m-2, m-10, m-18 and m-26 share one vector.
    const hits = await reopened.vectorSearch({ vector: vectorFor(10), limit: 4, scope: { userId: 'bob' } });
    expect(hits.map((hit) => hit.memory.id).sort()).toEqual(['m-10', 'm-18', 'm-2', 'm-26']);
    expect(hits.every((hit) => Math.abs(hit.score - 1) < 1e-5)).toBe(true);
    expect((await reopened.textSearch({ text: '咖啡', limit: 5 })).map((hit) => hit.memory.id)).toEqual(['m-7']);
    expect(await reopened.count({ filter: { tags: ['triple'] } })).toBe(10);
    expect((await reopened.list({ filter: { metadata: { index: 12, even: true } } })).map((memory) => memory.id)).toEqual(['m-12']);
    await reopened.close();
    expect(inspect(path)).toMatchObject({ memories: 29, vectors: 29, textRows: 29, incomplete: 0, orphans: 0, integrity: 'ok' });
  });
});

describe('the schema', () => {
  it('is created on first open, stamped with its version and memloom application id, in WAL mode', async () => {
    const path = join(folder().path, 'nested', 'deeper', 'memory.db');
    const store = createSqliteStore({ path });
    await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    await store.close();
    const raw = new Database(path, { readonly: true });
    expect(raw.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(raw.pragma('application_id', { simple: true })).toBe(0x4d4c4f4d);
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    const tables = (raw.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((row) => row.name);
    expect(tables).toEqual(expect.arrayContaining(['meta', 'memories', 'versions', 'memory_text', 'memory_vectors_1', 'reindex_staged']));
    raw.close();
  });

  it('gives a new file 8 KiB pages, and keeps the 4 KiB pages of a file made before', async () => {
    const { file } = folder();
    const fresh = createSqliteStore({ path: file('fresh.db') });
    await fresh.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    await fresh.close();
    // What earlier versions made: SQLite's default page size, fixed when the file was first written.
    const before = new Database(file('before.db'));
    before.pragma('page_size = 4096');
    before.pragma('journal_mode = WAL');
    before.close();
    const earlier = createSqliteStore({ path: file('before.db') });
    await earlier.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    await earlier.apply([createChange(newRecord('one', 'one memory', 'alice'), vectorFor(1))]);
    await earlier.close();
    const pageSize = (name: string) => {
      const raw = new Database(file(name), { readonly: true });
      try {
        return raw.pragma('page_size', { simple: true });
      } finally {
        raw.close();
      }
    };
    expect(pageSize('fresh.db')).toBe(8192);
    expect(pageSize('before.db')).toBe(4096);
    const reopened = createSqliteStore({ path: file('before.db') });
    await reopened.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    expect((await reopened.vectorSearch({ vector: vectorFor(1), limit: 1 })).map((hit) => hit.memory.id)).toEqual(['one']);
    await reopened.close();
    expect(inspect(file('before.db'))).toMatchObject({ memories: 1, vectors: 1, textRows: 1, incomplete: 0, orphans: 0, integrity: 'ok' });
  });

  it('migrates an empty file and an empty SQLite database in place', async () => {
    const { file } = folder();
    writeFileSync(file('empty.db'), '');
    new Database(file('blank.db')).close();
    for (const name of ['empty.db', 'blank.db']) {
      const store = createSqliteStore({ path: file(name) });
      await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
      await store.apply([createChange(newRecord('one', 'one memory', 'alice'), vectorFor(1))]);
      expect(await store.count({})).toBe(1);
      await store.close();
    }
  });
});

describe('an injected connection', () => {
  it('is used as it is, and left open by close()', async () => {
    const database = new Database(':memory:');
    const store = createSqliteStore({ database });
    expect(store.capabilities).toMatchObject({ persistent: false, multiProcess: false });
    await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    await store.apply([createChange(newRecord('one', 'one memory', 'alice'), vectorFor(1))]);
    await store.close();
    expect(database.open).toBe(true);
    expect((database.prepare('SELECT count(*) AS n FROM memories').get() as { n: number }).n).toBe(1);
    database.close();
  });
});

describe('the default path', () => {
  it('is .memloom/memory.db under the working directory, unless MEMLOOM_SQLITE_PATH says otherwise', () => {
    expect(DEFAULT_SQLITE_PATH).toBe('.memloom/memory.db');
    expect(resolveDefaultSqlitePath({}, '/srv/app')).toBe('/srv/app/.memloom/memory.db');
    expect(resolveDefaultSqlitePath({ [SQLITE_PATH_ENV]: 'data/agent.db' }, '/srv/app')).toBe('/srv/app/data/agent.db');
    expect(resolveDefaultSqlitePath({ [SQLITE_PATH_ENV]: '/var/lib/memloom.db' }, '/srv/app')).toBe('/var/lib/memloom.db');
    expect(resolveDefaultSqlitePath({ [SQLITE_PATH_ENV]: ':memory:' }, '/srv/app')).toBe(':memory:');
    expect(resolveDefaultSqlitePath({ [SQLITE_PATH_ENV]: '  ' }, '/srv/app')).toBe('/srv/app/.memloom/memory.db');
  });

  it('is where createDefaultSqliteStore() keeps its file, folder created on open', async () => {
    const target = join(folder().path, 'from-env', 'memory.db');
    const previous = process.env[SQLITE_PATH_ENV];
    process.env[SQLITE_PATH_ENV] = target;
    try {
      const store = createDefaultSqliteStore();
      expect(store.path).toBe(target);
      await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
      await store.close();
      expect(existsSync(target)).toBe(true);
    } finally {
      if (previous === undefined) delete process.env[SQLITE_PATH_ENV];
      else process.env[SQLITE_PATH_ENV] = previous;
    }
  });

  it('refuses options without a path', () => {
    expect(() => createSqliteStore({} as never)).toThrow(/options.path/);
    expect(() => createSqliteStore({ path: 'x.db', vectorChunkSize: 7 })).toThrow(/vectorChunkSize/);
    // At least 8 but not a multiple of 8: refused at creation, not when the vector table is made.
    expect(() => createSqliteStore({ path: 'x.db', vectorChunkSize: 12 })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining('vectorChunkSize') }));
    // A misspelt option is refused, not ignored with its default used.
    expect(() => createSqliteStore({ path: 'x.db', vectorMirow: false } as never)).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining('unknown option vectorMirow') }));
  });

  it('refuses to open for a dimension that is not a positive integer (INVALID_INPUT), recording none', async () => {
    const store = createSqliteStore({ path: ':memory:' });
    for (const dimension of [0, -1, 1.5]) {
      await expect(store.open({ dimension, embedderId: EMBEDDER_ID }), String(dimension)).rejects.toMatchObject({ code: 'INVALID_INPUT', backend: 'sqlite' });
    }
    // Nothing was recorded: the first valid open sets the dimension.
    await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    await store.close();
  });
});

describe('schema 3: a memory context', () => {
  it('opens a schema 2 file, migrates it in place, and then keeps and indexes contexts', async () => {
    const path = folder().file();
    const store = createSqliteStore({ path });
    await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    await store.apply([createChange(newRecord('old', 'bought a kayak', 'alice'), vectorFor(1))]);
    await store.close();
    // What schema 2 wrote: no context column, no vector change log.
    const raw = new Database(path);
    raw.exec('ALTER TABLE memories DROP COLUMN context');
    raw.exec('DROP TABLE vector_changes');
    raw.pragma('user_version = 2');
    raw.close();

    const reopened = createSqliteStore({ path });
    await reopened.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    const old = (await reopened.get('old'))!;
    expect(old).not.toHaveProperty('context');
    expect((await reopened.textSearch({ text: 'kayak', limit: 5 })).map((hit) => hit.memory.id)).toEqual(['old']);
    // A context given later is stored and its words are found.
    const next = { ...old, context: 'any plans for the lake?', revision: old.revision + 1 };
    await reopened.apply([replaceChange(old, next)]);
    expect((await reopened.get('old'))?.context).toBe('any plans for the lake?');
    expect((await reopened.textSearch({ text: 'lake', limit: 5 })).map((hit) => hit.memory.id)).toEqual(['old']);
    await expect(reopened.apply([replaceChange(next, { ...next, context: 42 as never, revision: next.revision + 1 })])).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await reopened.close();

    const migrated = new Database(path, { readonly: true });
    expect(migrated.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(SCHEMA_VERSION).toBe(5);
    migrated.close();
  });
});

describe('schema 4: a log of vector changes', () => {
  it('opens a schema 3 file, migrates it in place, and logs the vectors each write changes from then on', async () => {
    const path = folder().file();
    const store = createSqliteStore({ path });
    await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    const kept = newRecord('kept', 'bought a kayak', 'alice');
    await store.apply([createChange(kept, vectorFor(1))]);
    await store.close();
    const raw = new Database(path);
    raw.exec('DROP TABLE vector_changes');
    raw.pragma('user_version = 3');
    raw.close();

    const reopened = createSqliteStore({ path });
    await reopened.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    expect((await reopened.vectorSearch({ vector: vectorFor(1), limit: 1 }))[0]?.memory.id).toBe('kept');
    const added = newRecord('added', 'sold the car', 'bob');
    await reopened.apply([createChange(added, vectorFor(2))]);
    const edit = replaceChange(kept, { ...kept, content: 'bought two kayaks', revision: 2 }) as MemoryChange & { op: 'put' };
    await reopened.apply([{ ...edit, op: 'put', vector: vectorFor(3) }]);
    await reopened.apply([{ op: 'delete', id: 'added' }]);
    await reopened.close();

    const migrated = new Database(path, { readonly: true });
    expect(migrated.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    const rowOf = (id: string): number => migrated.prepare('SELECT row_id FROM memories WHERE id = ?').pluck().get(id) as number;
    const log = (migrated.prepare('SELECT row_ids FROM vector_changes ORDER BY seq').pluck().all() as string[]).map((ids) => JSON.parse(ids));
    // One entry per write. The added memory's row is gone; it was logged when added and when deleted.
    const addedRow = rowOf('kept') + 1;
    expect(log).toEqual([[addedRow], [rowOf('kept')], [addedRow]]);
    migrated.close();
  });

  it(`keeps the newest ${VECTOR_LOG_KEPT} entries of the log only`, async () => {
    const path = folder().file();
    const store = createSqliteStore({ path });
    await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    await store.apply([createChange(newRecord('first', 'first', 'alice'), vectorFor(1))]);
    // As if VECTOR_LOG_KEPT - 1 more writes had come since.
    const raw = new Database(path);
    raw.prepare('INSERT INTO vector_changes (seq, row_ids) VALUES (?, ?)').run(VECTOR_LOG_KEPT, '[]');
    await store.apply([createChange(newRecord('next', 'next', 'alice'), vectorFor(2))]);
    const seqs = raw.prepare('SELECT seq FROM vector_changes ORDER BY seq').pluck().all();
    expect(seqs).toEqual([VECTOR_LOG_KEPT, VECTOR_LOG_KEPT + 1]);
    raw.close();
    await store.close();
  });
});

describe('schema 5: format characters stay inside keyword terms', () => {
  // Core's tokenize keeps a zero-width non-joiner (Persian "می‌خواهم", "I want") and a soft hyphen
  // inside the word, as every other store's keyword search does.
  const persian = 'من می\u200cخواهم بروم';
  const hyphenated = 'a soft\u00adhyphenated word';

  async function idsFor(store: ReturnType<typeof createSqliteStore>, text: string): Promise<string[]> {
    return (await store.textSearch({ text, limit: 5 })).map((hit) => hit.memory.id);
  }

  it('matches whole terms only: a part of a word joined by a format character is no term', async () => {
    const store = createSqliteStore({ path: ':memory:' });
    await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    await store.apply([createChange(newRecord('fa', persian, 'alice'), vectorFor(1)), createChange(newRecord('en', hyphenated, 'alice'), vectorFor(2))]);
    expect(await idsFor(store, 'می\u200cخواهم')).toEqual(['fa']);
    expect(await idsFor(store, 'می')).toEqual([]);
    expect(await idsFor(store, 'soft\u00adhyphenated')).toEqual(['en']);
    expect(await idsFor(store, 'soft')).toEqual([]);
    await store.close();
  });

  it('splits no term core makes, for every character up to the CJK planes (U+180E included, which SQLite files as a space)', () => {
    const database = new Database(':memory:');
    database.exec(`CREATE VIRTUAL TABLE t USING fts5(x, tokenize = "${TERMS_TOKENIZER}"); CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance');`);
    const insert = database.prepare('INSERT INTO t (rowid, x) VALUES (?, ?)');
    const expected = new Map<number, number>();
    database.transaction(() => {
      for (let point = 0x21; point <= 0x2ffff; point++) {
        if (point >= 0xd800 && point <= 0xdfff) continue;
        const terms = indexTerms(`a${String.fromCodePoint(point)}b`);
        if (terms === '') continue;
        insert.run(point, terms);
        expected.set(point, terms.split(' ').length);
      }
    })();
    const found = new Map((database.prepare('SELECT doc, count(*) FROM v GROUP BY doc').raw().all() as [number, number][]).map(([doc, count]) => [doc, count]));
    const split = [...expected].filter(([point, count]) => found.get(point) !== count).map(([point]) => `U+${point.toString(16).toUpperCase()}`);
    expect(split).toEqual([]);
    database.close();
  });

  it('opens a schema 4 file, rebuilds its text table under the new tokenizer, and keeps every memory findable', async () => {
    const path = folder().file();
    const store = createSqliteStore({ path });
    await store.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    await store.apply([createChange(newRecord('fa', persian, 'alice'), vectorFor(1)), createChange(newRecord('en', 'walking the dogs', 'bob'), vectorFor(2))]);
    await store.close();
    // What schema 4 wrote: the same terms, under the tokenizer that split them at format characters.
    const raw = new Database(path);
    raw.exec('DROP TABLE memory_text');
    raw.exec(`CREATE VIRTUAL TABLE memory_text USING fts5(terms, scope_terms, content = '', contentless_delete = 1, tokenize = "unicode61 remove_diacritics 0 categories 'L* M* N* P* S* Co'")`);
    raw.prepare("INSERT INTO memory_text (rowid, terms, scope_terms) SELECT row_id, CASE id WHEN 'fa' THEN ? ELSE 'walk dog' END, '' FROM memories").run(persian);
    raw.pragma('user_version = 4');
    expect(raw.prepare(`SELECT count(*) FROM memory_text WHERE memory_text MATCH 'terms : "می"'`).pluck().get()).toBe(1);
    raw.close();

    const reopened4 = createSqliteStore({ path });
    await reopened4.open({ dimension: DIMENSION, embedderId: EMBEDDER_ID });
    expect(await idsFor(reopened4, 'می')).toEqual([]);
    expect(await idsFor(reopened4, 'می\u200cخواهم')).toEqual(['fa']);
    expect(await idsFor(reopened4, 'dogs')).toEqual(['en']);
    // Scope terms were rebuilt too.
    expect((await reopened4.textSearch({ text: 'dogs', limit: 5, scope: { userId: 'bob' } })).map((hit) => hit.memory.id)).toEqual(['en']);
    await reopened4.close();
    const migrated = new Database(path, { readonly: true });
    expect(migrated.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(migrated.prepare("SELECT value FROM meta WHERE key = 'tokenizer'").pluck().get()).toBe(String(TOKENIZER_VERSION));
    migrated.close();
  });
});
