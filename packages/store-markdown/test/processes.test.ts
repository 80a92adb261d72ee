import { execSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MemoryRecord } from '@memloom/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { createMarkdownStore, type MarkdownStore } from '../src/index.js';
import { tempRoot } from './helpers.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const writer = path.join(here, 'fixtures', 'writer.mjs');
const scope = { userId: 'alice' };

beforeAll(() => {
  // turbo builds the package before its tests; a bare `vitest run` may not have.
  if (!existsSync(path.join(here, '..', 'dist', 'index.js'))) execSync('npx tsup', { cwd: path.join(here, '..'), stdio: 'ignore' });
});

function record(id: string, content: string): MemoryRecord {
  const at = '2024-03-02T09:00:00.000Z';
  return {
    id, content, level: 'full', weight: 1, baseWeight: 1, importance: 1, baseImportance: 1, category: 'fact', type: 'user', scope,
    createdAt: at, updatedAt: at, lastAccessedAt: at, source: 'user', verified: true, sources: [], tags: [], metadata: {}, revision: 1,
  };
}

async function seeded(records: MemoryRecord[]): Promise<string> {
  const root = await tempRoot('memloom-md-proc-');
  const store = createMarkdownStore({ root });
  await store.open({ dimension: 4, embedderId: 'test/vectors' });
  await store.apply(
    records.map((memory) => ({
      op: 'put' as const, memory, vector: [1, 0, 0, 0], expectedRevision: 0,
      version: { memoryId: memory.id, version: 1, at: memory.createdAt, trigger: 'import' as const, action: 'create' as const, reason: 'seed', before: null, after: memory },
    })),
  );
  await store.close();
  return root;
}

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
  errors: string;
}

function run(args: string[], env: Record<string, string> = {}, onLine?: (line: string, child: ReturnType<typeof spawn>) => void): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [writer, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let errors = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      for (const line of chunk.toString().split('\n')) if (line) onLine?.(line, child);
    });
    child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    child.on('error', reject);
    // 'close' (not 'exit'): every line the child printed has been read by then.
    child.on('close', (code, signal) => resolve({ code, signal, output, errors }));
  });
}

async function leftovers(directory: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(directory, { withFileTypes: true, recursive: true })) {
    if (entry.name.endsWith('.tmp')) out.push(entry.name);
  }
  return out;
}

async function open(root: string): Promise<MarkdownStore> {
  const store = createMarkdownStore({ root, lockStaleMs: 2_000 });
  await store.open({ dimension: 4, embedderId: 'test/vectors' });
  return store;
}

