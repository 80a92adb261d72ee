import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createMemory, type MemoryChange, type MemoryRecord } from '@memloom/core';
import { createFakeClock, createTestEmbedder } from '@memloom/core/testing';
import { describe, expect, it } from 'vitest';
import { tempPathFor } from '../src/atomic-file.js';
import { createMarkdownStore, HAND_DELETE_GRACE_MS, type MarkdownStore } from '../src/index.js';
import { closedAfterEach, tempRoot } from './helpers.js';

const scope = { userId: 'alice' };
const track = closedAfterEach();

async function rig(root?: string, start = '2024-03-02T09:00:00.000Z') {
  const embedder = createTestEmbedder({ dimension: 16 });
  const clock = createFakeClock(start);
  const store = createMarkdownStore({ root: root ?? (await tempRoot()), embedder, clock });
  track(store);
  const memory = createMemory({ store, embedder, clock });
  const file = path.join(store.directoryFor(scope), 'MEMORY.md');
  return { store, memory, embedder, clock, file };
}

/** A put of a new memory of `scope` with this exact content, as an import would write it. */
function putOf(id: string, content: string): MemoryChange {
  const at = '2024-01-01T00:00:00.000Z';
  const record: MemoryRecord = {
    id, content, level: 'full', weight: 1, baseWeight: 1, importance: 1, baseImportance: 1, category: 'fact', type: 'user', scope,
    createdAt: at, updatedAt: at, lastAccessedAt: at, source: 'user', verified: true, sources: [], tags: [], metadata: {}, revision: 1,
  };
  return {
    op: 'put', memory: record, vector: new Array(16).fill(0.25), expectedRevision: 0,
    version: { memoryId: id, version: 1, at, trigger: 'import', action: 'create', reason: 'test', before: null, after: record },
  };
}

/** Cut the first block out of `from` and append it to `to` (a new MEMORY.md), as a person would. */
async function moveBlockByHand(from: string, to: string): Promise<void> {
  const text = await readFile(from, 'utf8');
  const start = text.indexOf('## ');
  await mkdir(path.dirname(to), { recursive: true });
  await writeFile(to, `# Bob\n\n${text.slice(start)}`);
  await writeFile(from, text.slice(0, start));
}

async function backups(store: MarkdownStore): Promise<string[]> {
  return (await readdir(path.join(store.directoryFor(scope), 'backups')).catch(() => [])).sort();
}

