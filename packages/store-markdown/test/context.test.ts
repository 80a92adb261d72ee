import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createMemory, DEFAULT_CONTEXT_WEIGHT, documentVectors, MemloomError, type MemoryRecord, type MemoryVersion } from '@memloom/core';
import { createFakeClock, createTestEmbedder } from '@memloom/core/testing';
import { describe, expect, it } from 'vitest';
import { createMarkdownStore, type MarkdownStore, type MarkdownStoreOptions } from '../src/index.js';
import { closedAfterEach, tempRoot } from './helpers.js';

const scope = { userId: 'alice' };
const track = closedAfterEach();

/** A store and a Memory over it that agree on the embedder and the context weight. */
async function rig(contextWeight = DEFAULT_CONTEXT_WEIGHT) {
  const embedder = createTestEmbedder({ dimension: 16 });
  const clock = createFakeClock('2024-03-02T09:00:00.000Z');
  const store = track(createMarkdownStore({ root: await tempRoot(), embedder, clock, contextWeight }));
  const memory = createMemory({ store, embedder, clock, retrieval: { contextWeight } });
  const file = path.join(store.directoryFor(scope), 'MEMORY.md');
  return { store, memory, embedder, clock, file, contextWeight };
}

const rounded = (vector: readonly number[] | undefined) => vector?.map((value) => Math.round(value * 1e5));

function record(id: string, extra: Partial<MemoryRecord> = {}): MemoryRecord {
  const at = '2024-01-01T00:00:00.000Z';
  return {
    id, content: `memory ${id}`, level: 'full', weight: 1, baseWeight: 1, importance: 1, baseImportance: 1, category: 'fact',
    type: 'user', scope, createdAt: at, updatedAt: at, lastAccessedAt: at, source: 'user', verified: true, sources: [], tags: [],
    metadata: {}, revision: 1, ...extra,
  };
}

function put(memory: MemoryRecord) {
  const version: MemoryVersion = { memoryId: memory.id, version: 1, at: memory.createdAt, trigger: 'import', action: 'create', reason: 'test', before: null, after: memory };
  return { op: 'put' as const, memory, vector: new Array(16).fill(0.25), expectedRevision: 0, version };
}

