import { existsSync } from 'node:fs';
import { lstat, mkdir, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createMemory, MemloomError } from '@memloom/core';
import { createFakeClock, createTestEmbedder } from '@memloom/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createMarkdownStore, HAND_DELETE_GRACE_MS, type MarkdownStore } from '../src/index.js';
import { removeStoreFiles, tempRoot } from './helpers.js';

const dimensions = { dimension: 16, embedderId: 'memloom/test-embedder' };

let store: MarkdownStore | undefined;
afterEach(async () => {
  if (!store) return;
  await store.close();
  await removeStoreFiles(store);
  store = undefined;
});

describe('a file that cannot be read', () => {
  it('is reported with path and line, left untouched, and the rest of the store keeps working', async () => {
    const embedder = createTestEmbedder({ dimension: 16 });
    const clock = createFakeClock('2024-03-02T09:00:00.000Z');
    const warnings: string[] = [];
    store = createMarkdownStore({ root: await tempRoot(), embedder, clock, logger: { warn: (message) => warnings.push(message) } });
    const memory = createMemory({ store, embedder, clock });
    const alice = { userId: 'alice' };
    const bob = { userId: 'bob' };
    const kept = await memory.add('Alice keeps bees.', { scope: alice });
    const damaged = await memory.add('Alice plays the cello.', { scope: alice });
    await memory.add('Bob sails on weekends.', { scope: bob });

    const file = path.join(store.directoryFor(alice), 'MEMORY.md');
    const text = await readFile(file, 'utf8');
    const broken = text.replace(`{"id":"${damaged.memory.id}"`, `{"id":"${damaged.memory.id}",,`);
    await writeFile(file, broken);
    const lineOfDamage = broken.split('\n').findIndex((line) => line.includes(',,')) + 1;

    const report = await store.sync();
    expect(report.problems).toEqual([
      { path: 'users/alice/memory/MEMORY.md', line: lineOfDamage, message: expect.stringMatching(/not valid JSON/u), scope: { userId: 'alice' } },
    ]);
    expect(store.problems()).toEqual(report.problems);
    expect(warnings.some((warning) => warning.includes(`users/alice/memory/MEMORY.md:${lineOfDamage}`))).toBe(true);
    // Nothing was taken as deleted: the damaged block's memory is still there as it was.
    expect((await store.get(damaged.memory.id))?.content).toBe('Alice plays the cello.');
    expect((await store.get(kept.memory.id))?.content).toBe('Alice keeps bees.');
    expect(await store.history(damaged.memory.id)).toHaveLength(1);

    // Writes to another scope work; the broken file is never rewritten.
    await memory.add('Bob fixes old radios.', { scope: bob });
    expect(await store.count({ scope: bob })).toBe(2);
    const error = await memory.add('Alice moved to Porto.', { scope: alice }).catch((caught: unknown) => caught);
    expect(MemloomError.hasCode(error, 'STORE_CORRUPT')).toBe(true);
    expect((error as MemloomError).message).toContain(`users/alice/memory/MEMORY.md:${lineOfDamage}`);
    expect((error as MemloomError).backend).toBe('markdown');
    expect(await readFile(file, 'utf8')).toBe(broken);

    // Once a person fixes the line, everything works again.
    await writeFile(file, text);
    expect((await store.sync()).problems).toEqual([]);
    await memory.add('Alice moved to Porto.', { scope: alice });
    expect(await store.count({ scope: alice })).toBe(3);
  });

  it('reports bad field values and a block with no text, each with its line', async () => {
    store = createMarkdownStore({ root: await tempRoot() });
    const directory = store.directoryFor({});
    await mkdir(directory, { recursive: true });
    const block = (id: string, extra: string) =>
      `## 2024-01-01\n<!-- memloom {"id":"${id}","revision":1,"category":"fact","type":"user","level":"full","weight":1,"importance":1,"source":"user","verified":true,"createdAt":"2024-01-01T00:00:00.000Z","updatedAt":"2024-01-01T00:00:00.000Z"${extra}} -->\n`;
    await writeFile(
      path.join(directory, 'MEMORY.md'),
      `# Memory\n\n${block('a', ',"category":"gossip"').replace('"category":"fact",', '')}text a\n\n${block('b', '')}\n${block('c', ',"weight":"heavy"').replace('"weight":1,', '')}text c\n`,
    );
    const report = await store.sync();
    expect(report.problems.map((problem) => [problem.line, problem.message.split(':')[0]])).toEqual([
      [4, 'memloom field category'],
      [7, 'memory b has no text; write its text under the heading or delete the whole block'],
      [11, 'memloom field weight'],
    ]);
  });
  it('reports a field time on a day the calendar does not have, at hour 24 or without an offset, as a bad value with its line instead of shifting it', async () => {
    store = createMarkdownStore({ root: await tempRoot() });
    const directory = store.directoryFor({});
    await mkdir(directory, { recursive: true });
    const block = (id: string, field: string, value: unknown) =>
      `## 2024-01-01\n<!-- memloom ${JSON.stringify({ id, revision: 1, category: 'fact', type: 'user', level: 'full', weight: 1, importance: 1, source: 'user', verified: true, createdAt: '2024-01-01T00:00:00.000Z', updatedAt: '2024-01-01T00:00:00.000Z', [field]: value })} -->\ntext ${id}\n\n`;
    await writeFile(
      path.join(directory, 'MEMORY.md'),
      `# Memory\n\n${block('a', 'createdAt', '2024-02-30T09:00:00.000Z')}${block('b', 'updatedAt', '2023-02-29T09:00:00.000Z')}` +
        `${block('c', 'lastAccessedAt', '2024-03-01T24:00:00.000Z')}${block('d', 'createdAt', '2024-02-29T09:00:00.000Z')}` +
        // Without Z or an offset, Date.parse would read the machine's local time: another instant on another machine.
        `${block('e', 'updatedAt', '2024-03-01T09:00')}${block('f', 'createdAt', '2024-03-01T11:00+02:00')}` +
        // A tag core never writes (empty), which export and import would refuse. An importance above 100 is read:
        // files written before defaults.importance had its maximum may hold one.
        `${block('g', 'importance', 500 as never)}${block('h', 'tags', [''] as never)}`,
    );
    const report = await store.sync();
    expect(report.problems.map((problem) => [problem.line, problem.message.split(':')[0]])).toEqual([
      [4, 'memloom field createdAt'],
      [8, 'memloom field updatedAt'],
      [12, 'memloom field lastAccessedAt'],
      [20, 'memloom field updatedAt'],
      [32, 'memloom field tags.0'],
    ]);
    expect(report.problems[3]?.message).toContain('with Z or an offset');
  });
});