describe('edits made by a person', () => {
  it('turns a changed block into a manual_edit version, keeps the rest, and backs the edit up before rewriting', async () => {
    const { store, memory, file } = await rig();
    const coffee = await memory.add('The user drinks sugar-free latte, large.', { scope });
    const dog = await memory.add('The dog is called Bob.', { scope });
    const original = await readFile(file, 'utf8');
    const edited = original.replace('sugar-free latte, large.', 'oat flat white, small.');
    await writeFile(file, edited);

    const stored = await store.get(coffee.memory.id);
    expect(stored?.content).toBe('The user drinks oat flat white, small.');
    expect(stored?.revision).toBe(2);
    const history = await store.history(coffee.memory.id);
    expect(history.map((version) => [version.version, version.trigger, version.action])).toEqual([
      [1, 'user_mention', 'create'],
      [2, 'manual_edit', 'edit'],
    ]);
    expect(history[1]?.before?.content).toBe('The user drinks sugar-free latte, large.');
    expect(history[1]?.after).toEqual(stored);
    expect(history[1]?.reason).toMatch(/edited by hand in users\/alice\/memory\/MEMORY\.md \(line \d+\)/u);
    // The other memory did not change.
    expect((await store.get(dog.memory.id))?.revision).toBe(1);
    // The file now records revision 2, and the person's exact text is in a backup.
    const rewritten = await readFile(file, 'utf8');
    expect(rewritten).toContain('"revision":2');
    expect(rewritten).toContain('oat flat white, small.');
    const saved = await Promise.all((await backups(store)).map((name) => readFile(path.join(store.directoryFor(scope), 'backups', name), 'utf8')));
    expect(saved).toContain(edited);
    // The new text is what search finds.
    const hits = await memory.search('flat white', { scope });
    expect(hits[0]?.memory.id).toBe(coffee.memory.id);
  });

  it('takes a hand edit of a field (category) as an edit too', async () => {
    const { store, memory, file } = await rig();
    const added = await memory.add('Always answer in French.', { scope });
    await writeFile(file, (await readFile(file, 'utf8')).replace('"category":"fact"', '"category":"core"'));
    const report = await store.sync();
    expect(report.edited).toEqual([added.memory.id]);
    expect((await store.get(added.memory.id))?.category).toBe('core');
  });

  it('turns a deleted block into a deletion, and removes its history and vector once it has held HAND_DELETE_GRACE_MS', async () => {
    const { store, memory, file, clock } = await rig();
    const doomed = await memory.add('Zanzibar is the password hint.', { scope });
    const kept = await memory.add('The user lives in Lyon.', { scope });
    const text = await readFile(file, 'utf8');
    const start = text.indexOf('## ', text.indexOf(doomed.memory.id) - 200);
    const end = text.indexOf('## ', start + 3);
    await writeFile(file, text.slice(0, start) + text.slice(end));

    const report = await store.sync();
    expect(report.deleted).toEqual([doomed.memory.id]);
    expect(await store.get(doomed.memory.id)).toBeUndefined();
    expect(await store.history(doomed.memory.id)).toEqual([]);
    expect(await store.textSearch({ text: 'zanzibar', limit: 5 })).toEqual([]);
    expect((await store.get(kept.memory.id))?.content).toBe('The user lives in Lyon.');

    // On disk the history waits (a look may have caught the file half saved), then goes at the first read after the wait.
    const historyFile = path.join(store.directoryFor(scope), '.history', `${doomed.memory.id}.jsonl`);
    const pending = path.join(store.directoryFor(scope), '.index', 'deleted.log');
    clock.advance(HAND_DELETE_GRACE_MS - 1);
    await store.count({});
    expect([existsSync(historyFile), existsSync(pending)]).toEqual([true, true]);
    clock.advance(1);
    expect(await store.count({})).toBe(1);
    expect([existsSync(historyFile), existsSync(pending)]).toEqual([false, false]);
    const reopened = createMarkdownStore({ root: store.root });
    track(reopened);
    expect(await reopened.sync()).toMatchObject({ created: [], edited: [], deleted: [] });
    expect(await reopened.getVector(doomed.memory.id)).toBeUndefined();
  });

  it('turns a block written by hand into a new memory, gives it an id and writes it back after a backup', async () => {
    const { store, memory, file, embedder, clock } = await rig();
    await memory.add('The user lives in Lyon.', { scope });
    const before = await readFile(file, 'utf8');
    const withNew = `${before}\n## 2024-02-10\nThe user's sister is called Maria.\nShe lives in Madrid.\n`;
    await writeFile(file, withNew);

    const report = await store.sync();
    expect(report.created).toHaveLength(1);
    const id = report.created[0] as string;
    // A time-ordered UUID (version 7) at the store's clock.
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/u);
    expect(Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16)).toBe(clock.now());
    const created = (await store.get(id)) as MemoryRecord;
    expect(created).toMatchObject({
      content: "The user's sister is called Maria.\nShe lives in Madrid.",
      scope,
      revision: 1,
      category: 'fact',
      source: 'user',
      createdAt: '2024-02-10T00:00:00.000Z',
    });
    expect((await store.history(id)).map((version) => [version.trigger, version.action])).toEqual([['manual_edit', 'create']]);
    expect(await readFile(file, 'utf8')).toContain(`"id":"${id}"`);
    const saved = await Promise.all((await backups(store)).map((name) => readFile(path.join(store.directoryFor(scope), 'backups', name), 'utf8')));
    expect(saved).toContain(withNew);
    // Its vector came from the store's embedder, the same one the Memory uses.
    const [expected] = await embedder.embed([created.content]);
    const vector = await store.getVector(id);
    expect(vector?.map((value) => Math.round(value * 1e5))).toEqual(expected?.map((value) => Math.round(value * 1e5)));
    expect((await memory.search('sister Maria Madrid', { scope }))[0]?.memory.id).toBe(id);
  });

  it('refuses a block written by hand under a date the calendar does not have (2024-02-30) instead of shifting it, naming file and line', async () => {
    const { store, memory, file } = await rig();
    await memory.add('The user lives in Lyon.', { scope });
    const before = await readFile(file, 'utf8');
    const typed = (heading: string) => `${before}\n## ${heading}\nThe user's sister is called Maria.\n`;
    for (const heading of ['2024-02-30', '2023-02-29', '2024-13-01', '2024-04-00']) {
      await writeFile(file, typed(heading));
      const line = typed(heading).split('\n').indexOf(`## ${heading}`) + 1;
      const report = await store.sync();
      expect(report.created, heading).toEqual([]);
      expect(report.problems, heading).toEqual([
        { path: 'users/alice/memory/MEMORY.md', line, message: expect.stringContaining(`${heading} is not a day of the calendar`), scope: { userId: 'alice' } },
      ]);
      // Left as the person wrote it: a write into the file is refused, naming the place to fix.
      const error = await memory.add('The user moved to Porto.', { scope }).catch((caught: unknown) => caught);
      expect(error, heading).toMatchObject({ code: 'STORE_CORRUPT', backend: 'markdown' });
      expect((error as Error).message).toContain(`users/alice/memory/MEMORY.md:${line}`);
      expect(await readFile(file, 'utf8')).toBe(typed(heading));
    }
    // A leap day is a day like any other.
    await writeFile(file, typed('2024-02-29'));
    const report = await store.sync();
    expect(report.problems).toEqual([]);
    expect(await store.get(report.created[0] as string)).toMatchObject({ createdAt: '2024-02-29T00:00:00.000Z' });
  });

  it('makes a new memory of a block added to a daily note, as an episode', async () => {
    const { store, memory } = await rig();
    await memory.add('Talked about the Lyon trip.', { scope, category: 'episode' });
    const daily = path.join(store.directoryFor(scope), '202403', '20240302.md');
    await writeFile(daily, `${await readFile(daily, 'utf8')}\n## 2024-03-02\nBooked the train for Friday.\n`);
    const report = await store.sync();
    expect(report.created).toHaveLength(1);
    expect(await store.get(report.created[0] as string)).toMatchObject({ category: 'episode', content: 'Booked the train for Friday.' });
  });

  it('gives a copied block (same id twice) a new id instead of merging the two', async () => {
    const { store, memory, file } = await rig();
    const original = await memory.add('The user runs on Sundays.', { scope });
    const text = await readFile(file, 'utf8');
    const block = text.slice(text.indexOf('## '));
    await writeFile(file, `${text}\n${block.replace('on Sundays', 'on Sundays and Wednesdays')}`);
    const report = await store.sync();
    expect(report.created).toHaveLength(1);
    expect(report.notices[0]).toMatch(/appears twice/u);
    expect((await store.get(original.memory.id))?.content).toBe('The user runs on Sundays.');
    expect((await store.get(report.created[0] as string))?.content).toBe('The user runs on Sundays and Wednesdays.');
  });

  it('takes a block moved by hand into another scope folder as an edit of its scope, history and all', async () => {
    const { store, memory, file } = await rig();
    const added = await memory.add('The user is learning Portuguese.', { scope });
    const text = await readFile(file, 'utf8');
    const start = text.indexOf('## ');
    const block = text.slice(start);
    const bob = { userId: 'bob' };
    const { mkdir } = await import('node:fs/promises');
    await mkdir(store.directoryFor(bob), { recursive: true });
    await writeFile(path.join(store.directoryFor(bob), 'MEMORY.md'), `# Bob\n\n${block}`);
    await writeFile(file, text.slice(0, start));

    const report = await store.sync();
    expect(report.edited).toEqual([added.memory.id]);
    expect(report.deleted).toEqual([]);
    const moved = await store.get(added.memory.id);
    expect(moved).toMatchObject({ scope: bob, revision: 2, content: 'The user is learning Portuguese.' });
    const history = await store.history(added.memory.id);
    expect(history.map((version) => [version.action, version.after.scope])).toEqual([
      ['create', scope],
      ['edit', bob],
    ]);
    expect(history[1]?.reason).toMatch(/moved by hand to users\/bob\/memory\/MEMORY\.md/u);
    expect(await store.count({ scope })).toBe(0);
    expect((await memory.search('learning Portuguese', { scope: bob }))[0]?.memory.id).toBe(added.memory.id);
  });

  it('keeps the whole history when another store moved a memory to another scope', async () => {
    const root = await tempRoot();
    const a = await rig(root);
    const b = await rig(root);
    const added = await a.memory.add('The user is learning Portuguese.', { scope });
    expect((await b.store.get(added.memory.id))?.scope).toEqual(scope);
    // A moves it to bob (a put with another scope); B still holds it in alice, at revision 1.
    const current = (await a.store.get(added.memory.id)) as MemoryRecord;
    const bob = { userId: 'bob' };
    const moved = { ...current, scope: bob, revision: 2 };
    await a.store.apply([{ op: 'put', memory: moved, expectedRevision: 1, version: {
      memoryId: current.id, version: 2, at: current.updatedAt, trigger: 'manual_edit', action: 'edit', reason: 'moved to bob', before: current, after: moved,
    } }]);

    expect(await b.store.sync()).toMatchObject({ created: [], edited: [], deleted: [] });
    for (const store of [b.store, a.store]) {
      expect(await store.get(added.memory.id)).toMatchObject({ scope: bob, revision: 2 });
      expect((await store.history(added.memory.id)).map((version) => [version.version, version.reason])).toEqual([
        [1, expect.any(String)],
        [2, 'moved to bob'],
      ]);
    }
  });

  it('appends a hand edit of a block another store moved to the history it moved along', async () => {
    const root = await tempRoot();
    const a = await rig(root);
    const b = await rig(root);
    const added = await a.memory.add('The user is learning Portuguese.', { scope });
    await b.store.get(added.memory.id);
    const current = (await a.store.get(added.memory.id)) as MemoryRecord;
    const bob = { userId: 'bob' };
    const moved = { ...current, scope: bob, revision: 2 };
    await a.store.apply([{ op: 'put', memory: moved, expectedRevision: 1, version: {
      memoryId: current.id, version: 2, at: current.updatedAt, trigger: 'manual_edit', action: 'edit', reason: 'moved to bob', before: current, after: moved,
    } }]);
    // A person corrects the block in bob's file before B, which still holds it in alice, looks again.
    const bobFile = path.join(a.store.directoryFor(bob), 'MEMORY.md');
    await writeFile(bobFile, (await readFile(bobFile, 'utf8')).replace('Portuguese', 'Brazilian Portuguese'));

    expect((await b.store.sync()).edited).toEqual([added.memory.id]);
    expect(await b.store.get(added.memory.id)).toMatchObject({ scope: bob, revision: 3, content: 'The user is learning Brazilian Portuguese.' });
    const history = await b.store.history(added.memory.id);
    expect(history.map((version) => [version.version, version.before?.revision ?? null])).toEqual([
      [1, null],
      [2, 1],
      [3, 2],
    ]);
    expect(history[2]?.reason).toMatch(/^edited by hand in users\/bob\/memory\/MEMORY\.md/u);
  });

  it('records a move by hand once, with the history before it, when two stores are open', async () => {
    const root = await tempRoot();
    const a = await rig(root);
    const b = await rig(root);
    const added = await a.memory.add('The user is learning Portuguese.', { scope });
    await b.store.get(added.memory.id);
    const bob = { userId: 'bob' };
    await moveBlockByHand(a.file, path.join(a.store.directoryFor(bob), 'MEMORY.md'));

    expect((await b.store.sync()).edited).toEqual([added.memory.id]);
    // A held the memory in alice at revision 1; B has recorded the move since.
    expect(await a.store.sync()).toMatchObject({ created: [], edited: [], deleted: [] });
    for (const store of [a.store, b.store]) {
      expect(await store.get(added.memory.id)).toMatchObject({ scope: bob, revision: 2 });
      const history = await store.history(added.memory.id);
      expect(history.map((version) => [version.version, version.action, version.after.scope])).toEqual([
        [1, 'create', scope],
        [2, 'edit', bob],
      ]);
      expect(history[1]?.reason).toMatch(/^moved by hand to users\/bob\/memory\/MEMORY\.md/u);
    }
  });

  it('records a move by hand of a block another store updated since this one read it', async () => {
    const root = await tempRoot();
    const a = await rig(root);
    const b = await rig(root);
    const added = await a.memory.add('The user is learning Portuguese.', { scope });
    await b.store.get(added.memory.id);
    await a.memory.update(added.memory.id, { content: 'The user is learning Brazilian Portuguese.' });
    const bob = { userId: 'bob' };
    await moveBlockByHand(a.file, path.join(a.store.directoryFor(bob), 'MEMORY.md'));

    // B holds revision 1 in alice; the block in bob is revision 2, but its history was left in alice.
    expect((await b.store.sync()).edited).toEqual([added.memory.id]);
    expect(await b.store.get(added.memory.id)).toMatchObject({ scope: bob, revision: 3 });
    const history = await b.store.history(added.memory.id);
    expect(history.map((version) => [version.version, version.before?.revision ?? null, version.after.scope])).toEqual([
      [1, null, scope],
      [2, 1, scope],
      [3, 2, bob],
    ]);
    expect(history[2]?.reason).toMatch(/^moved by hand to users\/bob\/memory\/MEMORY\.md/u);
    expect(await readdir(path.join(b.store.directoryFor(scope), '.history'))).toEqual([]);
  });

  it('records a block moved by hand while no process had the store open as a move, history and all', async () => {
    const root = await tempRoot();
    const first = await rig(root);
    const added = await first.memory.add('The user is learning Portuguese.', { scope });
    await first.store.close();
    const bob = { userId: 'bob' };
    await moveBlockByHand(first.file, path.join(first.store.directoryFor(bob), 'MEMORY.md'));

    const second = await rig(root);
    expect(await second.store.get(added.memory.id)).toMatchObject({ scope: bob, revision: 2 });
    const history = await second.store.history(added.memory.id);
    expect(history.map((version) => [version.version, version.action, version.after.scope])).toEqual([
      [1, 'create', scope],
      [2, 'edit', bob],
    ]);
    expect(history[1]?.reason).toMatch(/^moved by hand to users\/bob\/memory\/MEMORY\.md/u);
    expect(await readdir(path.join(second.store.directoryFor(scope), '.history'))).toEqual([]);
    expect(await second.store.getVector(added.memory.id)).toHaveLength(16);
  });

  it('takes a deleted daily note as the deletion of every memory in it', async () => {
    const { store, memory } = await rig();
    const first = await memory.add('Stand-up about the release.', { scope, category: 'episode' });
    const second = await memory.add('Lunch with the design team.', { scope, category: 'episode' });
    const kept = await memory.add('The user lives in Lyon.', { scope });
    const { rm } = await import('node:fs/promises');
    await rm(path.join(store.directoryFor(scope), '202403', '20240302.md'));
    const report = await store.sync();
    expect([...report.deleted].sort()).toEqual([first.memory.id, second.memory.id].sort());
    expect((await store.list({ scope })).map((item) => item.id)).toEqual([kept.memory.id]);
  });

  it('keeps access times (touch) across a reopen, without a version', async () => {
    const root = await tempRoot();
    const first = await rig(root);
    const added = await first.memory.add('The user likes green tea.', { scope });
    await first.store.touch([added.memory.id], '2025-01-01T00:00:00.000Z');
    await first.store.close();
    const second = await rig(root);
    expect(await second.store.get(added.memory.id)).toMatchObject({ lastAccessedAt: '2025-01-01T00:00:00.000Z', revision: 1 });
  });

  it('picks up edits made while no process had the store open', async () => {
    const root = await tempRoot();
    const first = await rig(root);
    const added = await first.memory.add('The user likes green tea.', { scope });
    await first.store.close();
    await writeFile(first.file, (await readFile(first.file, 'utf8')).replace('green tea', 'jasmine tea'));

    const second = await rig(root);
    expect((await second.store.get(added.memory.id))?.content).toBe('The user likes jasmine tea.');
    expect((await second.store.history(added.memory.id)).map((version) => version.action)).toEqual(['create', 'edit']);
  });

  it('sees a block deleted while no process had the store open as a deletion; a later open removes its history after the wait', async () => {
    const root = await tempRoot();
    const first = await rig(root);
    const added = await first.memory.add('A memory to forget.', { scope });
    await first.store.close();
    const text = await readFile(first.file, 'utf8');
    await writeFile(first.file, text.slice(0, text.indexOf('## ')));

    const second = await rig(root);
    expect(await second.store.get(added.memory.id)).toBeUndefined();
    expect(await second.store.count({})).toBe(0);
    const histories = path.join(second.store.directoryFor(scope), '.history');
    expect(await readdir(histories)).toHaveLength(1);
    await second.store.close();

    // The wait is kept on disk (.index/deleted.log), so a process that lives shorter than it still ends it.
    const third = await rig(root, new Date(Date.parse('2024-03-02T09:00:00.000Z') + HAND_DELETE_GRACE_MS).toISOString());
    expect(await third.store.sync()).toMatchObject({ created: [], edited: [], deleted: [] });
    expect(await readdir(histories)).toEqual([]);
  });

  it('gives a block copied by hand into another scope while no process ran a new id, and leaves the original its id and history', async () => {
    const root = await tempRoot();
    const first = await rig(root);
    const bob = { userId: 'bob' };
    const tea = await first.memory.add('Bob likes tea.', { scope: bob });
    await first.memory.update(tea.memory.id, { content: 'Bob likes green tea.' });
    await first.memory.add('Alice likes coffee.', { scope });
    await first.store.close();
    const bobText = await readFile(path.join(first.store.directoryFor(bob), 'MEMORY.md'), 'utf8');
    // Alice's folder sorts first: the copy is read before the original.
    await writeFile(first.file, `${await readFile(first.file, 'utf8')}\n${bobText.slice(bobText.indexOf('## '))}`);

    const second = await rig(root);
    const report = await second.store.sync();
    expect(report.notices).toEqual([expect.stringMatching(new RegExp(`^users/alice/memory/MEMORY\\.md:\\d+: memory ${tea.memory.id} appears twice`, 'u'))]);
    expect(report.edited).toEqual([]);
    expect(await second.store.get(tea.memory.id)).toMatchObject({ scope: bob, revision: 2, content: 'Bob likes green tea.' });
    expect((await second.store.history(tea.memory.id)).map((version) => version.action)).toEqual(['create', 'edit']);
    const [copy] = report.created;
    expect(await second.store.get(copy as string)).toMatchObject({ scope, revision: 1, content: 'Bob likes green tea.' });
  });

  it('does not mistake a blank line slipped in under the heading for an edit', async () => {
    const { store, memory, file } = await rig();
    const added = await memory.add('The user plays chess on Tuesdays.', { scope });
    const text = await readFile(file, 'utf8');
    const heading = text.indexOf('## ');
    const lineEnd = text.indexOf('\n', heading);
    await writeFile(file, `${text.slice(0, lineEnd + 1)}\n${text.slice(lineEnd + 1)}`);
    const report = await store.sync();
    expect(report).toMatchObject({ created: [], edited: [], deleted: [], problems: [] });
    expect((await store.get(added.memory.id))?.revision).toBe(1);
  });

  it('keeps text that looks like Markdown structure inside a memory exactly', async () => {
    const { store, memory } = await rig();
    const tricky = [
      'Meeting notes',
      '## not a heading, part of the memory',
      '\\## starts with a backslash',
      '<!-- memloom {"id":"fake"} -->',
      '  indented line',
    ].join('\n');
    const added = await memory.add(tricky, { scope });
    const reopened = createMarkdownStore({ root: store.root });
    track(reopened);
    expect((await reopened.get(added.memory.id))?.content).toBe(tricky);
    expect(await reopened.count({})).toBe(1);
    expect((await reopened.sync()).edited).toEqual([]);
  });

  it('keeps content the Markdown cannot show (edge blank lines, CR) exactly through the raw field', async () => {
    const { store } = await rig();
    const odd = '\n  leading blank line\r\nand CRLF  \n\n';
    const record: MemoryRecord = {
      id: 'odd-1', content: odd, level: 'full', weight: 1, baseWeight: 1, importance: 1, baseImportance: 1,
      category: 'fact', type: 'user', scope, createdAt: '2024-01-01T00:00:00.000Z', updatedAt: '2024-01-01T00:00:00.000Z',
      lastAccessedAt: '2024-01-01T00:00:00.000Z', source: 'user', verified: true, sources: [], tags: [], metadata: {}, revision: 1,
    };
    await store.open({ dimension: 16, embedderId: 'memloom/test-embedder' });
    await store.apply([{ op: 'put', memory: record, vector: new Array(16).fill(0.25), expectedRevision: 0, version: {
      memoryId: 'odd-1', version: 1, at: record.createdAt, trigger: 'import', action: 'create', reason: 'test', before: null, after: record,
    } }]);
    const reopened = createMarkdownStore({ root: store.root });
    track(reopened);
    expect((await reopened.get('odd-1'))?.content).toBe(odd);
    // Even no text at all round-trips, and leaves the file readable.
    const empty = { ...record, id: 'empty-1', content: '' };
    await reopened.open({ dimension: 16, embedderId: 'memloom/test-embedder' });
    await reopened.apply([{ op: 'put', memory: empty, vector: new Array(16).fill(0.25), expectedRevision: 0, version: {
      memoryId: 'empty-1', version: 1, at: record.createdAt, trigger: 'import', action: 'create', reason: 'test', before: null, after: empty,
    } }]);
    const third = createMarkdownStore({ root: store.root });
    track(third);
    expect((await third.get('empty-1'))?.content).toBe('');
    expect((await third.sync()).problems).toEqual([]);
  });

  it('reads back content with a CR at the end of a line exactly as it was written, without taking it for an edit', async () => {
    const { store } = await rig();
    const contents = ['The user said hi\r', '\r', 'two CRs\r\r\nthen a line', '##\r', 'a line\n##\r\r\nthat looks like a heading'];
    await store.open({ dimension: 16, embedderId: 'memloom/test-embedder' });
    await store.apply(contents.map((content, index) => putOf(`cr-${index}`, content)));
    const reopened = createMarkdownStore({ root: store.root });
    track(reopened);
    expect(await reopened.sync()).toMatchObject({ created: [], edited: [], deleted: [], problems: [] });
    for (const [index, content] of contents.entries()) {
      expect(await reopened.get(`cr-${index}`)).toMatchObject({ content, revision: 1 });
      expect(await reopened.history(`cr-${index}`)).toHaveLength(1);
    }
  });

  it('keeps content holding a lone surrogate exactly (in the raw field), so a reopen sees no edit by hand', async () => {
    const { store, file } = await rig();
    // Half of the pair of 😀 (U+1F600) each, as a string cut in the wrong place leaves them; then a whole pair.
    const contents = ['cut in half \uD83D', '\uDE00 the other half', 'a whole pair 😀 is kept as it is'];
    await store.open({ dimension: 16, embedderId: 'memloom/test-embedder' });
    await store.apply(contents.map((content, index) => putOf(`half-${index}`, content)));
    const reopened = createMarkdownStore({ root: store.root });
    track(reopened);
    expect(await reopened.sync()).toMatchObject({ created: [], edited: [], deleted: [], problems: [] });
    for (const [index, content] of contents.entries()) {
      expect(await reopened.get(`half-${index}`)).toMatchObject({ content, revision: 1 });
      expect(await reopened.history(`half-${index}`)).toHaveLength(1);
    }
    // The text shows U+FFFD where the half was, as any editor would; the exact text is in the field line.
    const text = await readFile(file, 'utf8');
    expect(text).toContain('\ncut in half \uFFFD\n');
    expect(text).toContain('"raw":"cut in half \\ud83d"');
    expect(text).not.toContain('"raw":"a whole pair');
  });

  it('keeps the exact text of a block held in raw when a person edits only one of its fields', async () => {
    const { store, file } = await rig();
    const contents = ['first line\r\nsecond line', '\n  starts with a blank line', 'cut emoji \uD83D', 'ends with CR\r'];
    await store.open({ dimension: 16, embedderId: 'memloom/test-embedder' });
    await store.apply(contents.map((content, index) => putOf(`raw-${index}`, content)));
    const text = await readFile(file, 'utf8');
    expect(text.match(/"raw":/gu)).toHaveLength(contents.length);
    // A tag added to every field line, nothing else.
    await writeFile(file, text.replaceAll('"verified":true,', '"verified":true,"tags":["work"],'));

    const report = await store.sync();
    expect([...report.edited].sort()).toEqual(contents.map((_, index) => `raw-${index}`));
    for (const [index, content] of contents.entries()) {
      expect(await store.get(`raw-${index}`)).toMatchObject({ content, tags: ['work'], revision: 2 });
      // The text did not change, so neither did the vector.
      expect(await store.getVector(`raw-${index}`)).toEqual(new Array(16).fill(0.25));
    }
  });

  it('reads a file saved with a byte order mark (UTF-8 BOM) as without one, and drops the mark when it rewrites the file', async () => {
    const { store, memory, file } = await rig();
    const tea = await memory.add('Alice likes tea.', { scope });
    const text = await readFile(file, 'utf8');
    // The title and note removed, then saved by an editor that writes a BOM: the first block starts the file.
    await writeFile(file, `\uFEFF${text.slice(text.indexOf('## '))}`);
    expect(await store.sync()).toMatchObject({ created: [], edited: [], deleted: [], problems: [] });
    expect(await store.get(tea.memory.id)).toMatchObject({ content: 'Alice likes tea.', revision: 1 });
    expect(await store.history(tea.memory.id)).toHaveLength(1);

    const note = path.join(store.directoryFor(scope), '202403', '20240301.md');
    await mkdir(path.dirname(note), { recursive: true });
    await writeFile(note, '\uFEFF## 2024-03-01\nWent hiking with Maria.\n\n## 2024-03-01\nAte paella.\n');
    const report = await store.sync();
    expect((await store.getMany(report.created)).map((record) => record.content).sort()).toEqual(['Ate paella.', 'Went hiking with Maria.']);
    // Rewritten to record the new ids: UTF-8 without the mark.
    const rewritten = await readFile(note, 'utf8');
    expect(rewritten).toContain(`"id":"${report.created[0]}"`);
    expect(rewritten.startsWith('## 2024-03-01')).toBe(true);
  });

  it("leaves a person's own .tmp files under memory/ alone and removes only temp files the store left", async () => {
    const root = await tempRoot();
    const first = await rig(root);
    await first.memory.add('The user likes green tea.', { scope });
    await first.store.close();
    const directory = first.store.directoryFor(scope);
    await mkdir(path.join(directory, 'attachments'), { recursive: true });
    const mine = [path.join(directory, '.todo.tmp'), path.join(directory, 'attachments', '.scan.tmp'), path.join(directory, 'attachments', '.x.y.tmp')];
    for (const file of mine) await writeFile(file, 'my file');
    // What a killed writer leaves: a temp of an atomic write and one of a transaction.
    const leftovers = [tempPathFor(path.join(directory, '.history', 'm1.jsonl')), path.join(directory, `.MEMORY.md.${Date.now().toString(36)}-0a1b2c3d.tmp`)];
    for (const file of leftovers) await writeFile(file, 'half written');

    const second = await rig(root);
    expect(await second.store.count({})).toBe(1);
    expect(mine.map((file) => existsSync(file))).toEqual([true, true, true]);
    expect(leftovers.map((file) => existsSync(file))).toEqual([false, false]);
  });
});