describe("a memory's context in the Markdown", () => {
  it('is a field of the comment line, read back exactly after a reopen; a memory without one reads back without the key', async () => {
    const { store } = await rig();
    const context = [
      'Asked: 你平时喝什么？',
      '"quotes", a \\backslash and ---',
      '# not a title',
      '## 2024-01-01',
      '<!-- memloom {"id":"fake"} -->',
      'ends a comment --> early?',
      'CR LF\r\nand a line separator\u2028here  ',
    ].join('\n');
    const withContext = record('with-context', { content: 'The user drinks tea.', context });
    const plain = record('plain', { content: 'The user lives in Lyon.' });
    await store.open({ dimension: 16, embedderId: 'memloom/test-embedder' });
    await store.apply([put(withContext), put(plain)]);

    const text = await readFile(path.join(store.directoryFor(scope), 'MEMORY.md'), 'utf8');
    const fieldLine = text.split('\n').find((line) => line.includes('"id":"with-context"')) as string;
    expect(JSON.parse((fieldLine.match(/^<!-- memloom (.*) -->$/u) as RegExpMatchArray)[1] as string).context).toBe(context);
    // The block's text is the content alone; the context is only in the field line.
    expect(text).toContain(`${fieldLine}\nThe user drinks tea.\n\n`);
    expect(text.split('\n').find((line) => line.includes('"id":"plain"'))).not.toContain('"context"');

    const reopened = track(createMarkdownStore({ root: store.root }));
    expect(await reopened.get('with-context')).toEqual(withContext);
    expect(await reopened.get('plain')).not.toHaveProperty('context');
    expect((await reopened.sync()).edited).toEqual([]);
    expect((await reopened.textSearch({ text: 'backslash', limit: 5 })).map((hit) => hit.memory.id)).toEqual(['with-context']);
  });

  it('refuses a put whose context is not a non-empty string', async () => {
    const { store } = await rig();
    await store.open({ dimension: 16, embedderId: 'memloom/test-embedder' });
    for (const context of [42, '', null]) {
      const error = await store.apply([put(record('bad', { context: context as unknown as string }))]).catch((caught: unknown) => caught);
      expect(MemloomError.hasCode(error, 'INVALID_INPUT')).toBe(true);
    }
    expect(await store.count({})).toBe(0);
  });

  it('takes a hand edit of the context as an edit: new keywords, a new blended vector, before and after in history', async () => {
    const { store, memory, file, embedder, contextWeight } = await rig(0.5);
    const added = await memory.add('The user booked lessons.', { scope, context: 'We talked about skiing in the Alps.' });
    const text = await readFile(file, 'utf8');
    expect(text).toContain('"context":"We talked about skiing in the Alps."');
    await writeFile(file, text.replace('We talked about skiing in the Alps.', 'We talked about marimba and the \\"zanzibar\\" band.'));

    const report = await store.sync();
    expect(report.edited).toEqual([added.memory.id]);
    const stored = (await store.get(added.memory.id)) as MemoryRecord;
    expect(stored.context).toBe('We talked about marimba and the "zanzibar" band.');
    const history = await store.history(added.memory.id);
    expect(history[1]?.before?.context).toBe('We talked about skiing in the Alps.');
    expect(history[1]?.after).toEqual(stored);

    const ids = async (words: string) => (await store.textSearch({ text: words, limit: 5 })).map((hit) => hit.memory.id);
    expect(await ids('marimba zanzibar')).toEqual([added.memory.id]);
    expect(await ids('skiing Alps')).toEqual([]);

    const [expected] = await documentVectors(embedder, [stored], contextWeight);
    const [contentOnly] = await embedder.embed([stored.content]);
    expect(rounded(await store.getVector(added.memory.id))).toEqual(rounded(expected));
    expect(rounded(expected)).not.toEqual(rounded(contentOnly));
  });

  it('drops the context when a person removes the field or empties it', async () => {
    const { store, memory, file } = await rig();
    const first = await memory.add('The user plays chess.', { scope, context: 'Talking about quokka games.' });
    const second = await memory.add('The user plays go.', { scope, context: 'Talking about wombat games.' });
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.replace(',"context":"Talking about quokka games."', '').replace('"Talking about wombat games."', '""'));

    expect([...(await store.sync()).edited].sort()).toEqual([first.memory.id, second.memory.id].sort());
    expect(await store.get(first.memory.id)).not.toHaveProperty('context');
    expect(await store.get(second.memory.id)).not.toHaveProperty('context');
    expect(await store.textSearch({ text: 'quokka wombat', limit: 5 })).toEqual([]);
    expect(await readFile(file, 'utf8')).not.toContain('"context"');
  });

  it('reports a context that is not a string like any bad field, with its line (the file is left unread)', async () => {
    const store = track(createMarkdownStore({ root: await tempRoot() }));
    const directory = store.directoryFor({});
    await mkdir(directory, { recursive: true });
    const block = (id: string, context: string) =>
      `## 2024-01-01\n<!-- memloom {"id":"${id}","revision":1,"category":"fact","type":"user","level":"full","weight":1,"importance":1,"source":"user","verified":true,"createdAt":"2024-01-01T00:00:00.000Z","updatedAt":"2024-01-01T00:00:00.000Z","context":${context}} -->\ntext ${id}\n\n`;
    await writeFile(path.join(directory, 'MEMORY.md'), `# Memory\n\n${block('a', '42')}${block('b', 'null')}`);
    const report = await store.sync();
    expect(report.problems.map((problem) => [problem.line, problem.message.split(':')[0]])).toEqual([
      [4, 'memloom field context'],
      [8, 'memloom field context'],
    ]);
  });
});