describe('a Markdown file not saved as UTF-8', () => {
  it('is reported with its path (UTF-16 with or without a byte order mark, Windows-1252), never written, and nothing in it is deleted', async () => {
    const embedder = createTestEmbedder({ dimension: 16 });
    const clock = createFakeClock('2024-03-02T09:00:00.000Z');
    store = createMarkdownStore({ root: await tempRoot(), embedder, clock });
    const memory = createMemory({ store, embedder, clock });
    const alice = { userId: 'alice' };
    const cafe = await memory.add('The user drinks café crème.', { scope: alice });
    await memory.add('Project A is due on March 15.', { scope: alice });
    const contents = ['Project A is due on March 15.', 'The user drinks café crème.'];
    const file = path.join(store.directoryFor(alice), 'MEMORY.md');
    const histories = path.join(store.directoryFor(alice), '.history');
    const text = await readFile(file, 'utf8');
    const utf16 = Buffer.from(text, 'utf16le');
    const variants: Array<[string, Buffer, number, RegExp]> = [
      ['UTF-16 LE with a byte order mark', Buffer.concat([Buffer.from([0xff, 0xfe]), utf16]), 1, /saved as UTF-16/u],
      ['UTF-16 BE with a byte order mark', Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(utf16).swap16()]), 1, /saved as UTF-16/u],
      ['UTF-16 LE without one', utf16, 1, /saved as UTF-16/u],
      ['Windows-1252', Buffer.from(text, 'latin1'), text.split('\n').findIndex((line) => line.includes('café')) + 1, /not valid UTF-8/u],
    ];
    for (const [name, bytes, line, message] of variants) {
      await writeFile(file, bytes);
      const report = await store.sync();
      expect(report.problems, name).toEqual([{ path: 'users/alice/memory/MEMORY.md', line, message: expect.stringMatching(message), scope: { userId: 'alice' } }]);
      expect(report, name).toMatchObject({ created: [], edited: [], deleted: [] });
      expect((await store.list({ scope: alice })).map((record) => record.content).sort(), name).toEqual(contents);
      expect(await store.history(cafe.memory.id), name).toHaveLength(1);
      const error = await memory.add('The user moved to Porto.', { scope: alice }).catch((caught: unknown) => caught);
      expect(MemloomError.hasCode(error, 'STORE_CORRUPT'), name).toBe(true);
      expect(await readFile(file), name).toEqual(bytes);
      // A store opened over it does not list its memories (it cannot read them) and deletes none of their histories.
      const other = createMarkdownStore({ root: store.root, clock });
      expect((await other.sync()).problems, name).toEqual(report.problems);
      clock.advance(HAND_DELETE_GRACE_MS);
      expect(await other.count({}), name).toBe(0);
      expect(await readdir(histories), name).toHaveLength(2);
      await other.close();
    }

    // Saved as UTF-8 again, everything is as it was.
    await writeFile(file, text);
    expect(await store.sync()).toMatchObject({ created: [], edited: [], deleted: [], problems: [] });
    expect((await store.list({ scope: alice })).map((record) => record.content).sort()).toEqual(contents);
    expect(await store.get(cafe.memory.id)).toMatchObject({ revision: 1 });
  });
});