describe('a file a look catches while an editor saves it in place (truncated, then written)', () => {
  it('loses no memory, history or vector when it is seen empty or cut at a block: the memories come back as they were', async () => {
    const { store, memory, file } = await rig();
    const lyon = await memory.add('The user lives in Lyon.', { scope });
    const coffee = await memory.add('The user drinks oat flat white.', { scope });
    await memory.update(coffee.memory.id, { content: 'The user drinks oat flat white, small.' });
    const full = await readFile(file, 'utf8');
    const vectors = [await store.getVector(lyon.memory.id), await store.getVector(coffee.memory.id)];
    const backedUp = await backups(store);

    for (const partial of ['', full.slice(0, full.lastIndexOf('## '))]) {
      await writeFile(file, partial);
      const seen = await store.sync();
      expect(seen.deleted).toContain(coffee.memory.id);
      expect(await store.get(coffee.memory.id)).toBeUndefined();
      // The save lands.
      await writeFile(file, full);
      expect(await store.sync()).toMatchObject({ created: [], edited: [], deleted: [], problems: [] });
      expect(await store.get(coffee.memory.id)).toMatchObject({ content: 'The user drinks oat flat white, small.', revision: 2 });
      expect((await store.history(coffee.memory.id)).map((version) => version.version)).toEqual([1, 2]);
      expect([await store.getVector(lyon.memory.id), await store.getVector(coffee.memory.id)]).toEqual(vectors);
    }
    // Neither the half-saved file nor the whole one was rewritten.
    expect(await backups(store)).toEqual(backedUp);
    expect(await readFile(file, 'utf8')).toBe(full);
  });

  it('loses nothing when a store is opened while the file is empty, and takes the memories back when the save lands', async () => {
    const root = await tempRoot();
    const first = await rig(root);
    const added = await first.memory.add('The user lives in Lyon.', { scope });
    await first.memory.update(added.memory.id, { content: 'The user lives in Lyon, near the river.' });
    await first.store.close();
    const full = await readFile(first.file, 'utf8');
    await writeFile(first.file, '');

    const second = await rig(root);
    expect((await second.store.sync()).deleted).toEqual([added.memory.id]);
    expect(await second.store.count({})).toBe(0);
    await writeFile(first.file, full);
    second.clock.advance(HAND_DELETE_GRACE_MS);
    expect(await second.store.get(added.memory.id)).toMatchObject({ revision: 2 });
    expect((await second.store.history(added.memory.id)).map((version) => version.version)).toEqual([1, 2]);
    expect(await second.store.getVector(added.memory.id)).toHaveLength(16);
    // Nothing waits any more: later reads remove nothing.
    second.clock.advance(HAND_DELETE_GRACE_MS);
    expect(await second.store.sync()).toMatchObject({ deleted: [] });
    expect(await second.store.history(added.memory.id)).toHaveLength(2);
  });

  it('takes a block cut from one scope and pasted into another in a later save as a move, history and all', async () => {
    const { store, memory, file, clock } = await rig();
    const added = await memory.add('The user is learning Portuguese.', { scope });
    const text = await readFile(file, 'utf8');
    const block = text.slice(text.indexOf('## '));
    await writeFile(file, text.slice(0, text.indexOf('## ')));
    expect((await store.sync()).deleted).toEqual([added.memory.id]);

    const bob = { userId: 'bob' };
    await mkdir(store.directoryFor(bob), { recursive: true });
    await writeFile(path.join(store.directoryFor(bob), 'MEMORY.md'), `# Bob\n\n${block}`);
    expect((await store.sync()).edited).toEqual([added.memory.id]);
    clock.advance(HAND_DELETE_GRACE_MS);
    expect(await store.get(added.memory.id)).toMatchObject({ scope: bob, revision: 2 });
    const history = await store.history(added.memory.id);
    expect(history.map((version) => [version.version, version.after.scope])).toEqual([[1, scope], [2, bob]]);
    expect(history[1]?.reason).toMatch(/^moved by hand to users\/bob\/memory\/MEMORY\.md/u);
    expect(await readdir(path.join(store.directoryFor(scope), '.history'))).toEqual([]);
    expect(existsSync(path.join(store.directoryFor(scope), '.index', 'deleted.log'))).toBe(false);
  });

  it('settles the deletion the cut left waiting in the first scope when the paste is seen, so a store opened before its next look sees no second move', async () => {
    const { store, memory, file } = await rig();
    const added = await memory.add('The user is learning Portuguese.', { scope });
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.slice(0, text.indexOf('## ')));
    expect((await store.sync()).deleted).toEqual([added.memory.id]);
    const bob = { userId: 'bob' };
    await mkdir(store.directoryFor(bob), { recursive: true });
    await writeFile(path.join(store.directoryFor(bob), 'MEMORY.md'), `# Bob\n\n${text.slice(text.indexOf('## '))}`);
    expect((await store.sync()).edited).toEqual([added.memory.id]);
    // No clock advance: alice's folder is not looked at again, yet nothing waits there any more.
    expect(existsSync(path.join(store.directoryFor(scope), '.index', 'deleted.log'))).toBe(false);
    await store.close();

    // Another process (a CLI command) opened before alice's next look took the block for a move again: a third version.
    const other = await rig(store.root);
    expect(await other.store.sync()).toMatchObject({ created: [], edited: [], deleted: [] });
    expect(await other.store.get(added.memory.id)).toMatchObject({ scope: bob, revision: 2 });
    expect((await other.store.history(added.memory.id)).map((version) => version.version)).toEqual([1, 2]);
  });

  it('starts a new history for a memory put anew with the id of one deleted by hand that still waits', async () => {
    const { store, file } = await rig();
    await store.open({ dimension: 16, embedderId: 'memloom/test-embedder' });
    await store.apply([putOf('again', 'The user lives in Lyon.')]);
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.slice(0, text.indexOf('## ')));
    expect((await store.sync()).deleted).toEqual(['again']);

    await store.apply([putOf('again', 'The user lives in Porto.')]);
    const history = await store.history('again');
    expect(history.map((version) => version.after.content)).toEqual(['The user lives in Porto.']);
    const reopened = createMarkdownStore({ root: store.root });
    track(reopened);
    expect(await reopened.history('again')).toHaveLength(1);
    expect(existsSync(path.join(store.directoryFor(scope), '.index', 'deleted.log'))).toBe(false);
  });

  it('keeps the vector of a memory whose deletion by hand waits when the vector log is compacted meanwhile', async () => {
    const { store, file } = await rig();
    await store.open({ dimension: 16, embedderId: 'memloom/test-embedder' });
    await store.apply([putOf('kept', 'The user lives in Lyon.')]);
    // 1,000 memories put and deleted: the log is mostly superseded records, so the next write to it compacts it.
    const fillers = Array.from({ length: 1000 }, (_, index) => `filler-${index}`);
    await store.apply(fillers.map((id) => putOf(id, `Filler ${id}.`)));
    await store.apply(fillers.map((id): MemoryChange => ({ op: 'delete', id, expectedRevision: 1 })));
    // An editor saving in place: the look catches MEMORY.md truncated.
    const full = await readFile(file, 'utf8');
    await writeFile(file, full.slice(0, full.indexOf('## ')));
    expect((await store.sync()).deleted).toEqual(['kept']);

    // A write into the same scope (an episode: its daily note, not MEMORY.md) compacts the vector log.
    const vectors = path.join(store.directoryFor(scope), '.index', 'vectors.bin');
    const sizeBefore = (await stat(vectors)).size;
    const episode = putOf('episode', 'Talked about the trip to Lyon.');
    if (episode.op === 'put') episode.memory.category = 'episode';
    await store.apply([episode]);
    expect((await stat(vectors)).size).toBeLessThan(sizeBefore / 10);

    // The save lands: the memory is back as it was, its vector too, with nothing embedded again.
    await writeFile(file, full);
    expect(await store.sync()).toMatchObject({ created: [], edited: [], deleted: [], embedded: 0, unembedded: [] });
    expect(await store.get('kept')).toMatchObject({ revision: 1, content: 'The user lives in Lyon.' });
    expect(await store.getVector('kept')).toEqual(new Array(16).fill(0.25));
    const reopened = createMarkdownStore({ root: store.root });
    track(reopened);
    expect(await reopened.getVector('kept')).toEqual(new Array(16).fill(0.25));
  });

  it('keeps the vector of a memory whose deletion by hand waits through rebuildIndex()', async () => {
    const { store, file } = await rig();
    await store.open({ dimension: 16, embedderId: 'memloom/test-embedder' });
    await store.apply([putOf('kept', 'The user lives in Lyon.')]);
    const full = await readFile(file, 'utf8');
    await writeFile(file, full.slice(0, full.indexOf('## ')));
    expect((await store.sync()).deleted).toEqual(['kept']);
    await store.rebuildIndex();
    await writeFile(file, full);
    expect(await store.sync()).toMatchObject({ deleted: [], embedded: 0, unembedded: [] });
    expect(await store.getVector('kept')).toEqual(new Array(16).fill(0.25));
  });

  it('never ends the wait early when a clock is behind the one that first saw the deletion (a clock set back, another machine): it waits until that time + HAND_DELETE_GRACE_MS', async () => {
    const { store, memory, file, clock } = await rig();
    const doomed = await memory.add('Zanzibar is the password hint.', { scope });
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.slice(0, text.indexOf('## ')));
    expect((await store.sync()).deleted).toEqual([doomed.memory.id]);
    const seenAt = clock.iso();
    const historyFile = path.join(store.directoryFor(scope), '.history', `${doomed.memory.id}.jsonl`);
    const pending = path.join(store.directoryFor(scope), '.index', 'deleted.log');

    // The clock goes back a minute: the time first seen stays, and the wait goes on until it is past.
    clock.advance(-60_000);
    clock.advance(HAND_DELETE_GRACE_MS);
    await store.count({});
    expect(await readFile(pending, 'utf8')).toBe(`${JSON.stringify([doomed.memory.id, seenAt])}\n`);
    expect(existsSync(historyFile)).toBe(true);
    clock.advance(60_000);
    await store.count({});
    expect([existsSync(historyFile), existsSync(pending)]).toEqual([false, false]);
  });
});