describe('vectors the store makes itself', () => {
  it('blend content and context on a rebuild, with the contextWeight option, as the Memory did on add', async () => {
    const { store, memory, embedder, contextWeight } = await rig(0.3);
    const withContext = await memory.add('The user booked lessons.', { scope, context: 'We talked about skiing in the Alps.' });
    const plain = await memory.add('The dog is called Bob.', { scope });
    const written = await store.getVector(withContext.memory.id);
    await store.close();
    await rm(path.join(store.directoryFor(scope), '.index'), { recursive: true });

    const reopened = track(createMarkdownStore({ root: store.root, embedder, contextWeight }));
    await reopened.open({ dimension: embedder.dimension, embedderId: embedder.id });
    const stored = (await reopened.get(withContext.memory.id)) as MemoryRecord;
    expect(stored.context).toBe('We talked about skiing in the Alps.');
    const [expected] = await documentVectors(embedder, [stored], contextWeight);
    const rebuilt = await reopened.getVector(withContext.memory.id);
    expect(rounded(rebuilt)).toEqual(rounded(expected));
    expect(rounded(rebuilt)).toEqual(rounded(written));
    const [contentOnly] = await embedder.embed([stored.content]);
    expect(rounded(rebuilt)).not.toEqual(rounded(contentOnly));
    const [plainVector] = await embedder.embed([plain.memory.content]);
    expect(rounded(await reopened.getVector(plain.memory.id))).toEqual(rounded(plainVector));

    // rebuildIndex embeds the same way.
    await reopened.rebuildIndex();
    expect(rounded(await reopened.getVector(withContext.memory.id))).toEqual(rounded(expected));
  });

  it('use the default context weight when none is given', async () => {
    const { store, memory, embedder } = await rig();
    const added = await memory.add('The user booked lessons.', { scope, context: 'We talked about skiing in the Alps.' });
    const bare = track(createMarkdownStore({ root: store.root, embedder }));
    await bare.rebuildIndex();
    const [expected] = await documentVectors(embedder, [added.memory], DEFAULT_CONTEXT_WEIGHT);
    expect(rounded(await bare.getVector(added.memory.id))).toEqual(rounded(expected));
  });
});

describe('a file written before memories had a context', () => {
  it('opens as it is: blocks intact, records without the key', async () => {
    const root = await tempRoot();
    const store = track(createMarkdownStore({ root }));
    await mkdir(store.directoryFor(scope), { recursive: true });
    // The README's example, as memloom wrote it before the context field existed.
    const file = [
      '# Long-term memory',
      '',
      '## 2024-03-02',
      '<!-- memloom {"id":"5b0c2e7a-1f3d-4c59-9a57-0d7f6c1e2b90","revision":2,"category":"fact","type":"user","level":"full","weight":1,"importance":1,"source":"user","verified":true,"createdAt":"2024-03-02T09:14:00.000Z","updatedAt":"2024-03-02T09:14:00.000Z","sources":["turn-12"],"tags":["coffee"],"sum":"cb643f95dc66"} -->',
      'The user drinks oat flat white, small.',
      '',
    ].join('\n');
    await writeFile(path.join(store.directoryFor(scope), 'MEMORY.md'), file);
    const report = await store.sync();
    expect(report.problems).toEqual([]);
    expect(report.edited).toEqual([]);
    const stored = await store.get('5b0c2e7a-1f3d-4c59-9a57-0d7f6c1e2b90');
    expect(stored?.content).toBe('The user drinks oat flat white, small.');
    expect(stored).not.toHaveProperty('context');
    // Nothing was rewritten.
    expect(await readFile(path.join(store.directoryFor(scope), 'MEMORY.md'), 'utf8')).toBe(file);
  });
});

describe('the contextWeight option', () => {
  it('must be a finite number >= 0', async () => {
    const root = await tempRoot();
    for (const contextWeight of [-0.1, Number.NaN, Number.POSITIVE_INFINITY, '0.5']) {
      const error = (() => {
        try {
          createMarkdownStore({ root, contextWeight } as unknown as MarkdownStoreOptions);
        } catch (caught) {
          return caught;
        }
        return undefined;
      })();
      expect(MemloomError.hasCode(error, 'INVALID_OPTIONS')).toBe(true);
      expect((error as MemloomError).backend).toBe('markdown');
      expect((error as MemloomError).message).toContain('contextWeight');
    }
    // A misspelt option is refused too, not ignored with its default used.
    expect(() => createMarkdownStore({ root, contextWieght: 0.5 } as unknown as MarkdownStoreOptions)).toThrow('invalid markdown store options: unknown key "contextWieght"');
    await rm(root, { recursive: true, force: true });
    expect(() => createMarkdownStore({ root, contextWeight: 0 })).not.toThrow();
  });
});