describe('a Chinese MEMORY.md saved as GBK by an editor', () => {
  it('names GBK/GB18030 and the line, and problems(scope) gives it to the scopes whose memories it holds', async () => {
    const embedder = createTestEmbedder({ dimension: 16 });
    store = createMarkdownStore({ root: await tempRoot(), embedder });
    const memory = createMemory({ store, embedder });
    const xiaoming = { userId: '小明' };
    const withAgent = { userId: '小明', agentId: '助手' };
    await memory.add('我喜欢吃火锅。', { scope: withAgent });
    await memory.add('Bob sails on weekends.', { scope: { userId: 'bob' } });
    const file = path.join(store.directoryFor(withAgent), 'MEMORY.md');
    const text = await readFile(file, 'utf8');
    const lineOfText = text.split('\n').indexOf('我喜欢吃火锅。') + 1;
    // The same file as GBK: the memory's characters are two bytes each (火锅 is BB F0 B9 F8), the rest ASCII.
    const [before, after] = text.split('我喜欢吃火锅。') as [string, string];
    await writeFile(file, Buffer.concat([Buffer.from(before), Buffer.from('ced2cfb2bbb6b3d4bbf0b9f8a1a3', 'hex'), Buffer.from(after)]));

    const [problem] = (await store.sync()).problems;
    expect(problem).toEqual({
      path: 'users/%E5%B0%8F%E6%98%8E/agents/%E5%8A%A9%E6%89%8B/memory/MEMORY.md',
      line: lineOfText,
      message: expect.stringContaining('not valid UTF-8 (saved in another encoding, such as GBK/GB18030'),
      scope: withAgent,
    });
    // As list({ scope }) reads: the user's scope holds the agent's memories too; bob's and the agent's other user's do not.
    expect(store.problems(xiaoming)).toEqual([problem]);
    expect(store.problems(withAgent)).toEqual([problem]);
    expect(store.problems({ agentId: '助手' })).toEqual([problem]);
    expect(store.problems({})).toEqual([problem]);
    expect(store.problems({ userId: 'bob' })).toEqual([]);
    expect(store.problems({ userId: '小明', agentId: 'other' })).toEqual([]);
    expect(() => store!.problems('小明' as never)).toThrow(MemloomError);
  });
});