describe('a writer killed with SIGKILL in the middle of a write', () => {
  const points: Array<[string, 'old' | 'new']> = [
    ['after-journal', 'old'],
    ['before-backup', 'old'],
    ['before-commit', 'old'],
    ['after-commit', 'new'],
    ['after-first-rename', 'new'],
  ];
  it.each(points)('at %s leaves the whole batch %s, never half of it', async (point, expected) => {
    const root = await seeded([record('m1', 'old text')]);
    const result = await run(['crash', root], { MEMLOOM_MARKDOWN_FAILPOINT: point });
    expect(result.signal).toBe('SIGKILL');
    expect(result.output).not.toContain('committed');
    // The killed writer still holds the lock and left its journal.
    expect(existsSync(path.join(root, '.memloom', 'lock'))).toBe(true);
    expect(existsSync(path.join(root, '.memloom', 'journal.json'))).toBe(true);

    const store = await open(root);
    const m1 = await store.get('m1');
    const e1 = await store.get('e1');
    if (expected === 'old') {
      expect(m1?.content).toBe('old text');
      expect(e1).toBeUndefined();
      expect(await store.history('m1')).toHaveLength(1);
    } else {
      expect(m1?.content).toBe('new text');
      expect(e1?.content).toBe('a new episode');
      expect((await store.history('m1')).map((version) => version.after.content)).toEqual(['old text', 'new text']);
      expect(await store.getVector('e1')).toEqual([0, 1, 0, 0]);
    }
    expect(m1?.revision).toBe(expected === 'old' ? 1 : 2);
    expect((await store.sync()).problems).toEqual([]);
    expect(await leftovers(root)).toEqual([]);
    expect(existsSync(path.join(root, '.memloom', 'journal.json'))).toBe(false);
    // The store takes writes again (the dead writer's lock was broken).
    await store.apply([{ op: 'delete', id: 'm1' }]);
    expect(await store.count({})).toBe(expected === 'old' ? 0 : 1);
    await store.close();
    await rm(root, { recursive: true, force: true });
  });

  it("backs up a file a person changed after the commit point before finishing the write, and says so", async () => {
    const root = await seeded([record('m1', 'old text')]);
    const result = await run(['crash', root], { MEMLOOM_MARKDOWN_FAILPOINT: 'after-commit' });
    expect(result.signal).toBe('SIGKILL');
    // Before anything opens the store again, a person adds a block to the file the killed writer was replacing.
    const directory = path.join(root, 'users', 'alice', 'memory');
    const file = path.join(directory, 'MEMORY.md');
    const edited = `${await readFile(file, 'utf8')}\n## 2024-03-09\nA note typed after the crash.\n`;
    await writeFile(file, edited);

    const warnings: string[] = [];
    const store = createMarkdownStore({ root, lockStaleMs: 2_000, logger: { warn: (message) => warnings.push(message) } });
    await store.open({ dimension: 4, embedderId: 'test/vectors' });
    expect((await store.get('m1'))?.content).toBe('new text');
    const copies = await Promise.all((await readdir(path.join(directory, 'backups'))).map((name) => readFile(path.join(directory, 'backups', name), 'utf8')));
    expect(copies).toContain(edited);
    expect(warnings.filter((message) => message.includes('users/alice/memory/MEMORY.md was changed after a write to it was interrupted'))).toHaveLength(1);
    // The file as the writer read it (backed up before its commit point) and as the person left it.
    expect(copies).toHaveLength(2);
    await store.close();
    await rm(root, { recursive: true, force: true });
  });

  it('at a random moment of a stream of large writes leaves the last complete version', async () => {
    const root = await seeded([record('big', 'v0')]);
    const file = path.join(root, 'users', 'alice', 'memory', 'MEMORY.md');
    for (let round = 0; round < 5; round++) {
      let reported = 0;
      const target = 2 + round;
      const result = await run(['loop', root], {}, (line, child) => {
        reported = Number(line.split(' ')[1]);
        if (reported === target) setTimeout(() => child.kill('SIGKILL'), Math.floor(Math.random() * 40));
      });
      expect(result.signal).toBe('SIGKILL');
      const text = await readFile(file, 'utf8');
      const store = await open(root);
      const big = await store.get('big');
      // Either the version the writer last reported, or one it was still writing: whole, never cut.
      expect(big?.content).toMatch(/^v\d+ x{200000}$/u);
      const version = Number(big?.content.match(/^v(\d+)/u)?.[1]);
      expect(version === reported || version === reported + 1).toBe(true);
      expect(text.length).toBeGreaterThan(200_000);
      expect((await store.sync()).problems).toEqual([]);
      await store.close();
      expect(await leftovers(root)).toEqual([]);
    }
    await rm(root, { recursive: true, force: true });
  });
});

describe('two processes writing at once', () => {
  it('lose nothing: every add lands and every optimistic increment counts once', async () => {
    const counter = { ...record('counter', 'shared counter'), metadata: { count: 0 } };
    const root = await seeded([counter]);
    const [first, second] = await Promise.all([run(['race', root, 'p1', '25']), run(['race', root, 'p2', '25'])]);
    expect([first.code, second.code], first.errors + second.errors).toEqual([0, 0]);

    const store = await open(root);
    expect(await store.count({})).toBe(51);
    const ids = (await store.list({ orderBy: 'id' })).map((memory) => memory.id);
    for (const name of ['p1', 'p2']) for (let index = 0; index < 25; index++) expect(ids).toContain(`${name}-${index}`);
    expect((await store.get('counter'))?.metadata).toEqual({ count: 50 });
    expect(await store.history('counter')).toHaveLength(51);
    expect((await store.vectorSearch({ vector: [1, 24, 0, 0], limit: 2 })).map((hit) => hit.memory.id).sort()).toEqual(['p1-24', 'p2-24']);
    expect((await store.sync()).problems).toEqual([]);
    await store.close();
    await rm(root, { recursive: true, force: true });
  });
});
