import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DEFAULT_POLICY, hasLoneSurrogate, MemloomError, resolvePolicy } from '@memloom/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createMarkdownPolicyStorage, createMarkdownStore } from '../src/index.js';
import { tempRoot } from './helpers.js';

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

async function storage() {
  const root = await tempRoot();
  roots.push(root);
  return createMarkdownPolicyStorage({ root, scope: { userId: 'alice' } });
}

describe('policy overrides (seed 001)', () => {
  it('has no overrides at first, so the policy is the configuration', async () => {
    const policy = await storage();
    expect(await policy.readOverrides()).toBeUndefined();
    expect(resolvePolicy([{ source: 'overrides', values: await policy.readOverrides() }])).toEqual(DEFAULT_POLICY);
  });

  it('snapshots the current overrides before each write, then replaces them', async () => {
    const policy = await storage();
    await policy.writeOverrides({ retrieve_limit: 15 }, new Date('2024-03-02T09:00:00Z'));
    // Nothing to snapshot before the first write.
    expect(await readdir(policy.snapshots).catch(() => [])).toEqual([]);
    await policy.writeOverrides({ retrieve_limit: 20, recent_days: 5 }, new Date('2024-03-02T10:30:00Z'));
    await policy.writeOverrides({ recent_days: 7 }, new Date('2024-03-02T10:30:00Z'));

    expect(await policy.readOverrides()).toEqual({ recent_days: 7 });
    expect(path.relative(path.dirname(policy.file), policy.file)).toBe('policy_overrides.json');
    const names = (await readdir(policy.snapshots)).sort();
    expect(names).toEqual(['20240302_103000-2.json', '20240302_103000.json']);
    expect(JSON.parse(await readFile(path.join(policy.snapshots, '20240302_103000.json'), 'utf8'))).toEqual({ retrieve_limit: 15 });
    expect(JSON.parse(await readFile(path.join(policy.snapshots, '20240302_103000-2.json'), 'utf8'))).toEqual({
      retrieve_limit: 20,
      recent_days: 5,
    });
    expect(resolvePolicy([{ source: 'overrides', values: await policy.readOverrides() }]).recent_days).toBe(7);
  });

  it('keeps the newest 100 snapshots (by time, then counter) and leaves other files in policy_snapshots/ alone', async () => {
    const policy = await storage();
    await mkdir(policy.snapshots, { recursive: true });
    const older = Array.from({ length: 120 }, (_, second) => `20240301_00${String(Math.floor(second / 60)).padStart(2, '0')}${String(second % 60).padStart(2, '0')}.json`);
    // Two writes in one second: the second is -2, newer than the first.
    older.splice(22, 0, '20240301_000021-2.json');
    for (const name of [...older, 'notes.txt', 'before-upgrade.json']) await writeFile(path.join(policy.snapshots, name), '{}\n');
    await writeFile(policy.file, '{ "recent_days": 4 }\n');
    await policy.writeOverrides({ recent_days: 5 }, new Date('2024-03-02T09:00:00Z'));

    const names = await readdir(policy.snapshots);
    const kept = [...older.slice(-99), '20240302_090000.json'];
    expect(names.filter((name) => /^\d{8}_\d{6}/u.test(name)).sort()).toEqual([...kept].sort());
    expect(names).toContain('20240301_000021-2.json');
    expect(names).not.toContain('20240301_000021.json');
    expect(names).toEqual(expect.arrayContaining(['notes.txt', 'before-upgrade.json']));
    expect(JSON.parse(await readFile(path.join(policy.snapshots, '20240302_090000.json'), 'utf8'))).toEqual({ recent_days: 4 });
  });

  it('never removes the snapshot it has just taken, even when its time sorts before the 100 kept (a clock set back)', async () => {
    const policy = await storage();
    await mkdir(policy.snapshots, { recursive: true });
    const later = Array.from({ length: 100 }, (_, second) => `20250101_0000${String(Math.floor(second / 60)).padStart(2, '0')}${String(second % 60).padStart(2, '0')}.json`.replace('_0000', '_00'));
    for (const name of later) await writeFile(path.join(policy.snapshots, name), '{}\n');
    await writeFile(policy.file, '{ "recent_days": 4 }\n');
    await policy.writeOverrides({ recent_days: 5 }, new Date('2024-06-01T00:00:00Z'));
    const names = (await readdir(policy.snapshots)).sort();
    expect(names).toHaveLength(100);
    // The overrides this write replaced can still be rolled back to; the oldest of the later ones went.
    expect(JSON.parse(await readFile(path.join(policy.snapshots, '20240601_000000.json'), 'utf8'))).toEqual({ recent_days: 4 });
    expect(names).not.toContain(later[0]);
  });

  it('keeps every snapshot taken since a clock was set back, pruning by the order they were written', async () => {
    const policy = await storage();
    await mkdir(policy.snapshots, { recursive: true });
    const later = Array.from({ length: 100 }, (_, second) => `20300101_00${String(Math.floor(second / 60)).padStart(2, '0')}${String(second % 60).padStart(2, '0')}.json`);
    for (const name of later) await writeFile(path.join(policy.snapshots, name), '{}\n');
    await writeFile(policy.file, '{ "retrieve_limit": 40 }\n');
    for (const [index, limit] of [41, 42, 43].entries()) await policy.writeOverrides({ retrieve_limit: limit }, new Date(Date.UTC(2026, 0, 1, 0, 0, index)));
    const names = await readdir(policy.snapshots);
    expect(names).toHaveLength(100);
    // The three taken since hold 40, 41 and 42: each can still be rolled back to.
    const taken = ['20260101_000000.json', '20260101_000001.json', '20260101_000002.json'];
    expect(await Promise.all(taken.map(async (name) => JSON.parse(await readFile(path.join(policy.snapshots, name), 'utf8'))))).toEqual([
      { retrieve_limit: 40 },
      { retrieve_limit: 41 },
      { retrieve_limit: 42 },
    ]);
    expect(names).not.toContain(later[0]);
  });

  it('rolls back to the configuration when the overrides file is deleted', async () => {
    const policy = await storage();
    await policy.writeOverrides({ evolution_enabled: true }, new Date());
    await rm(policy.file);
    expect(await policy.readOverrides()).toBeUndefined();
    expect(resolvePolicy([{ source: 'config', values: { recent_days: 2 } }, { source: 'overrides', values: await policy.readOverrides() }])).toEqual({
      ...DEFAULT_POLICY,
      recent_days: 2,
    });
  });

  it('reports an overrides file that is not JSON with its path and line, and refuses overrides that are not a policy', async () => {
    const policy = await storage();
    await policy.writeOverrides({ retrieve_limit: 12 }, new Date());
    await writeFile(policy.file, '{\n  "retrieve_limit": 12,\n  oops\n}\n');
    const error = await policy.readOverrides().catch((caught: unknown) => caught);
    expect(MemloomError.hasCode(error, 'STORE_CORRUPT')).toBe(true);
    expect((error as MemloomError).details).toMatchObject({ path: 'users/alice/memory/policy_overrides.json', line: 3 });
    await expect(policy.writeOverrides({ retrieve_limit: -1 } as never, new Date())).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('reads an overrides file saved with a UTF-8 byte order mark (as Notepad saves it) as without one', async () => {
    const policy = await storage();
    await policy.writeOverrides({ retrieve_limit: 12 }, new Date());
    await writeFile(policy.file, `\uFEFF${JSON.stringify({ retrieve_limit: 12 }, null, 2)}\n`);
    expect(await policy.readOverrides()).toEqual({ retrieve_limit: 12 });
  });

  it('is reachable from the store for a scope, in that scope folder', async () => {
    const root = await tempRoot();
    roots.push(root);
    const store = createMarkdownStore({ root });
    const policy = store.policyStorage({ userId: 'bob' });
    await policy.writeOverrides({ retrieve_limit: 3 }, new Date());
    expect(JSON.parse(await readFile(path.join(store.directoryFor({ userId: 'bob' }), 'policy_overrides.json'), 'utf8'))).toEqual({
      retrieve_limit: 3,
    });
    await store.close();
  });
});

describe('the time of the last long-term compression (seed 001)', () => {
  it('is kept per scope in memory/.last_longterm_compress and survives a new storage', async () => {
    const root = await tempRoot();
    roots.push(root);
    const policy = createMarkdownPolicyStorage({ root });
    expect(await policy.readLastCompression!({ userId: 'alice' })).toBeUndefined();
    await policy.writeLastCompression!({ userId: 'alice' }, new Date('2024-03-02T09:00:00.000Z'));
    await policy.writeLastCompression!({}, new Date('2024-03-01T00:00:00.000Z'));
    expect(await readFile(path.join(root, 'users', 'alice', 'memory', '.last_longterm_compress'), 'utf8')).toBe('2024-03-02T09:00:00.000Z\n');
    const again = createMarkdownPolicyStorage({ root, scope: { userId: 'bob' } });
    expect((await again.readLastCompression!({ userId: 'alice' }))?.toISOString()).toBe('2024-03-02T09:00:00.000Z');
    expect((await again.readLastCompression!({}))?.toISOString()).toBe('2024-03-01T00:00:00.000Z');
    expect(await again.readLastCompression!({ userId: 'bob' })).toBeUndefined();
    await writeFile(path.join(root, 'memory', '.last_longterm_compress'), 'yesterday\n');
    await expect(again.readLastCompression!({})).rejects.toMatchObject({ code: 'STORE_CORRUPT', details: { path: 'memory/.last_longterm_compress', line: 1 } });
    // A value that reads as a path names one folder inside the root; a blank one names none.
    await again.writeLastCompression!({ userId: '../x' }, new Date('2024-03-03T00:00:00.000Z'));
    expect(await readFile(path.join(root, 'users', '%2E.%2Fx', 'memory', '.last_longterm_compress'), 'utf8')).toBe('2024-03-03T00:00:00.000Z\n');
    await expect(again.writeLastCompression!({ userId: ' ' }, new Date())).rejects.toMatchObject({ code: 'INVALID_SCOPE' });
  });

  it('is refused when it is on a day the calendar does not have or not an ISO time, instead of being read as another day', async () => {
    const root = await tempRoot();
    roots.push(root);
    const policy = createMarkdownPolicyStorage({ root });
    const marker = path.join(root, 'memory', '.last_longterm_compress');
    await mkdir(path.dirname(marker), { recursive: true });
    for (const text of ['2024-02-30T00:00:00.000Z', '2023-02-29T09:00:00.000Z', '2024-03-01T24:00:00.000Z', 'Feb 30 2024']) {
      await writeFile(marker, `${text}\n`);
      await expect(policy.readLastCompression!({}), text).rejects.toMatchObject({
        code: 'STORE_CORRUPT',
        backend: 'markdown',
        details: { path: 'memory/.last_longterm_compress', line: 1 },
      });
    }
    // The message quotes the start of the text, cut before an emoji rather than through it.
    await writeFile(marker, `${'x'.repeat(39)}😀 and more\n`);
    const quoted = await policy.readLastCompression!({}).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(quoted?.message).toContain(`not an ISO timestamp on a day of the calendar ("${'x'.repeat(39)}…")`);
    expect(hasLoneSurrogate(quoted?.message ?? '')).toBe(false);
    await writeFile(marker, '2024-02-29T09:00:00.000Z\n');
    expect((await policy.readLastCompression!({}))?.toISOString()).toBe('2024-02-29T09:00:00.000Z');
  });
});