describe('a hand deletion in a scope that has a file that cannot be read', () => {
  it.each(['a daily note saved as UTF-16', 'a daily note that is a symbolic link'])(
    'waits for %s to change, and reads meanwhile neither take the lock nor warn again',
    async (kind) => {
      const warnings: string[] = [];
      const embedder = createTestEmbedder({ dimension: 16 });
      const clock = createFakeClock('2024-03-02T09:00:00.000Z');
      const logger = { warn: (message: string) => void warnings.push(message) };
      store = createMarkdownStore({ root: await tempRoot(), embedder, clock, lockTimeoutMs: 200, logger });
      const memory = createMemory({ store, embedder, clock });
      const alice = { userId: 'alice' };
      const doomed = await memory.add('Zanzibar is the password hint.', { scope: alice });
      await memory.add('The user lives in Lyon.', { scope: alice });
      const directory = store.directoryFor(alice);
      const note = path.join(directory, '202403', '20240301.md');
      const noteText = '## 2024-03-01\nWent to the market.\n';
      await mkdir(path.dirname(note), { recursive: true });
      const vault = await tempRoot('memloom-md-vault-');
      if (kind.includes('UTF-16')) {
        await writeFile(note, Buffer.from(`\ufeff${noteText}`, 'utf16le'));
      } else {
        await writeFile(path.join(vault, 'note.md'), noteText);
        await symlink(path.join(vault, 'note.md'), note);
      }
      const file = path.join(directory, 'MEMORY.md');
      const text = await readFile(file, 'utf8');
      const start = text.indexOf('## ');
      await writeFile(file, text.slice(0, start) + text.slice(text.indexOf('## ', start + 3)));
      const report = await store.sync();
      expect(report.deleted).toEqual([doomed.memory.id]);
      expect(report.problems).toEqual([expect.objectContaining({ path: 'users/alice/memory/202403/20240301.md' })]);

      // The wait is over, but the block may be in the note: the history stays. Reads do not look again for it,
      // so they answer while another process holds the lock (a long write) and warn nothing new.
      clock.advance(HAND_DELETE_GRACE_MS);
      warnings.length = 0;
      const lock = path.join(store.root, '.memloom', 'lock');
      await mkdir(lock);
      await writeFile(path.join(lock, 'owner.json'), JSON.stringify({ pid: process.pid, host: os.hostname(), token: 'another-process' }));
      for (let read = 0; read < 3; read++) expect(await store.count({})).toBe(1);
      expect(warnings).toEqual([]);
      await rm(lock, { recursive: true });
      const history = path.join(directory, '.history', `${doomed.memory.id}.jsonl`);
      expect(existsSync(history)).toBe(true);
      // A change elsewhere in the scope is looked at; the deletion still waits for the note.
      await writeFile(file, `${await readFile(file, 'utf8')}\n## 2024-03-02\nThe user likes chess.\n`);
      expect((await store.sync()).created).toHaveLength(1);
      expect(existsSync(history)).toBe(true);

      // The note fixed (saved as UTF-8, the file itself in place of the link): the next read settles the deletion.
      await rm(note);
      await writeFile(note, noteText);
      expect(await store.count({})).toBe(3);
      expect(existsSync(history)).toBe(false);
      expect(store.problems()).toEqual([]);
      await rm(vault, { recursive: true, force: true });
    },
  );
});

describe('a Markdown file that is a symbolic link', () => {
  it('is reported like a file that cannot be read: never written through, and nothing in it is deleted', async () => {
    const embedder = createTestEmbedder({ dimension: 16 });
    const root = await tempRoot();
    const first = createMarkdownStore({ root, embedder });
    const memory = createMemory({ store: first, embedder });
    const alice = { userId: 'alice' };
    const added = await memory.add('Alice keeps bees.', { scope: alice });
    await first.close();
    // A dotfile manager keeps the real file elsewhere and links it in.
    const directory = first.directoryFor(alice);
    const file = path.join(directory, 'MEMORY.md');
    const vault = await tempRoot('memloom-md-vault-');
    const target = path.join(vault, 'MEMORY.md');
    await rename(file, target);
    await symlink(target, file);
    const text = await readFile(target, 'utf8');

    store = createMarkdownStore({ root, embedder });
    await store.open(dimensions);
    const problem = { path: 'users/alice/memory/MEMORY.md', line: 1, message: expect.stringMatching(/symbolic link/u), scope: { userId: 'alice' } };
    expect(store.problems()).toEqual([problem]);
    expect((await store.sync()).deleted).toEqual([]);
    const error = await createMemory({ store, embedder }).add('Alice moved to Porto.', { scope: alice }).catch((caught: unknown) => caught);
    expect(MemloomError.hasCode(error, 'STORE_CORRUPT')).toBe(true);
    expect((error as MemloomError).message).toContain('users/alice/memory/MEMORY.md:1');
    // The link is still a link to the file as it was, and the history is still there.
    expect((await lstat(file)).isSymbolicLink()).toBe(true);
    expect(await readFile(target, 'utf8')).toBe(text);
    expect(await readdir(path.join(directory, '.history'))).toHaveLength(1);

    // The file itself back in place: the memory is there again, with its history.
    await rm(file);
    await rename(target, file);
    expect((await store.sync()).problems).toEqual([]);
    expect((await store.get(added.memory.id))?.content).toBe('Alice keeps bees.');
    expect(await store.history(added.memory.id)).toHaveLength(1);
    await rm(vault, { recursive: true, force: true });
  });
});

