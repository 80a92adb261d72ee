import { execSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { staleLock, tempRoot } from './helpers.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const fixture = path.join(here, 'fixtures', 'open-store.mjs');

/**
 * The command prefix that runs a child as a user file permissions bind: for root, which they do not bind,
 * setpriv as nobody (65534). Undefined when that cannot be done (not root: no file can be made another
 * user's; no setpriv; or a checkout nobody may not read): the test is skipped.
 */
function unprivileged(): string[] | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'].find((candidate) => existsSync(candidate));
  if (!setpriv) return undefined;
  const as = [setpriv, '--reuid=65534', '--regid=65534', '--clear-groups'];
  const readable = spawnSync(as[0]!, [...as.slice(1), process.execPath, '-e', `require('node:fs').accessSync(${JSON.stringify(fixture)})`]).status === 0;
  return readable ? as : undefined;
}

const as = unprivileged();
if (!as) {
  console.warn('[store-markdown other-user] NOT TESTED: a stale lock or a lock.break another user left (needs root, to make a folder another user\'s, with setpriv, and a checkout user nobody can read)');
}

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

beforeAll(() => {
  // turbo builds the package before its tests; a bare `vitest run` may not have.
  if (as && !existsSync(path.join(here, '..', 'dist', 'index.js'))) execSync('npx tsup', { cwd: path.join(here, '..'), stdio: 'ignore' });
});

describe('a lock.break another user left (a process that broke a stale lock stopped before removing it)', () => {
  it.skipIf(!as)('is named, with who left it and the advice to remove it, not called a folder this process may not write', { timeout: 30_000 }, async () => {
    const root = await tempRoot();
    roots.push(root);
    // A stale lock of a process of this host that is gone, which anyone may remove …
    const { state, lock, breaker, gone } = await staleLock(root);
    for (const folder of [root, state, lock]) chmodSync(folder, 0o777);
    // … and the breaker of a process of root's, gone too, which only root may empty.
    await mkdir(breaker);
    await writeFile(path.join(breaker, 'owner.json'), JSON.stringify({ ...gone, token: 'breaker' }));
    chmodSync(breaker, 0o755);

    const child = spawnSync(as![0]!, [...as!.slice(1), process.execPath, fixture, root], { encoding: 'utf8' });
    expect(child.stderr).toBe('');
    const { error } = JSON.parse(child.stdout);
    expect(error).toMatchObject({ code: 'STORE_ERROR', details: { lock, breaker, path: breaker, readonly: true, owner: { uid: 0, ...gone } } });
    expect(error.message).toContain(`cannot take the store lock ${lock}: ${breaker} is read-only for this process`);
    // Before: ". The store takes it to read too …, so that folder must be writable by this process" (it is).
    expect(error.message).toContain(`${breaker} is left over from a process that broke a stale lock and stopped before removing it (owned by user id 0, made by process ${gone.pid} on ${gone.host})`);
    expect(error.message).toContain('remove it (as that user or root)');
    expect(error.message).not.toContain('must be writable by this process');
  });

  it.skipIf(!as)('of this user, in a .memloom folder it may not write: names that folder, not the breaker', { timeout: 30_000 }, async () => {
    const root = await tempRoot();
    roots.push(root);
    // A stale lock and a leftover lock.break, both of processes of nobody's that are gone …
    const { state, lock, breaker, gone } = await staleLock(root);
    await mkdir(breaker);
    await writeFile(path.join(breaker, 'owner.json'), JSON.stringify({ ...gone, pid: gone.pid + 1, token: 'breaker' }));
    for (const target of [root, state, lock, breaker, path.join(lock, 'owner.json'), path.join(breaker, 'owner.json')]) chownSync(target, 65534, 65534);
    // … and .memloom, nobody's too, is now read-only for it.
    chmodSync(state, 0o555);

    const child = spawnSync(as![0]!, [...as!.slice(1), process.execPath, fixture, root], { encoding: 'utf8' });
    expect(child.stderr).toBe('');
    const { error } = JSON.parse(child.stdout);
    expect(error).toMatchObject({ code: 'STORE_ERROR', details: { lock, path: state, readonly: true } });
    expect(error.message).toContain(`cannot take the store lock ${lock}: ${state} is read-only for this process`);
    // Before: "… is left over … (owned by user id 65534 (this process's) …) … remove it (as that user or root)".
    expect(error.message).toContain('so that folder must be writable by this process');
    expect(error.message).not.toContain('left over');
    expect(error.message).not.toContain('as that user or root');
  });
});

describe('a stale lock another user left, which this process may not remove', () => {
  it.skipIf(!as)('is named, with who left it, as another user\'s, and the advice to remove it as that user or root', { timeout: 30_000 }, async () => {
    const root = await tempRoot();
    roots.push(root);
    // A stale lock of a process of root's on this host that is gone, in a .memloom anyone may write: only root may empty it.
    const { state, lock, gone } = await staleLock(root);
    for (const folder of [root, state]) chmodSync(folder, 0o777);
    chmodSync(lock, 0o755);

    const child = spawnSync(as![0]!, [...as!.slice(1), process.execPath, fixture, root], { encoding: 'utf8' });
    expect(child.stderr).toBe('');
    const { error } = JSON.parse(child.stdout);
    expect(error).toMatchObject({ code: 'STORE_ERROR', details: { lock, path: lock, readonly: true, owner: { uid: 0, ...gone } } });
    expect(error.message).toContain(`cannot take the store lock ${lock}: ${lock} is read-only for this process`);
    expect(error.message).toContain(
      `but this one may not remove it (a process of another user left it: owned by user id 0, made by process ${gone.pid} on ${gone.host}): remove it (as that user or root)`,
    );
  });
});
