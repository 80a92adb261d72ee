import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN, runBin, syntheticExport, tempFolder, unprivileged } from './helpers.js';

/** A project folder without package.json that has memloom installed (this repository's package). */
function installMemloom(project: string): void {
  const memloom = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'memloom');
  mkdirSync(join(project, 'node_modules'));
  symlinkSync(memloom, join(project, 'node_modules', 'memloom'), 'dir');
}

// The built binary as a user runs it: a child process, exit codes, stdout and stderr.
let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempFolder('memloom-e2e-'));
});
afterEach(() => cleanup());

describe('the memloom binary', () => {
  it('is built with a shebang, answers --help with 0 and an unknown command with 2', async () => {
    expect(readFileSync(BIN, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
    const help = await runBin(dir, ['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: memloom <command>');
    const unknown = await runBin(dir, ['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
  });

  it('init, add and search on the embedded default (SQLite + the offline embedder), then stats', async () => {
    expect((await runBin(dir, ['init', '--user', 'alice'])).code).toBe(0);
    expect(existsSync(join(dir, '.memloom', 'memory.db'))).toBe(true);
    expect((await runBin(dir, ['add', 'I keep my bike in the garage'])).code).toBe(0);
    expect((await runBin(dir, ['add', 'My sister Emma lives in Porto'])).code).toBe(0);
    const search = await runBin(dir, ['search', 'where is my bicycle?', '--limit', '1', '--json']);
    expect(search.code).toBe(0);
    expect(JSON.parse(search.stdout)[0].memory).toMatchObject({ content: 'I keep my bike in the garage', scope: { userId: 'alice' } });
    const stats = JSON.parse((await runBin(dir, ['stats', '--json'])).stdout);
    expect(stats).toMatchObject({ store: { name: 'sqlite' }, total: 2, configFile: join(dir, 'memloom.config.json') });
    expect(stats.embedder.id).toMatch(/^memloom\/offline-/);
  });

  it('exports from SQLite and imports into Markdown chosen by MEMLOOM_STORE, losing nothing', async () => {
    const env = { MEMLOOM_EMBEDDER: 'lexical', MEMLOOM_STORE: 'sqlite:./memory.db' };
    await runBin(dir, ['add', 'We deploy on Tuesdays', '--agent', 'ops', '--category', 'core'], env);
    await runBin(dir, ['add', 'We deploy on Tuesdays', '--agent', 'ops'], env); // a merge: two versions
    await runBin(dir, ['add', '我养了一只橘猫', '--user', 'li'], env);
    expect((await runBin(dir, ['export', '-o', 'all.jsonl', '--vectors'], env)).code).toBe(0);
    const markdownEnv = { ...env, MEMLOOM_STORE: 'markdown:./md' };
    const imported = await runBin(dir, ['import', 'all.jsonl', '--json'], markdownEnv);
    expect(imported.code).toBe(0);
    expect(JSON.parse(imported.stdout)).toMatchObject({ created: 2, merged: 0, kept: 0 });
    expect(readFileSync(join(dir, 'md', 'agents', 'ops', 'memory', 'MEMORY.md'), 'utf8')).toContain('We deploy on Tuesdays');
    const again = await runBin(dir, ['export'], markdownEnv);
    const body = (text: string) => text.trim().split('\n').slice(1).map((line) => JSON.parse(line)).sort((a, b) => a.memory.id.localeCompare(b.memory.id));
    expect(body(again.stdout)).toEqual(body(readFileSync(join(dir, 'all.jsonl'), 'utf8')).map(({ memory, versions }) => ({ memory, versions })));
  });

  it('reads memloom.config.ts in plain Node 20 (through tsx)', async () => {
    writeFileSync(
      join(dir, 'memloom.config.ts'),
      "import type { MemloomConfig } from 'memloom';\nconst config: MemloomConfig = { store: 'sqlite:./from-ts.db', embedder: 'lexical' };\nexport default config;\n",
    );
    // The store is made by a write: stats, which only reads, would say that the configured one does not exist.
    expect((await runBin(dir, ['add', 'I keep my bike in the garage'])).code).toBe(0);
    const stats = await runBin(dir, ['stats', '--json']);
    expect(stats.code).toBe(0);
    expect(JSON.parse(stats.stdout).store).toMatchObject({ location: join(dir, 'from-ts.db'), source: join(dir, 'memloom.config.ts') });
  });

  it('reads the README\'s memloom.config.ts (import { defineConfig } from \'memloom\') in a project without package.json, Node 20 + tsx', async () => {
    installMemloom(dir);
    expect(existsSync(join(dir, 'package.json'))).toBe(false);
    writeFileSync(
      join(dir, 'memloom.config.ts'),
      "// memloom.config.ts\nimport { defineConfig } from 'memloom';\n\nexport default defineConfig({ store: { type: 'sqlite', path: './data/memory.db' }, embedder: 'lexical', scope: { userId: 'me' } });\n",
    );
    const added = await runBin(dir, ['add', 'I keep my bike in the garage', '--json']);
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);
    expect(JSON.parse(added.stdout).memory.scope).toEqual({ userId: 'me' });
    const stats = JSON.parse((await runBin(dir, ['stats', '--json'])).stdout);
    expect(stats.store).toMatchObject({ location: join(dir, 'data', 'memory.db'), source: join(dir, 'memloom.config.ts') });
  });

  it('loads memloom.config.ts once per command (it was compiled and run twice, three times for a default store not made yet)', async () => {
    // Each run of the file appends a line: a side effect a configuration file may well have (reading a secret, logging).
    writeFileSync(
      join(dir, 'memloom.config.ts'),
      "import { appendFileSync } from 'node:fs';\nappendFileSync(new URL('./loads.txt', import.meta.url), 'loaded\\n');\nconst config: { embedder: string } = { embedder: 'lexical' };\nexport default config;\n",
    );
    const loads = () => readFileSync(join(dir, 'loads.txt'), 'utf8').split('\n').filter(Boolean).length;
    // The default store not made yet: read as an empty one.
    expect((await runBin(dir, ['stats', '--json'])).code).toBe(0);
    expect(loads()).toBe(1);
    expect((await runBin(dir, ['add', 'I keep my bike in the garage'])).code).toBe(0);
    expect(loads()).toBe(2);
    expect((await runBin(dir, ['list'])).code).toBe(0);
    expect(loads()).toBe(3);
  });

  // Permissions do not bind root: the commands then run as nobody through setpriv, and without setpriv this cannot be tested.
  const as = unprivileged();
  if (!as) {
    console.warn('[memloom cli e2e] NOT TESTED: reading SQLite and Markdown stores this process may not write, as another user (running as root without setpriv, or user nobody cannot read this checkout)');
  }
  it.skipIf(!as)('reads a SQLite store in a file it may not write (list, search, stats), refuses a write naming the file, and says why a read-only folder cannot be read', async () => {
    const env = { MEMLOOM_EMBEDDER: 'lexical', MEMLOOM_STORE: 'sqlite:./store/memory.db' };
    expect((await runBin(dir, ['add', 'I keep my bike in the garage'], env)).code).toBe(0);
    const store = join(dir, 'store');
    const file = join(store, 'memory.db');
    // SQLite makes its -shm and -wal files in the folder to read a WAL database: the folder is writable, the file is not.
    chmodSync(dir, 0o755);
    chmodSync(store, 0o777);
    chmodSync(file, 0o444);
    try {
      const list = await runBin(dir, ['list', '--json'], env, undefined, as);
      expect(list.stderr).toBe('');
      expect(JSON.parse(list.stdout).map((memory: { content: string }) => memory.content)).toEqual(['I keep my bike in the garage']);
      const search = await runBin(dir, ['search', 'bicycle', '--json'], env, undefined, as);
      expect(search.stderr).toBe('');
      expect(JSON.parse(search.stdout)[0].memory.content).toBe('I keep my bike in the garage');
      expect(JSON.parse((await runBin(dir, ['stats', '--json'], env, undefined, as)).stdout).total).toBe(1);
      const add = await runBin(dir, ['add', 'My sister lives in Porto'], env, undefined, as);
      expect(add).toMatchObject({ code: 1, stderr: `memloom: [sqlite] applying changes: ${file} is read-only for this process (its permissions, or a read-only disk)\n` });
      // A folder it may not write either: SQLite cannot read the file (no -shm to make), and the error says so.
      rmSync(`${file}-shm`, { force: true });
      rmSync(`${file}-wal`, { force: true });
      chmodSync(store, 0o555);
      const unreadable = await runBin(dir, ['list'], env, undefined, as);
      expect(unreadable.code).toBe(1);
      expect(unreadable.stderr).toContain(`memloom: [sqlite] opening ${file}: ${dirname(file)} is read-only for this process`);
    } finally {
      chmodSync(store, 0o700);
      chmodSync(file, 0o644);
    }
  });

  it.skipIf(!as)('says why a Markdown store in a folder it may not write cannot be read: its lock (exit 1, naming it)', async () => {
    const env = { MEMLOOM_EMBEDDER: 'lexical', MEMLOOM_STORE: 'markdown:./notes' };
    expect((await runBin(dir, ['add', 'I keep my bike in the garage'], env)).code).toBe(0);
    const state = join(dir, 'notes', '.memloom');
    chmodSync(dir, 0o755);
    chmodSync(state, 0o555);
    try {
      const list = await runBin(dir, ['list', '--json'], env, undefined, as);
      expect(list.code).toBe(1);
      expect(JSON.parse(list.stderr).error).toMatchObject({ code: 'STORE_ERROR', details: { lock: join(state, 'lock'), path: state } });
      expect(JSON.parse(list.stderr).error.message).toContain(`[markdown] cannot take the store lock ${join(state, 'lock')}: ${state} is read-only for this process`);
      expect(JSON.parse(list.stderr).error.message).toContain('EACCES');
    } finally {
      chmodSync(state, 0o755);
    }
  });

  it('reads a CommonJS memloom.config.js that require()s memloom', async () => {
    installMemloom(dir);
    writeFileSync(
      join(dir, 'memloom.config.js'),
      "const { defineConfig } = require('memloom');\nmodule.exports = defineConfig({ store: 'sqlite:./cjs.db', embedder: 'lexical' });\n",
    );
    expect((await runBin(dir, ['add', 'I keep my bike in the garage'])).code).toBe(0);
    const stats = await runBin(dir, ['stats', '--json']);
    expect(stats.stderr).toBe('');
    expect(JSON.parse(stats.stdout).store).toMatchObject({ location: join(dir, 'cjs.db'), source: join(dir, 'memloom.config.js') });
  });

  it('stops quietly with exit 0 when the reader of its output goes away (memloom list --all | head -1)', async () => {
    const env = { MEMLOOM_EMBEDDER: 'lexical', MEMLOOM_STORE: 'sqlite:./memory.db' };
    // Far more output than a pipe holds: the command is still writing when the reader leaves.
    expect((await runBin(dir, ['import', '-', '--quiet'], env, syntheticExport(3000).text)).code).toBe(0);
    const child = spawn(process.execPath, [BIN, 'list', '--all'], { cwd: dir, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
    child.stdout.once('data', () => child.stdout.destroy()); // like head -1: the first line, then the pipe is closed
    const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
    expect(stderr).toBe('');
    expect({ code, signal }).toEqual({ code: 0, signal: null });
  });

  it('goes on to the end when the reader of its progress goes away (memloom import backup.jsonl 2>&1 | head -1)', async () => {
    const env = { MEMLOOM_EMBEDDER: 'lexical', MEMLOOM_STORE: 'sqlite:./memory.db' };
    writeFileSync(join(dir, 'backup.jsonl'), syntheticExport(3000).text);
    // Progress goes to stderr a line per tenth of the way: after the first line, the next ones meet a closed pipe.
    const child = spawn(process.execPath, [BIN, 'import', 'backup.jsonl', '--batch-size', '50'], {
      cwd: dir,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr.once('data', () => child.stderr.destroy());
    const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    const stats = await runBin(dir, ['stats', '--json'], env);
    expect(JSON.parse(stats.stdout).total).toBe(3000);
  });

  it('a configuration error exits 4 with the file and field and no stack trace; --verbose adds it', async () => {
    writeFileSync(join(dir, 'memloom.config.json'), JSON.stringify({ store: 'sqlite:./m.db', strategy: { highSimilarity: 2 } }));
    const result = await runBin(dir, ['list']);
    expect(result.code).toBe(4);
    expect(result.stderr).toBe(`memloom: [config] invalid configuration in ${join(dir, 'memloom.config.json')}: strategy.highSimilarity: Too big: expected number to be <=1\n`);
    const verbose = await runBin(dir, ['list', '--verbose']);
    expect(verbose.stderr).toMatch(/\n +at /);
  });
});
