import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { afterEach } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));

/** A fresh folder under the OS temp dir, removed by `dispose`. */
export function tempFolder(prefix = 'memloom-sqlite-'): { path: string; file: (name?: string) => string; dispose: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return {
    path,
    file: (name = 'memory.db') => join(path, name),
    dispose: () => rmSync(path, { recursive: true, force: true }),
  };
}

/**
 * Temporary folders for the tests of one file: call it once at the top of the
 * file, then call what it returns in a test for a fresh folder. Every folder
 * a test made is removed after that test.
 */
export function tempFolders(): () => ReturnType<typeof tempFolder> {
  const made: Array<ReturnType<typeof tempFolder>> = [];
  afterEach(() => {
    for (const folder of made.splice(0)) folder.dispose();
  });
  return () => {
    const folder = tempFolder();
    made.push(folder);
    return folder;
  };
}

export interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Run a plain-JS fixture from test/fixtures in its own Node process (after the command prefix `as`,
 * such as `unprivileged()`). The fixtures import the built package (dist), which `turbo run test` builds first.
 */
export function runFixture(name: string, args: string[], onStdout?: (text: string, kill: () => void) => void, as: readonly string[] = []): Promise<ChildResult> {
  if (!existsSync(join(here, '..', 'dist', 'index.js'))) {
    throw new Error('dist/index.js is missing: build @memloom/store-sqlite first (pnpm build, or pnpm test from the root)');
  }
  return new Promise((resolve, reject) => {
    const [command, ...rest] = [...as, process.execPath, join(here, 'fixtures', name), ...args];
    const child = spawn(command!, rest, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      stdout += text;
      onStdout?.(stdout, () => child.kill('SIGKILL'));
    });
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      stderr += text;
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/**
 * The command prefix that runs a child as a user file permissions bind (for `runFixture`'s `as`): none
 * for a user other than root; for root, which they do not bind, setpriv as uid and gid `id` (nobody's,
 * 65534, unless another is asked). Undefined when that cannot be done (root without setpriv, or a
 * checkout that user may not read): the test is skipped.
 */
export function unprivileged(id = 65534): string[] | undefined {
  if (process.getuid?.() !== 0) return [];
  const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => existsSync(path));
  const as = setpriv ? [setpriv, `--reuid=${id}`, `--regid=${id}`, '--clear-groups'] : undefined;
  // nobody must be able to read this checkout (not so under a private home folder).
  const fixture = join(here, 'fixtures', 'records.mjs');
  const readable = as && spawnSync(as[0]!, [...as.slice(1), process.execPath, '-e', `const fs = require('node:fs'); fs.accessSync(${JSON.stringify(fixture)}, fs.constants.R_OK)`]).status === 0;
  return readable ? as : undefined;
}

/**
 * `source` mounted read-only at a new folder (a bind mount, as docker's `:ro` makes one), with `dispose` to
 * unmount it and remove the folder; undefined where this process may not mount (not root, or a container
 * without the permission): the test is skipped. `canMountReadOnly()` says which, for `it.skipIf`.
 */
export function readOnlyMount(source: string): { path: string; dispose: () => void } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const target = mkdtempSync(join(tmpdir(), 'memloom-sqlite-ro-'));
  const mount = (...args: string[]) => spawnSync('mount', args, { stdio: 'ignore' }).status === 0;
  // rmdir, never a recursive removal: a mount left in place makes it fail instead of reaching the source.
  const dispose = () => {
    spawnSync('umount', [target], { stdio: 'ignore' });
    rmdirSync(target);
  };
  if (!mount('--bind', source, target)) {
    rmdirSync(target);
    return undefined;
  }
  if (!mount('-o', 'remount,ro,bind', target)) {
    dispose();
    return undefined;
  }
  return { path: target, dispose };
}

export function canMountReadOnly(): boolean {
  const probe = tempFolder();
  try {
    const mounted = readOnlyMount(probe.path);
    mounted?.dispose();
    return mounted !== undefined;
  } finally {
    probe.dispose();
  }
}

export interface Consistency {
  memories: number;
  vectors: number;
  textRows: number;
  /** Memories lacking a vector, a text row, or whose version count is not their revision. */
  incomplete: number;
  /** Vectors, text rows or versions with no memory. */
  orphans: number;
  integrity: string;
}

/** Look at the raw file: every memory whole (row, vector, FTS row, one version per revision), nothing orphaned. */
export function inspect(path: string, table = 'memory_vectors_1'): Consistency {
  const database = new Database(path, { readonly: true });
  sqliteVec.load(database);
  try {
    const count = (sql: string) => (database.prepare(sql).get() as { n: number }).n;
    return {
      memories: count('SELECT count(*) AS n FROM memories'),
      vectors: count(`SELECT count(*) AS n FROM ${table}`),
      textRows: count('SELECT count(*) AS n FROM memory_text'),
      incomplete:
        count(`SELECT count(*) AS n FROM memories m WHERE NOT EXISTS (SELECT 1 FROM ${table} v WHERE v.rowid = m.row_id)`) +
        count('SELECT count(*) AS n FROM memories m WHERE NOT EXISTS (SELECT 1 FROM memory_text t WHERE t.rowid = m.row_id)') +
        count('SELECT count(*) AS n FROM memories m WHERE (SELECT count(*) FROM versions v WHERE v.memory_row = m.row_id) != m.revision'),
      orphans:
        count(`SELECT count(*) AS n FROM ${table} v WHERE v.rowid NOT IN (SELECT row_id FROM memories)`) +
        count('SELECT count(*) AS n FROM memory_text t WHERE t.rowid NOT IN (SELECT row_id FROM memories)') +
        count('SELECT count(*) AS n FROM versions v WHERE v.memory_row NOT IN (SELECT row_id FROM memories)'),
      integrity: database.pragma('integrity_check', { simple: true }) as string,
    };
  } finally {
    database.close();
  }
}
