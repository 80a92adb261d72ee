import { cp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createMemory, MemloomError } from '@memloom/core';
import { createFakeClock, createTestEmbedder } from '@memloom/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createMarkdownStore } from '../src/index.js';
import { tempRoot } from './helpers.js';

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

const alice = { userId: 'alice' };
const bob = { userId: 'bob', sessionId: 's1' };
const facts = [
  ['The user drinks sugar-free latte, large.', alice],
  ['Project A is due on March 15.', alice],
  ['The dog is called Bob.', alice],
  ['Bob sails on weekends.', bob],
] as const;

async function written() {
  const root = await tempRoot();
  roots.push(root);
  const embedder = createTestEmbedder({ dimension: 16 });
  const store = createMarkdownStore({ root, embedder });
  const memory = createMemory({ store, embedder, clock: createFakeClock('2024-03-02T09:00:00.000Z') });
  const ids: string[] = [];
  for (const [content, scope] of facts) ids.push((await memory.add(content, { scope })).memory.id);
  ids.push((await memory.add('Talked about the trip to Lyon.', { scope: alice, category: 'episode' })).memory.id);
  const records = await store.list({ orderBy: 'id' });
  await store.close();
  return { root, embedder, ids, records };
}

/** Copy only the Markdown files: what a person keeps in git. */
async function markdownOnly(from: string): Promise<string> {
  const to = await tempRoot();
  roots.push(to);
  for (const entry of await readdir(from, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.md')) continue;
    const rel = path.relative(from, path.join(entry.parentPath, entry.name));
    if (rel.split(path.sep).some((part) => part.startsWith('.') || part === 'backups')) continue;
    await mkdir(path.dirname(path.join(to, rel)), { recursive: true });
    await cp(path.join(from, rel), path.join(to, rel));
  }
  return to;
}

describe('the derived index', () => {
  it('is rebuilt from the Markdown alone: records, vectors from the embedder, text search', async () => {
    const { root, embedder, records } = await written();
    const copy = await markdownOnly(root);
    expect((await readdir(copy, { recursive: true })).some((name) => name.includes('.index') || name.includes('.history'))).toBe(false);

    const store = createMarkdownStore({ root: copy, embedder });
    await store.open({ dimension: embedder.dimension, embedderId: embedder.id });
    expect(await store.list({ orderBy: 'id' })).toEqual(records);
    for (const record of records) {
      const [expected] = await embedder.embed([record.content]);
      const vector = await store.getVector(record.id);
      expect(vector?.map((value) => value.toFixed(5))).toEqual(expected?.map((value) => value.toFixed(5)));
    }
    const [query] = await embedder.embed(['Project A is due on March 15.']);
    expect((await store.vectorSearch({ vector: query!, limit: 1, scope: alice }))[0]?.memory.content).toBe('Project A is due on March 15.');
    expect((await store.textSearch({ text: 'sails weekends', limit: 5 }))[0]?.memory.content).toBe('Bob sails on weekends.');
    // The rebuilt index is on disk: a second open needs no embedder.
    await store.close();
    const again = createMarkdownStore({ root: copy });
    expect((await again.sync()).unembedded).toEqual([]);
    expect((await again.vectorSearch({ vector: query!, limit: 1, scope: alice }))[0]?.memory.content).toBe('Project A is due on March 15.');
    await again.close();
  });

  it('without an embedder, a missing index leaves memories findable by text and listed as unembedded; sync with one fills it', async () => {
    const { root, embedder, ids } = await written();
    for (const scope of [alice, bob]) await rm(path.join(createMarkdownStore({ root }).directoryFor(scope), '.index'), { recursive: true });

    const bare = createMarkdownStore({ root });
    const report = await bare.sync();
    expect([...report.unembedded].sort()).toEqual([...ids].sort());
    const [query] = await embedder.embed(['The dog is called Bob.']);
    expect(await bare.vectorSearch({ vector: query!, limit: 5 })).toEqual([]);
    expect((await bare.textSearch({ text: 'dog', limit: 5 }))[0]?.memory.content).toBe('The dog is called Bob.');
    await bare.close();

    const equipped = createMarkdownStore({ root, embedder });
    const filled = await equipped.sync();
    expect(filled.embedded).toBe(ids.length);
    expect(filled.unembedded).toEqual([]);
    expect((await equipped.vectorSearch({ vector: query!, limit: 1 }))[0]?.memory.content).toBe('The dog is called Bob.');
    await equipped.close();
  });

  it('rebuildIndex re-embeds everything, and needs an embedder', async () => {
    const { root, embedder, ids } = await written();
    const store = createMarkdownStore({ root, embedder });
    const report = await store.rebuildIndex();
    expect(report.embedded).toBe(ids.length);
    expect(await store.count({})).toBe(ids.length);
    await store.close();
    const error = await createMarkdownStore({ root }).rebuildIndex().catch((caught: unknown) => caught);
    expect(MemloomError.hasCode(error, 'NOT_SUPPORTED')).toBe(true);
  });

  it('takes in vectors another open store wrote at the next read, without a sync', async () => {
    const root = await tempRoot();
    roots.push(root);
    const embedder = createTestEmbedder({ dimension: 16 });
    const open = { dimension: embedder.dimension, embedderId: embedder.id };
    const bare = createMarkdownStore({ root });
    await bare.open(open);
    await mkdir(bare.directoryFor(alice), { recursive: true });
    await writeFile(path.join(bare.directoryFor(alice), 'MEMORY.md'), '# Notes\n\n## 2024-03-01\nThe user likes sailing.\n');
    const [id] = (await bare.sync()).unembedded;

    // Another process with an embedder opens the store and embeds the hand-written block.
    const equipped = createMarkdownStore({ root, embedder });
    await equipped.open(open);
    const [query] = await embedder.embed(['The user likes sailing.']);
    expect((await equipped.vectorSearch({ vector: query!, limit: 1 }))[0]?.memory.id).toBe(id);
    await equipped.close();

    expect((await bare.vectorSearch({ vector: query!, limit: 1 }))[0]?.memory.id).toBe(id);
    expect(await bare.getVector(id as string)).toHaveLength(16);
    await bare.close();
  });

  it.each([
    ['another id', 16, 'two'],
    ['the same id but another dimension', 8, 'one'],
  ] as const)('refuses an embedder option of %s, and writes no store.json for it', async (_, dimension, embedderId) => {
    const root = await tempRoot();
    roots.push(root);
    const store = createMarkdownStore({ root, embedder: createTestEmbedder({ dimension: 16, id: 'one' }) });
    const error = await store.open({ dimension, embedderId }).catch((caught: unknown) => caught);
    expect(MemloomError.hasCode(error, 'EMBEDDER_MISMATCH')).toBe(true);
    await expect(readFile(path.join(root, '.memloom', 'store.json'), 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
    await store.close();
  });
});

describe('an embedder that fails', () => {
  it('stops no read or write: a block written by hand is taken in without a vector, reported, and embedded at a later read', async () => {
    const root = await tempRoot();
    roots.push(root);
    const inner = createTestEmbedder({ dimension: 16 });
    let up = true;
    let calls = 0;
    const embedder = {
      id: inner.id,
      dimension: inner.dimension,
      embed: async (texts: string[]) => {
        calls++;
        if (!up) throw new Error('ECONNREFUSED 127.0.0.1:11434');
        return inner.embed(texts);
      },
    };
    const clock = createFakeClock('2024-03-02T09:00:00.000Z');
    const warnings: string[] = [];
    const store = createMarkdownStore({ root, embedder, clock, logger: { warn: (message) => warnings.push(message) } });
    const memory = createMemory({ store, embedder, clock });
    const kept = await memory.add('The user lives in Lyon.', { scope: alice });
    const keptVector = await store.getVector(kept.memory.id);
    const file = path.join(store.directoryFor(alice), 'MEMORY.md');
    await writeFile(file, `${await readFile(file, 'utf8')}\n## 2024-03-01\nThe user's sister is called Maria.\n`);
    up = false;

    expect((await store.get(kept.memory.id))?.content).toBe('The user lives in Lyon.');
    const [hand] = (await store.list({ scope: alice })).filter((record) => record.id !== kept.memory.id);
    expect(hand?.content).toBe("The user's sister is called Maria.");
    expect(await store.getVector(hand!.id)).toBeUndefined();
    expect((await store.textSearch({ text: 'sister', limit: 5 }))[0]?.memory.id).toBe(hand!.id);
    expect(warnings.some((warning) => warning.includes('ECONNREFUSED') && warning.includes('1 memories have no vector'))).toBe(true);
    await store.touch([kept.memory.id], '2024-05-01T00:00:00.000Z');
    const [vector] = await inner.embed(['Bob sails.']);
    await store.apply([{ op: 'put', memory: { ...kept.memory, id: 'bob-1', content: 'Bob sails.', scope: bob }, vector: vector!, expectedRevision: 0, version: { memoryId: 'bob-1', version: 1, at: kept.memory.createdAt, trigger: 'import', action: 'create', reason: 'test', before: null, after: { ...kept.memory, id: 'bob-1', content: 'Bob sails.', scope: bob } } }]);
    expect(await store.count({})).toBe(3);

    // sync() and rebuildIndex() say why in their report; a failed rebuild keeps the vectors there were.
    const report = await store.sync();
    expect(report.embedderError).toMatchObject({ code: 'EMBEDDER_ERROR', backend: 'markdown' });
    expect(report.embedderError?.message).toContain('ECONNREFUSED');
    expect(report.unembedded).toEqual([hand!.id]);
    const rebuilt = await store.rebuildIndex();
    expect(rebuilt.embedderError).toMatchObject({ code: 'EMBEDDER_ERROR' });
    expect(await store.getVector(kept.memory.id)).toEqual(keptVector);
    expect(await store.getVector('bob-1')).toHaveLength(16);

    // Reads do not call a failing embedder each time; once it is back, a later read embeds the block.
    up = true;
    const before = calls;
    await store.get(kept.memory.id);
    expect(calls).toBe(before);
    // A look taken meanwhile for a change elsewhere does not drop the retry.
    const bobFile = path.join(store.directoryFor(bob), 'MEMORY.md');
    await writeFile(bobFile, `${await readFile(bobFile, 'utf8')}\n## 2024-03-01\nBob fixes radios.\n`);
    expect((await store.list({ scope: bob })).map((record) => record.content).sort()).toEqual(['Bob fixes radios.', 'Bob sails.']);
    expect(await store.getVector(hand!.id)).toBeUndefined();
    clock.advance(60_000);
    await store.get(kept.memory.id);
    expect(await store.getVector(hand!.id)).toHaveLength(16);
    expect((await store.sync()).unembedded).toEqual([]);
    await store.close();
    const reopened = createMarkdownStore({ root });
    expect(await reopened.getVector(kept.memory.id)).toEqual(keptVector);
    expect(await reopened.getVector(hand!.id)).toHaveLength(16);
    await reopened.close();
  });

  it('one block the embedder gives no usable vector (zeros) waits alone: the others of its batch are embedded', async () => {
    const root = await tempRoot();
    const inner = createTestEmbedder({ dimension: 16 });
    const embedder = {
      id: 'test/zeros-for-no-words',
      dimension: 16,
      embed: async (texts: string[]) => {
        const vectors = await inner.embed(texts);
        return texts.map((text, index) => (/[a-z]/iu.test(text) ? (vectors[index] as number[]) : new Array<number>(16).fill(0)));
      },
    };
    const store = createMarkdownStore({ root, embedder });
    const directory = store.directoryFor(alice);
    await mkdir(directory, { recursive: true });
    await writeFile(path.join(directory, 'MEMORY.md'), '# Memory\n\n## 2024-03-01\nThe user lives in Lyon.\n\n## 2024-03-01\n🙂\n\n## 2024-03-01\nThe user likes chess.\n');
    await store.open({ embedderId: embedder.id, dimension: 16 });
    const records = await store.list({ scope: alice });
    expect(records).toHaveLength(3);
    for (const record of records) expect((await store.getVector(record.id))?.length, record.content).toBe(record.content === '🙂' ? undefined : 16);
    const smiley = records.find((record) => record.content === '🙂');
    const report = await store.sync();
    expect(report.unembedded).toEqual([smiley!.id]);
    expect(report.embedderError?.message).toContain('a vector of zeros');
    const [query] = await inner.embed(['The user lives in Lyon.']);
    expect((await store.vectorSearch({ vector: query!, limit: 1 }))[0]?.memory.content).toBe('The user lives in Lyon.');
    await store.close();

    // An embedder that is broken for every text (the wrong dimension) is asked once per look, not once per block.
    let calls = 0;
    const broken = { id: embedder.id, dimension: 16, embed: async (texts: string[]) => (calls++, texts.map(() => new Array<number>(8).fill(0.5))) };
    const many = createMarkdownStore({ root: await tempRoot(), embedder: broken });
    const manyDirectory = many.directoryFor(alice);
    await mkdir(manyDirectory, { recursive: true });
    const blocks = Array.from({ length: 100 }, (_, index) => `## 2024-03-01\nThe user keeps note ${index}.\n`).join('\n');
    await writeFile(path.join(manyDirectory, 'MEMORY.md'), `# Memory\n\n${blocks}`);
    await many.open({ embedderId: broken.id, dimension: 16 });
    expect(await many.count({ scope: alice })).toBe(100);
    expect(calls).toBe(1);
    const manyReport = await many.sync();
    expect(manyReport.embedderError?.message).toContain('a vector of dimension 8');
    expect(calls).toBe(2);
    await many.close();
  });

  it('one block the embedder throws for waits alone, named by its memory and line: the other blocks of the look are embedded', async () => {
    const root = await tempRoot();
    roots.push(root);
    const inner = createTestEmbedder({ dimension: 16 });
    const vectorOf = async (text: string) => Array.from(Float32Array.from((await inner.embed([text]))[0] as number[]));
    let down = false;
    let calls = 0;
    // A content filter (or a length limit) that refuses one text, and later the whole server down.
    const embedder = {
      id: inner.id,
      dimension: 16,
      embed: async (texts: string[]) => {
        calls++;
        if (down) throw new Error('ECONNREFUSED 127.0.0.1:11434');
        if (texts.some((text) => text.includes('forbidden'))) throw new Error('content filter refused a text');
        return inner.embed(texts);
      },
    };
    const clock = createFakeClock('2024-03-02T09:00:00.000Z');
    const store = createMarkdownStore({ root, embedder, clock });
    const memory = createMemory({ store, embedder, clock });
    const lyon = await memory.add('The user lives in Lyon.', { scope: alice });
    const chess = await memory.add('The user plays chess.', { scope: alice });
    const file = path.join(store.directoryFor(alice), 'MEMORY.md');
    const edited = (await readFile(file, 'utf8'))
      .replace('The user lives in Lyon.', 'The user lives in Porto.')
      .replace('The user plays chess.', 'The user plays forbidden chess.');
    await writeFile(file, `${edited}\n## 2024-03-01\nThe user has a sister.\n`);
    const line = edited.split('\n').indexOf('The user plays forbidden chess.') - 1;

    const report = await store.sync();
    expect(report.edited.sort()).toEqual([lyon.memory.id, chess.memory.id].sort());
    expect(report.unembedded).toEqual([chess.memory.id]);
    expect(report.embedded).toBe(2);
    expect(report.embedderError).toMatchObject({ code: 'EMBEDDER_ERROR', backend: 'markdown', details: { id: chess.memory.id, block: `users/alice/memory/MEMORY.md:${line}` } });
    expect(report.embedderError?.message).toContain(`(memory ${chess.memory.id} in users/alice/memory/MEMORY.md:${line}): `);
    expect(report.embedderError?.message).toContain('content filter refused a text');
    // Every edit is taken, the one without a vector too; the others are found by vector search.
    const sister = (await store.list({ scope: alice })).find((record) => record.content === 'The user has a sister.');
    expect(await store.getVector(sister!.id)).toEqual(await vectorOf('The user has a sister.'));
    expect(await store.getVector(lyon.memory.id)).toEqual(await vectorOf('The user lives in Porto.'));
    expect(await store.get(chess.memory.id)).toMatchObject({ content: 'The user plays forbidden chess.', revision: 2 });
    expect(await store.getVector(chess.memory.id)).toBeUndefined();

    // Later looks ask again for that block alone; a store opened meanwhile takes every block as it is, nothing edited again.
    calls = 0;
    expect(await store.sync()).toMatchObject({ unembedded: [chess.memory.id], embedded: 0 });
    expect(calls).toBe(1);
    await store.close();
    const reopened = createMarkdownStore({ root, embedder, clock });
    expect(await reopened.sync()).toMatchObject({ created: [], edited: [], deleted: [], unembedded: [chess.memory.id] });
    expect((await reopened.history(chess.memory.id)).map((version) => version.version)).toEqual([1, 2]);

    // An embedder that is down is not asked once per block: a look stops after two blocks failed alone in a row.
    down = true;
    calls = 0;
    const rebuilt = await reopened.rebuildIndex();
    expect(calls).toBe(3);
    expect(rebuilt.embedderError?.message).toContain('ECONNREFUSED');
    expect(rebuilt.embedderError?.details).toEqual({});
    expect(await reopened.getVector(lyon.memory.id)).toEqual(await vectorOf('The user lives in Porto.'));
    await reopened.close();
  });
});

describe('the vector log', () => {
  it('is compacted once it is mostly superseded records, keeping the latest vector', async () => {
    const root = await tempRoot();
    roots.push(root);
    const store = createMarkdownStore({ root, fsync: false });
    await store.open({ dimension: 4, embedderId: 'test' });
    const at = '2024-01-01T00:00:00.000Z';
    const base = {
      id: 'moving', content: 'a memory that moves a lot', level: 'full' as const, weight: 1, baseWeight: 1, importance: 1, baseImportance: 1,
      category: 'fact' as const, type: 'user' as const, scope: alice, createdAt: at, updatedAt: at, lastAccessedAt: at,
      source: 'user' as const, verified: true, sources: [], tags: [], metadata: {},
    };
    const put = (revision: number) => {
      const memory = { ...base, revision };
      return {
        op: 'put' as const, memory, vector: [1, revision, 0, 0], expectedRevision: revision - 1,
        version: { memoryId: 'moving', version: revision, at, trigger: 'import' as const, action: revision === 1 ? ('create' as const) : ('edit' as const), reason: 'test', before: null, after: memory },
      };
    };
    await store.apply([put(1)]);
    await store.apply(Array.from({ length: 1100 }, (_, index) => put(index + 2)));
    const file = path.join(store.directoryFor(alice), '.index', 'vectors.bin');
    const { stat } = await import('node:fs/promises');
    const grown = (await stat(file)).size;
    await store.apply([put(1102)]);
    const compacted = (await stat(file)).size;
    expect(compacted).toBeLessThan(grown / 100);
    await store.close();
    const reopened = createMarkdownStore({ root });
    expect(await reopened.getVector('moving')).toEqual([1, 1102, 0, 0]);
    expect(await reopened.history('moving')).toHaveLength(1102);
    await reopened.close();
  });
});