describe('a block put back at an older revision (copied back from backups/)', () => {
  /** A memory at revision 2 (its text updated), and MEMORY.md as it was at revision 1 (the latest backup). */
  async function updatedOnce(root?: string) {
    const parts = await rig(root);
    const added = await parts.memory.add('The user drinks oat flat white.', { scope });
    const vectorBefore = await parts.store.getVector(added.memory.id);
    await parts.memory.update(added.memory.id, { content: 'The user drinks black coffee, no sugar.' });
    const latest = (await backups(parts.store)).at(-1) as string;
    const older = await readFile(path.join(parts.store.directoryFor(scope), 'backups', latest), 'utf8');
    expect(older).toContain('"revision":1');
    return { ...parts, id: added.memory.id, older, vectorBefore };
  }

  it('is a new version after the last one, with the vector of the text put back, whether the block was seen deleted first or not', async () => {
    for (const deletedFirst of [true, false]) {
      const { store, memory, file, id, older, vectorBefore } = await updatedOnce();
      if (deletedFirst) {
        const text = await readFile(file, 'utf8');
        await writeFile(file, text.slice(0, text.indexOf('## ')));
        expect((await store.sync()).deleted).toEqual([id]);
      }
      await writeFile(file, older);
      expect(await store.sync()).toMatchObject({ created: [], edited: [id], deleted: [] });
      expect(await store.get(id)).toMatchObject({ content: 'The user drinks oat flat white.', revision: 3 });
      const history = await store.history(id);
      expect(history.map((version) => [version.version, version.after.content])).toEqual([
        [1, 'The user drinks oat flat white.'],
        [2, 'The user drinks black coffee, no sugar.'],
        [3, 'The user drinks oat flat white.'],
      ]);
      expect(history[2]?.before).toMatchObject({ content: 'The user drinks black coffee, no sugar.', revision: 2 });
      expect(history[2]?.reason).toMatch(/^revision 1 put back by hand in users\/alice\/memory\/MEMORY\.md \(line \d+\)$/u);
      // Not the vector of the deleted text (revision 2): the one of the text put back.
      expect(await store.getVector(id)).toEqual(vectorBefore);
      await memory.update(id, { content: 'The user drinks tea.' });
      expect((await store.history(id)).map((version) => version.version)).toEqual([1, 2, 3, 4]);
    }
  });

  it('is found by a store opened after the file was replaced while no process ran; without an embedder the stale vector goes', async () => {
    const root = await tempRoot();
    const first = await updatedOnce(root);
    await first.store.close();
    await writeFile(first.file, first.older);

    // No embedder: the text put back gets no vector for now, and the log keeps none of the deleted text's.
    const reader = track(createMarkdownStore({ root, clock: first.clock }));
    expect(await reader.sync()).toMatchObject({ edited: [first.id], unembedded: [first.id] });
    expect(await reader.get(first.id)).toMatchObject({ content: 'The user drinks oat flat white.', revision: 3 });
    expect(await reader.getVector(first.id)).toBeUndefined();
    await reader.close();

    const second = await rig(root);
    expect(await second.store.sync()).toMatchObject({ edited: [], embedded: 1 });
    expect(await second.store.getVector(first.id)).toEqual(first.vectorBefore);
    expect((await second.store.history(first.id)).map((version) => version.version)).toEqual([1, 2, 3]);
  });

  it('without .history/ (not kept in git) is taken as it is, with a vector of its own text', async () => {
    const root = await tempRoot();
    const first = await updatedOnce(root);
    await first.store.close();
    await writeFile(first.file, first.older);
    await rm(path.join(first.store.directoryFor(scope), '.history'), { recursive: true });

    const second = await rig(root);
    expect(await second.store.sync()).toMatchObject({ edited: [], embedded: 1 });
    expect(await second.store.get(first.id)).toMatchObject({ content: 'The user drinks oat flat white.', revision: 1 });
    expect(await second.store.getVector(first.id)).toEqual(first.vectorBefore);
  });
});