describe('a folder that is a symbolic link', () => {
  it('as a month folder of daily notes: reported, never written through, and nothing behind it is deleted', async () => {
    const embedder = createTestEmbedder({ dimension: 16 });
    const clock = createFakeClock('2024-03-06T09:00:00.000Z');
    const root = await tempRoot();
    const first = createMarkdownStore({ root, embedder, clock });
    const alice = { userId: 'alice' };
    const episode = await createMemory({ store: first, embedder, clock }).add('Talked about the trip to Lyon.', { scope: alice, category: 'episode' });
    await first.close();
    const directory = first.directoryFor(alice);
    const month = path.join(directory, '202403');
    const vault = await tempRoot('memloom-md-vault-');
    await rename(month, path.join(vault, '202403'));
    await symlink(path.join(vault, '202403'), month);
    const note = await readFile(path.join(vault, '202403', '20240306.md'), 'utf8');

    store = createMarkdownStore({ root, embedder, clock });
    const memory = createMemory({ store, embedder, clock });
    await store.open(dimensions);
    const problem = { path: 'users/alice/memory/202403', line: 1, message: expect.stringMatching(/symbolic link/u), scope: { userId: 'alice' } };
    expect(store.problems()).toEqual([problem]);
    expect((await store.sync()).deleted).toEqual([]);
    // A note of that month is not written through the link; MEMORY.md, beside it, is written as ever.
    const error = await memory.add('Booked the train for Friday.', { scope: alice, category: 'episode' }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'STORE_CORRUPT', backend: 'markdown' });
    expect((error as MemloomError).message).toContain('users/alice/memory/202403:1');
    await memory.add('Alice keeps bees.', { scope: alice });
    expect((await lstat(month)).isSymbolicLink()).toBe(true);
    expect(await readdir(path.join(vault, '202403'))).toEqual(['20240306.md']);
    expect(await readFile(path.join(vault, '202403', '20240306.md'), 'utf8')).toBe(note);
    expect(await readdir(path.join(directory, '.history'))).toHaveLength(2);

    // The folder itself back in place: the episode is there again, with its history.
    await rm(month);
    await rename(path.join(vault, '202403'), month);
    expect((await store.sync()).problems).toEqual([]);
    expect((await store.get(episode.memory.id))?.content).toBe('Talked about the trip to Lyon.');
    expect(await store.history(episode.memory.id)).toHaveLength(1);
    await rm(vault, { recursive: true, force: true });
  });

  it('as a month folder replaced by a link while the store is open: its memories are kept, and not written through', async () => {
    const embedder = createTestEmbedder({ dimension: 16 });
    const clock = createFakeClock('2024-03-06T09:00:00.000Z');
    const warnings: string[] = [];
    store = createMarkdownStore({ root: await tempRoot(), embedder, clock, logger: { warn: (message) => warnings.push(message) } });
    const memory = createMemory({ store, embedder, clock });
    const alice = { userId: 'alice' };
    const episode = await memory.add('Talked about the trip to Lyon.', { scope: alice, category: 'episode' });
    const month = path.join(store.directoryFor(alice), '202403');
    const vault = await tempRoot('memloom-md-vault-');
    await rename(month, path.join(vault, '202403'));
    await symlink(path.join(vault, '202403'), month);

    const report = await store.sync();
    expect(report.deleted).toEqual([]);
    expect(report.problems).toEqual([{ path: 'users/alice/memory/202403', line: 1, message: expect.stringMatching(/symbolic link/u), scope: { userId: 'alice' } }]);
    // Reads serve what was read before the link came, and do not read the folder again each time (nor warn again).
    const warned = warnings.length;
    expect((await store.get(episode.memory.id))?.content).toBe('Talked about the trip to Lyon.');
    expect(await store.count({})).toBe(1);
    expect(warnings).toHaveLength(warned);
    expect(await store.history(episode.memory.id)).toHaveLength(1);
    const error = await memory.update(episode.memory.id, { content: 'Talked about the trip to Lyon and Porto.' }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'STORE_CORRUPT', backend: 'markdown' });
    expect((error as MemloomError).message).toContain('users/alice/memory/202403:1');
    expect(await readFile(path.join(vault, '202403', '20240306.md'), 'utf8')).toContain('Talked about the trip to Lyon.\n');
    await rm(vault, { recursive: true, force: true });
  });

  it('as a scope folder or its memory/ folder: reported, never written through (Markdown or policy), other scopes work', async () => {
    const embedder = createTestEmbedder({ dimension: 16 });
    const root = await tempRoot();
    const first = createMarkdownStore({ root, embedder });
    const alice = { userId: 'alice' };
    const carol = { userId: 'carol' };
    await createMemory({ store: first, embedder }).add('Alice keeps bees.', { scope: alice });
    await createMemory({ store: first, embedder }).add('Carol paints.', { scope: carol });
    await first.close();
    const vault = await tempRoot('memloom-md-vault-');
    await rename(path.join(root, 'users', 'alice'), path.join(vault, 'alice'));
    await symlink(path.join(vault, 'alice'), path.join(root, 'users', 'alice'));
    await rename(path.join(root, 'users', 'carol', 'memory'), path.join(vault, 'carol-memory'));
    await symlink(path.join(vault, 'carol-memory'), path.join(root, 'users', 'carol', 'memory'));
    const before = await readFile(path.join(vault, 'alice', 'memory', 'MEMORY.md'), 'utf8');

    store = createMarkdownStore({ root, embedder });
    const memory = createMemory({ store, embedder });
    await store.open(dimensions);
    const message = expect.stringMatching(/symbolic link/u);
    // Each link has the scope its place names, so only the reads that it may hide memories of see it.
    const aliceLink = { path: 'users/alice', line: 1, message, scope: alice, innerKeys: ['agentId', 'sessionId'] };
    const carolLink = { path: 'users/carol/memory', line: 1, message, scope: carol };
    expect(store.problems()).toEqual([aliceLink, carolLink]);
    expect(store.problems(alice)).toEqual([aliceLink]);
    expect(store.problems({ userId: 'alice', sessionId: 's1' })).toEqual([aliceLink]);
    expect(store.problems(carol)).toEqual([carolLink]);
    expect(store.problems({ userId: 'carol', sessionId: 's1' })).toEqual([]);
    expect(store.problems({ userId: 'bob' })).toEqual([]);
    expect(store.problems({ agentId: 'helper' })).toEqual([aliceLink]);
    for (const [scope, shown] of [[alice, 'users/alice:1'], [carol, 'users/carol/memory:1']] as const) {
      const error = await memory.add('Moved to Porto.', { scope }).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'STORE_CORRUPT', backend: 'markdown' });
      expect((error as MemloomError).message).toContain(shown);
      const policyError = await store.policyStorage(scope).writeOverrides({ retrieve_limit: 5 }, new Date()).catch((caught: unknown) => caught);
      expect(policyError).toMatchObject({ code: 'STORE_CORRUPT', backend: 'markdown' });
      expect((policyError as MemloomError).message).toContain(shown);
    }
    expect(await readFile(path.join(vault, 'alice', 'memory', 'MEMORY.md'), 'utf8')).toBe(before);
    expect(await readdir(path.join(vault, 'alice', 'memory'))).not.toContain('policy_overrides.json');
    expect(await readdir(path.join(vault, 'carol-memory'))).not.toContain('policy_overrides.json');
    await memory.add('Bob sails.', { scope: { userId: 'bob' } });
    expect(await store.count({ scope: { userId: 'bob' } })).toBe(1);
    // A link that comes later is seen at the next read.
    await symlink(path.join(vault, 'alice'), path.join(root, 'users', 'dave'));
    await store.count({});
    expect(store.problems().map((problem) => problem.path)).toEqual(['users/alice', 'users/carol/memory', 'users/dave']);
    await rm(vault, { recursive: true, force: true });
  });

  it('as a value folder with a hashed name (a long user id): problems(scope) gives it to that user alone', async () => {
    const embedder = createTestEmbedder({ dimension: 16 });
    const root = await tempRoot();
    const long = { userId: `long-${'x'.repeat(120)}` };
    const first = createMarkdownStore({ root, embedder });
    await createMemory({ store: first, embedder }).add('The long-named user keeps bees.', { scope: long });
    await createMemory({ store: first, embedder }).add('Bob sails.', { scope: { userId: 'bob' } });
    await first.close();
    const [name] = (await readdir(path.join(root, 'users'))).filter((entry) => entry.startsWith('~'));
    expect(name).toBeDefined();
    const vault = await tempRoot('memloom-md-vault-');
    await rename(path.join(root, 'users', name!), path.join(vault, 'long'));
    await symlink(path.join(vault, 'long'), path.join(root, 'users', name!));

    store = createMarkdownStore({ root, embedder });
    await store.open(dimensions);
    const link = {
      path: `users/${name}`,
      line: 1,
      message: expect.stringMatching(/symbolic link/u),
      scope: {},
      innerKeys: ['userId', 'agentId', 'sessionId'],
      hashed: { key: 'userId', name },
    };
    expect(store.problems()).toEqual([link]);
    // Its name is the long id's alone: bob's reads (and deletion) do not see it; the long id's, and every user's, do.
    expect(store.problems({ userId: 'bob' })).toEqual([]);
    expect(store.problems({ userId: 'bob', sessionId: 's1' })).toEqual([]);
    expect(store.problems(long)).toEqual([link]);
    expect(store.problems({ ...long, sessionId: 's1' })).toEqual([link]);
    expect(store.problems({ agentId: 'helper' })).toEqual([link]);
    expect(await store.list({ scope: { userId: 'bob' } })).toHaveLength(1);
    expect(await store.deleteByScope({ userId: 'bob' })).toBe(1);
    await expect(store.deleteByScope(long)).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
    await rm(vault, { recursive: true, force: true });
  });

  it('as a folder of scopes (agents/, a user\'s sessions/): problems(scope) gives it to every scope it may hold', async () => {
    const embedder = createTestEmbedder({ dimension: 16 });
    const root = await tempRoot();
    const vault = await tempRoot('memloom-md-vault-');
    await mkdir(path.join(root, 'users', 'alice'), { recursive: true });
    await mkdir(path.join(vault, 'agents'));
    await mkdir(path.join(vault, 'sessions'));
    await symlink(path.join(vault, 'agents'), path.join(root, 'agents'));
    await symlink(path.join(vault, 'sessions'), path.join(root, 'users', 'alice', 'sessions'));
    store = createMarkdownStore({ root, embedder });
    await createMemory({ store, embedder }).add('Bob sails.', { scope: { userId: 'bob' } });
    const message = expect.stringMatching(/symbolic link/u);
    const agents = { path: 'agents', line: 1, message, scope: {}, innerKeys: ['agentId', 'sessionId'] };
    const sessions = { path: 'users/alice/sessions', line: 1, message, scope: { userId: 'alice' }, innerKeys: ['sessionId'] };
    expect(store.problems()).toEqual([agents, sessions]);
    expect(store.problems({ userId: 'bob' })).toEqual([]);
    expect(store.problems({ userId: 'alice' })).toEqual([sessions]);
    expect(store.problems({ userId: 'alice', sessionId: 's1' })).toEqual([sessions]);
    expect(store.problems({ agentId: 'helper', sessionId: 's1' })).toEqual([agents]);
    expect(store.problems({ sessionId: 's1' })).toEqual([agents, sessions]);
    await rm(vault, { recursive: true, force: true });
  });
});

