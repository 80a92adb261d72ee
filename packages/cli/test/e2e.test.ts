import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN, runBin, syntheticExport, tempFolder } from './helpers.js';

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