describe('deleting a scope that has a file it cannot read', () => {
  it('is refused before anything is deleted (the file, or another scope of it), naming the file', async () => {
    const embedder = createTestEmbedder({ dimension: 16 });
    store = createMarkdownStore({ root: await tempRoot(), embedder });
    const memory = createMemory({ store, embedder });
    const alice = { userId: 'alice' };
    await memory.add('Alice keeps bees.', { scope: alice });
    await memory.add('Alice plays the cello.', { scope: { userId: 'alice', sessionId: 's1' } });
    const file = path.join(store.directoryFor(alice), 'MEMORY.md');
    const bytes = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(await readFile(file, 'utf8'), 'utf16le')]);
    await writeFile(file, bytes);

    const error = await store.deleteByScope(alice).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'STORE_CORRUPT', backend: 'markdown', details: { scope: alice, problems: [{ path: 'users/alice/memory/MEMORY.md', line: 1 }] } });
    expect((error as MemloomError).message).toContain('users/alice/memory/MEMORY.md:1: is saved as UTF-16');
    expect(await readFile(file)).toEqual(bytes);
    expect(await store.count({ scope: { userId: 'alice', sessionId: 's1' } })).toBe(1);
    // A scope inside it with none is deleted as before.
    expect(await store.deleteByScope({ userId: 'alice', sessionId: 's1' })).toBe(1);
    expect(await readFile(file)).toEqual(bytes);
  });
});
