import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { importOptional } from '../src/backends.js';
import { errorOf } from './helpers.js';
import { createMemory, resolveMemloomConfig, type Memory } from '../src/index.js';
import { createFakeClock, createInMemoryStore, createTestEmbedder } from '@memloom/core/testing';
import { createMemoryPipeline, documentVectors } from '@memloom/core';

let cwd: string;
const opened: Memory[] = [];

beforeEach(() => {
  cwd = mkdtempSync(join(tmpdir(), 'memloom-umbrella-'));
});

afterEach(async () => {
  for (const memory of opened.splice(0)) await memory.close().catch(() => undefined);
  rmSync(cwd, { recursive: true, force: true });
});

async function open(options: Parameters<typeof createMemory>[0]): Promise<Memory> {
  const memory = await createMemory(options);
  opened.push(memory);
  return memory;
}

describe('createMemory() defaults', () => {
  it('uses the SQLite store at .memloom/memory.db and the offline embedder when nothing is configured', async () => {
    const memory = await open({ cwd, env: {} });
    expect(memory.store.name).toBe('sqlite');
    await memory.add('I keep my bike in the garage', { scope: { userId: 'u1' } });
    expect(existsSync(join(cwd, '.memloom', 'memory.db'))).toBe(true);
    const results = await memory.search('where is the bike?', { scope: { userId: 'u1' } });
    expect(results[0]?.memory.content).toBe('I keep my bike in the garage');
    const resolved = await resolveMemloomConfig({ cwd, env: {} });
    expect(resolved.store).toEqual({ config: 'sqlite', source: 'default', parsed: { type: 'sqlite' } });
    expect(resolved.embedder).toEqual({ config: 'default', source: 'default', parsed: { type: 'default' } });
  });

  it('reads a relative configFile from cwd, not from the process directory', async () => {
    mkdirSync(join(cwd, 'conf'));
    writeFileSync(join(cwd, 'conf', 'team.json'), JSON.stringify({ store: 'memory' }));
    const resolved = await resolveMemloomConfig({ cwd, configFile: 'conf/team.json', env: {} });
    expect(resolved.store.config).toBe('memory');
    expect(resolved.store.source).toContain(join(cwd, 'conf', 'team.json'));
  });

  it('resolves the SQLite file and whether the store is the default one, without creating anything', async () => {
    const resolve = (options: Parameters<typeof resolveMemloomConfig>[0]) => resolveMemloomConfig({ cwd, ...options });
    const nothing = await resolve({ env: {} });
    expect(nothing.sqliteFile).toEqual({ path: join(cwd, '.memloom', 'memory.db'), from: 'default', source: 'the default store path (.memloom/memory.db, nothing configured)' });
    expect(nothing.defaultStore).toBe(true);
    const variable = await resolve({ env: { MEMLOOM_SQLITE_PATH: ' data/elsewhere.db ' } });
    expect(variable.sqliteFile).toEqual({ path: join(cwd, 'data', 'elsewhere.db'), from: 'environment', source: 'environment variable MEMLOOM_SQLITE_PATH' });
    expect(variable.defaultStore).toBe(false);
    // MEMLOOM_STORE=sqlite names the store, though not its file.
    const named = await resolve({ env: { MEMLOOM_STORE: 'sqlite' } });
    expect(named.sqliteFile).toEqual({ path: join(cwd, '.memloom', 'memory.db'), from: 'default', source: 'the default store path (.memloom/memory.db, for the SQLite store set in environment variable MEMLOOM_STORE)' });
    expect(named.defaultStore).toBe(false);
    // So does a configuration file's { "store": "sqlite" }: its source says the file chose SQLite, not that nothing was configured.
    writeFileSync(join(cwd, 'memloom.config.json'), JSON.stringify({ store: 'sqlite' }));
    const inFile = await resolve({ env: {} });
    expect(inFile.sqliteFile).toMatchObject({ path: join(cwd, '.memloom', 'memory.db'), from: 'default', source: `the default store path (.memloom/memory.db, for the SQLite store set in ${join(cwd, 'memloom.config.json')})` });
    expect(inFile.defaultStore).toBe(false);
    rmSync(join(cwd, 'memloom.config.json'));
    // A configuration file's path is read from its folder; with none, the default file goes beside it.
    mkdirSync(join(cwd, 'project', 'sub'), { recursive: true });
    const file = join(cwd, 'project', 'memloom.config.json');
    writeFileSync(file, JSON.stringify({ store: 'sqlite:./team.db' }));
    const configured = await resolveMemloomConfig({ cwd: join(cwd, 'project', 'sub'), env: {} });
    expect(configured.sqliteFile).toEqual({ path: join(cwd, 'project', 'team.db'), from: 'configuration', source: file });
    expect(configured.defaultStore).toBe(false);
    writeFileSync(file, JSON.stringify({ embedder: 'lexical' }));
    const beside = await resolveMemloomConfig({ cwd: join(cwd, 'project', 'sub'), env: {} });
    expect(beside.sqliteFile?.path).toBe(join(cwd, 'project', '.memloom', 'memory.db'));
    expect(beside.defaultStore).toBe(true);
    // No SQLite file for another store or a store object.
    for (const other of [await resolve({ env: { MEMLOOM_STORE: 'memory:' } }), await resolve({ env: {}, store: createInMemoryStore() })]) {
      expect(other.sqliteFile).toBeUndefined();
      expect(other.defaultStore).toBe(false);
    }
    expect(readdirSync(cwd)).toEqual(['project']);
  });

  it('reads a relative SQLite path, MEMLOOM_SQLITE_PATH and the default file in the folder of the layer that names the store, else beside the configuration file', async () => {
    // A project whose configuration file sits above the working directory.
    const project = join(cwd, 'project');
    const sub = join(project, 'sub');
    mkdirSync(sub, { recursive: true });
    const file = join(project, 'memloom.config.json');
    const pathOf = async (config: object, options: Parameters<typeof resolveMemloomConfig>[0]) => {
      writeFileSync(file, JSON.stringify(config));
      return (await resolveMemloomConfig({ cwd: sub, ...options })).sqliteFile?.path;
    };
    const variable = { MEMLOOM_SQLITE_PATH: 'data/m.db' };
    // MEMLOOM_SQLITE_PATH: beside the file when it names the store or none does; in cwd when the options or MEMLOOM_STORE name it.
    expect(await pathOf({ embedder: 'lexical' }, { env: variable })).toBe(join(project, 'data', 'm.db'));
    expect(await pathOf({ store: 'sqlite' }, { env: variable })).toBe(join(project, 'data', 'm.db'));
    expect(await pathOf({ store: { type: 'sqlite' } }, { env: variable, store: 'sqlite:' })).toBe(join(sub, 'data', 'm.db'));
    expect(await pathOf({ embedder: 'lexical' }, { env: { ...variable, MEMLOOM_STORE: 'sqlite' } })).toBe(join(sub, 'data', 'm.db'));
    // A store's own path: in MEMLOOM_STORE or the options, in cwd; in a file, in the file's folder.
    expect(await pathOf({ embedder: 'lexical' }, { env: { MEMLOOM_STORE: 'sqlite:data/m.db' } })).toBe(join(sub, 'data', 'm.db'));
    expect(await pathOf({ embedder: 'lexical' }, { env: {}, store: 'sqlite:data/m.db' })).toBe(join(sub, 'data', 'm.db'));
    expect(await pathOf({ store: 'sqlite:data/m.db' }, { env: variable })).toBe(join(project, 'data', 'm.db'));
    // The default file: beside the file when it names SQLite or no layer names a store; in cwd for the options or MEMLOOM_STORE.
    expect(await pathOf({ embedder: 'lexical' }, { env: {} })).toBe(join(project, '.memloom', 'memory.db'));
    expect(await pathOf({ store: 'sqlite' }, { env: {} })).toBe(join(project, '.memloom', 'memory.db'));
    expect(await pathOf({ embedder: 'lexical' }, { env: {}, store: 'sqlite' })).toBe(join(sub, '.memloom', 'memory.db'));
    expect(await pathOf({ embedder: 'lexical' }, { env: { MEMLOOM_STORE: 'sqlite:' } })).toBe(join(sub, '.memloom', 'memory.db'));
    expect(readdirSync(sub)).toEqual([]);
    // A resolved configuration without its file (optional in its type) opens the same one: a memory added is found again.
    writeFileSync(file, JSON.stringify({ store: 'sqlite' }));
    const options = { cwd: sub, env: variable, embedder: 'lexical' };
    const writer = await open(options);
    await writer.add('Keeps bees on the roof', { scope: { userId: 'alice' } });
    await writer.close();
    const { sqliteFile: _file, ...withoutFile } = await resolveMemloomConfig(options);
    const reader = await createMemory(options, withoutFile);
    opened.push(reader);
    expect(await reader.count({ scope: { userId: 'alice' } })).toBe(1);
    expect(readdirSync(join(project, 'data'))).toContain('m.db');
    expect(readdirSync(sub)).toEqual([]);
  });

  it('resolves a Markdown store\'s folder from the folder of the file or layer that names it, without creating anything', async () => {
    mkdirSync(join(cwd, 'project', 'sub'), { recursive: true });
    const file = join(cwd, 'project', 'memloom.config.json');
    writeFileSync(file, JSON.stringify({ store: { type: 'markdown', root: './notes' } }));
    const fromFile = await resolveMemloomConfig({ cwd: join(cwd, 'project', 'sub'), env: {} });
    expect(fromFile.markdownRoot).toBe(join(cwd, 'project', 'notes'));
    expect(fromFile.sqliteFile).toBeUndefined();
    const fromVariable = await resolveMemloomConfig({ cwd, configFile: false, env: { MEMLOOM_STORE: 'markdown:./md' } });
    expect(fromVariable.markdownRoot).toBe(join(cwd, 'md'));
    const absolute = await resolveMemloomConfig({ cwd, configFile: false, env: {}, store: `markdown:${join(cwd, 'elsewhere')}` });
    expect(absolute.markdownRoot).toBe(join(cwd, 'elsewhere'));
    expect((await resolveMemloomConfig({ cwd, configFile: false, env: {} })).markdownRoot).toBeUndefined();
    expect(readdirSync(join(cwd, 'project'))).toEqual(['memloom.config.json', 'sub']);
  });

  it('honours MEMLOOM_SQLITE_PATH for the default store', async () => {
    const memory = await open({ cwd, env: { MEMLOOM_SQLITE_PATH: 'data/elsewhere.db' } });
    await memory.add('a note', { scope: { userId: 'u1' } });
    expect(existsSync(join(cwd, 'data', 'elsewhere.db'))).toBe(true);
    // A path that cannot be a database file is blamed on the variable, or on the default location.
    mkdirSync(join(cwd, 'folder.db'));
    const variable = await errorOf(createMemory({ cwd, env: { MEMLOOM_SQLITE_PATH: 'folder.db' } }));
    expect(variable).toMatchObject({ code: 'INVALID_CONFIG', details: { source: 'environment variable MEMLOOM_SQLITE_PATH' } });
    expect(variable.message).toContain('is a folder');
    writeFileSync(join(cwd, '.memloom'), 'a file where the default folder goes');
    const fallback = await errorOf(createMemory({ cwd, env: {} }));
    expect(fallback.message).toContain('invalid configuration in the default store path (.memloom/memory.db, nothing configured): store: path');
    // Any other store option is the setting's, not the path's.
    rmSync(join(cwd, '.memloom'));
    writeFileSync(join(cwd, 'memloom.config.json'), JSON.stringify({ store: { type: 'sqlite', busyTimeoutMs: -5 } }));
    const option = await errorOf(createMemory({ cwd, env: { MEMLOOM_SQLITE_PATH: 'data/other.db' } }));
    expect(option.message).toContain(`invalid configuration in ${join(cwd, 'memloom.config.json')}: store: busyTimeoutMs`);
  });
});

describe('createMemory() by configuration', () => {
  it('reads the store from MEMLOOM_STORE', async () => {
    const memory = await open({ cwd, env: { MEMLOOM_STORE: 'memory:', MEMLOOM_EMBEDDER: 'lexical' } });
    expect(memory.store.name).toBe('memory');
    expect(memory.embedder.id).toMatch(/lexical/);
  });

  it('reads memloom.config.json from the working directory or a parent, resolving paths against the file', async () => {
    writeFileSync(join(cwd, 'memloom.config.json'), JSON.stringify({ store: { type: 'markdown', root: './notes' }, embedder: 'lexical' }));
    const nested = join(cwd, 'app', 'src');
    mkdirSync(nested, { recursive: true });
    const memory = await open({ cwd: nested, env: { MEMLOOM_STORE: 'memory:' } });
    expect(memory.store.name).toBe('markdown');
    await memory.add('Remember the milk', { scope: { userId: 'u1' } });
    expect(existsSync(join(cwd, 'notes'))).toBe(true);
  });

  it("gives a Markdown store the Memory's retrieval.contextWeight, so the vectors it rebuilds are the ones the Memory wrote", async () => {
    const embedder = createTestEmbedder({ dimension: 16 });
    const memory = await open({ cwd, env: {}, embedder, store: { type: 'markdown', root: './notes' }, retrieval: { contextWeight: 0.2 } });
    const added = await memory.add('The user booked lessons.', { scope: { userId: 'u1' }, context: 'We talked about skiing in the Alps.' });
    const written = await memory.store.getVector(added.memory.id);
    await (memory.store as import('@memloom/store-markdown').MarkdownStore).rebuildIndex();
    const rounded = (vector: number[] | undefined) => vector?.map((value) => Math.round(value * 1e5));
    expect(rounded(await memory.store.getVector(added.memory.id))).toEqual(rounded(written));
  });

  it("lets a Markdown store setting's own contextWeight win over the Memory's retrieval.contextWeight", async () => {
    const embedder = createTestEmbedder({ dimension: 16 });
    const memory = await open({ cwd, env: {}, embedder, store: { type: 'markdown', root: './notes', contextWeight: 0 }, retrieval: { contextWeight: 0.2 } });
    const added = await memory.add('The user booked lessons.', { scope: { userId: 'u1' }, context: 'We talked about skiing in the Alps.' });
    await (memory.store as import('@memloom/store-markdown').MarkdownStore).rebuildIndex();
    // Rebuilt by the store with its own weight 0: the content's vector alone, the context left out.
    const [contentOnly] = await documentVectors(embedder, [added.memory], 0);
    const rounded = (vector: number[] | undefined) => vector?.map((value) => Math.round(value * 1e5));
    expect(rounded(await memory.store.getVector(added.memory.id))).toEqual(rounded(contentOnly));
  });

  it("gives a Markdown store the Memory's clock: a hand edit is a version at the Memory's time, and its backup is named by it", async () => {
    const clock = createFakeClock('2024-03-02T09:00:00Z');
    const memory = await open({ cwd, env: {}, configFile: false, embedder: createTestEmbedder({ dimension: 16 }), store: 'markdown:./notes', clock });
    const scope = { userId: 'u' };
    const added = await memory.add('I live in Lyon', { scope });
    const folder = (memory.store as import('@memloom/store-markdown').MarkdownStore).directoryFor(scope);
    const file = join(folder, 'MEMORY.md');
    writeFileSync(file, readFileSync(file, 'utf8').replace('I live in Lyon', 'I live in Lyon, France'));
    clock.advanceDays(10);
    const versions = await memory.history(added.memory.id, { scope });
    expect(versions.map((version) => [version.version, version.at, version.trigger])).toEqual([
      [1, '2024-03-02T09:00:00.000Z', 'user_mention'],
      [2, '2024-03-12T09:00:00.000Z', 'manual_edit'],
    ]);
    expect(readdirSync(join(folder, 'backups'))).toEqual(['20240312_090000_MEMORY.md']);
  });

  it("warns the Memory's logger of a Markdown file the store cannot read, and stderr when none is given", async () => {
    const embedder = createTestEmbedder({ dimension: 16 });
    const scope = { userId: '小明' };
    const first = await open({ cwd, env: {}, configFile: false, embedder, store: 'markdown:./notes' });
    await first.add('我喜欢吃火锅。', { scope });
    const file = join((first.store as import('@memloom/store-markdown').MarkdownStore).directoryFor(scope), 'MEMORY.md');
    await first.close();
    const [before, after] = readFileSync(file, 'utf8').split('我喜欢吃火锅。') as [string, string];
    // The memory's text saved as GBK, as a legacy Windows editor does.
    writeFileSync(file, Buffer.concat([Buffer.from(before), Buffer.from('ced2cfb2bbb6b3d4bbf0b9f8a1a3', 'hex'), Buffer.from(after)]));
    const expected = /^\[memloom\] \[markdown\] users\/%E5%B0%8F%E6%98%8E\/memory\/MEMORY\.md:\d+: is not valid UTF-8 .*GBK/u;

    const warnings: string[] = [];
    const withLogger = await open({ cwd, env: {}, configFile: false, embedder, store: 'markdown:./notes', logger: { warn: (message) => warnings.push(message) } });
    expect(await withLogger.list({ scope })).toEqual([]);
    expect(warnings).toEqual([expect.stringMatching(expected)]);

    const stderr = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const withoutLogger = await open({ cwd, env: {}, configFile: false, embedder, store: 'markdown:./notes' });
      expect(await withoutLogger.list({ scope })).toEqual([]);
      // Said once, not again at every read that finds the file (a long-running agent would print it per request).
      expect(await withoutLogger.search('火锅', { scope })).toEqual([]);
      expect(await withoutLogger.list({ scope })).toEqual([]);
      expect(stderr.mock.calls).toEqual([[expect.stringMatching(expected)]]);
    } finally {
      stderr.mockRestore();
    }
  });

  it('lets options win over the file, and the file over the environment, field by field', async () => {
    writeFileSync(
      join(cwd, 'memloom.config.json'),
      JSON.stringify({ store: 'memory:', retrieval: { defaultLimit: 3, recencyHalfLifeDays: 10 }, policy: { retrieve_limit: 7 } }),
    );
    const env = { MEMLOOM_STORE: 'sqlite:./env.db', MEMLOOM_POLICY: '{"recent_days":1,"retrieve_limit":2}' };
    const resolved = await resolveMemloomConfig({ cwd, env, retrieval: { defaultLimit: 5 } });
    expect(resolved.store.source).toBe(join(cwd, 'memloom.config.json'));
    expect(resolved.engine.retrieval).toEqual({ defaultLimit: 5, recencyHalfLifeDays: 10 });
    expect(resolved.policy.retrieve_limit).toBe(7);
    expect(resolved.policy.recent_days).toBe(1);
    const memory = await open({ cwd, env, retrieval: { defaultLimit: 5 } });
    expect(memory.config.retrieval.defaultLimit).toBe(5);
    expect(memory.config.retrieval.recencyHalfLifeDays).toBe(10);
  });

  it("policy.retrieve_limit is how many results search() returns by default, unless the same layer or a higher one sets retrieval.defaultLimit", async () => {
    const defaultCount = async (options: Parameters<typeof createMemory>[0]) => {
      const memory = await open({ cwd, env: {}, store: 'memory:', embedder: 'lexical', ...options });
      for (let index = 1; index <= 12; index++) await memory.add(`coffee note number ${index}`, { scope: { userId: 'u1' }, merge: false });
      expect(await memory.search('coffee', { scope: { userId: 'u1' }, limit: 12 })).toHaveLength(12);
      return (await memory.search('coffee', { scope: { userId: 'u1' } })).length;
    };
    expect(await defaultCount({})).toBe(10);
    expect(await defaultCount({ policy: { retrieve_limit: 5 } })).toBe(5);
    expect(await defaultCount({ env: { MEMLOOM_POLICY: '{"retrieve_limit":3}' } })).toBe(3);
    writeFileSync(join(cwd, 'memloom.config.json'), JSON.stringify({ policy: { retrieve_limit: 4 } }));
    expect(await defaultCount({})).toBe(4);
    expect(await defaultCount({ retrieval: { defaultLimit: 6 } })).toBe(6);
    writeFileSync(join(cwd, 'memloom.config.json'), JSON.stringify({ retrieval: { defaultLimit: 6 }, policy: { retrieve_limit: 4 } }));
    expect(await defaultCount({})).toBe(6);
    expect(await defaultCount({ policy: { retrieve_limit: 2 } })).toBe(2);
    expect((await resolveMemloomConfig({ cwd, env: {}, policy: { retrieve_limit: 2 } })).engine.retrieval).toEqual({ defaultLimit: 2 });
  });

  it('keeps the resolved policy on the memory (memory.config.policy), for the pipelines and adapters over it', async () => {
    writeFileSync(join(cwd, 'memloom.config.json'), JSON.stringify({ store: 'memory:', embedder: 'lexical', policy: { recent_days: 5, session_summary_keep_count: 6 } }));
    const memory = await open({ cwd, env: { MEMLOOM_POLICY: '{"recent_days":1,"long_term_compress_char_threshold":5000}' }, policy: { retrieve_limit: 2 } });
    expect(memory.config.policy).toMatchObject({ retrieve_limit: 2, recent_days: 5, session_summary_keep_count: 6, long_term_compress_char_threshold: 5000, evolution_enabled: false });
    expect(memory.config.policy).toEqual((await resolveMemloomConfig({ cwd, env: { MEMLOOM_POLICY: '{"recent_days":1,"long_term_compress_char_threshold":5000}' }, policy: { retrieve_limit: 2 } })).policy);
    const pipeline = createMemoryPipeline({ memory, languageModel: null });
    expect(await pipeline.policy()).toEqual(memory.config.policy);
  });

  it("search without a limit reads the scope's policy_overrides.json of a Markdown store (seed 001: configuration, then the overrides file)", async () => {
    const memory = await open({ cwd, env: {}, configFile: false, store: { type: 'markdown', root: './memory' }, embedder: 'lexical', policy: { retrieve_limit: 4 } });
    const scope = { userId: 'u' };
    for (const text of ['I live in Lyon', 'I live near the river', 'I live with two cats']) await memory.add(text, { scope, merge: false });
    expect(await memory.search('I live', { scope })).toHaveLength(3);
    writeFileSync(join(cwd, 'memory', 'users', 'u', 'memory', 'policy_overrides.json'), '{"retrieve_limit": 1}\n');
    expect(await memory.search('I live', { scope })).toHaveLength(1);
    rmSync(join(cwd, 'memory', 'users', 'u', 'memory', 'policy_overrides.json'));
    expect(await memory.search('I live', { scope })).toHaveLength(3);
  });

  it('takes store and embedder objects as they are', async () => {
    const store = createInMemoryStore();
    const embedder = createTestEmbedder();
    const memory = await open({ cwd, env: { MEMLOOM_STORE: 'qdrant:http://nowhere:6333' }, store, embedder });
    expect(memory.store).toBe(store);
    expect(memory.embedder).toBe(embedder);
  });
});

/**
 * A stand-in Qdrant server (not a Qdrant) that records what the store asks: the client's version
 * check at / is answered, no collection exists, and everything else is refused.
 */
async function standInQdrant(): Promise<{ url: string; requests: string[]; close: () => void }> {
  const requests: string[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      if (request.url === '/') {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ title: 'qdrant - vector search engine', version: '1.17.0' }));
        return;
      }
      requests.push(`${request.method} ${request.url} ${body}`);
      if (request.url?.endsWith('/exists')) {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ result: { exists: false }, status: 'ok', time: 0 }));
        return;
      }
      response.writeHead(400, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ status: { error: 'refused by the test' } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, close: () => server.close() };
}

describe('the Qdrant store from the environment', () => {
  it('takes QDRANT_URL, MEMLOOM_QDRANT_COLLECTION and MEMLOOM_QDRANT_SHARDS for what the store setting leaves out', async () => {
    const { url, requests, close } = await standInQdrant();
    try {
      const env = { MEMLOOM_STORE: 'qdrant', QDRANT_URL: url, MEMLOOM_QDRANT_COLLECTION: 'team', MEMLOOM_QDRANT_SHARDS: '3' };
      const memory = await open({ cwd, env, embedder: createTestEmbedder() });
      expect(memory.store.name).toBe('qdrant');
      await errorOf(memory.count());
      expect(requests.length).toBeGreaterThan(0);
      expect(requests.every((request) => / \/collections\/team\b/u.test(request))).toBe(true);
      // The collection is created with the shards asked for.
      expect(requests.some((request) => request.startsWith('PUT /collections/team ') && request.includes('"shard_number":3'))).toBe(true);
      // A URL in the store setting wins over QDRANT_URL.
      const other = await open({ cwd, env: { ...env, MEMLOOM_STORE: 'qdrant:http://127.0.0.1:1' }, embedder: createTestEmbedder() });
      const before = requests.length;
      await errorOf(other.count());
      expect(requests.length).toBe(before);
    } finally {
      close();
    }
  });

  it('says where the Qdrant URL came from when the server is not reached, answers an error or has no such collection', async () => {
    const { url, close } = await standInQdrant();
    try {
      const fromVariable = await open({ cwd, configFile: false, env: { MEMLOOM_STORE: 'qdrant', QDRANT_URL: url }, embedder: createTestEmbedder(), mustExist: true });
      const missing = await errorOf(fromVariable.count());
      expect(missing).toMatchObject({ code: 'MISSING_RESOURCE', details: { url, mustExist: true, urlSource: 'environment variable QDRANT_URL' } });
      expect(missing.message).toMatch(/\(the Qdrant URL from environment variable QDRANT_URL\)$/u);
      const file = join(cwd, 'memloom.config.json');
      writeFileSync(file, JSON.stringify({ store: { type: 'qdrant', url } }));
      const fromFile = await open({ cwd, env: { QDRANT_URL: 'http://127.0.0.1:1' }, embedder: createTestEmbedder(), mustExist: true });
      expect((await errorOf(fromFile.count())).message).toMatch(new RegExp(`\\(the Qdrant URL from ${file.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&')}\\)$`, 'u'));
      // An answer from the server (here, the collection refused) names the URL and its source too: it may be the wrong server's.
      const answered = await errorOf((await open({ cwd, env: {}, embedder: createTestEmbedder() })).count());
      expect(answered).toMatchObject({ code: 'STORE_ERROR', details: { status: 400, url, urlSource: file } });
      expect(answered.message).toMatch(new RegExp(`\\(the Qdrant URL from ${file.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&')}\\)$`, 'u'));
    } finally {
      close();
    }
    // A server not reached, at a URL given in code (one try: no wait between tries).
    const unreached = await open({ cwd, configFile: false, env: {}, store: { type: 'qdrant', url: 'http://127.0.0.1:1', retry: { attempts: 1 } }, embedder: createTestEmbedder() });
    const error = await errorOf(unreached.count());
    expect(error).toMatchObject({ code: 'STORE_ERROR', backend: 'qdrant', details: { urlSource: 'options' } });
    expect(error.message).toContain('(Qdrant at http://127.0.0.1:1)');
    expect(error.message).toMatch(/\(the Qdrant URL from options\)$/u);
  });

  it('refuses a Qdrant variable that is not valid, naming it', async () => {
    const error = await errorOf(createMemory({ cwd, env: { MEMLOOM_STORE: 'qdrant:http://127.0.0.1:1', MEMLOOM_QDRANT_SHARDS: 'x' }, embedder: createTestEmbedder() }));
    expect(error.code).toBe('INVALID_CONFIG');
    expect(error.message).toContain('MEMLOOM_QDRANT_SHARDS');
    const url = await errorOf(createMemory({ cwd, env: { MEMLOOM_STORE: 'qdrant', QDRANT_URL: 'localhost:6333' }, embedder: createTestEmbedder() }));
    expect(url).toMatchObject({ code: 'INVALID_CONFIG' });
    expect(url.message).toContain('QDRANT_URL is not valid');
  });

  it('ignores a stale Qdrant variable for a field the store setting gives', async () => {
    writeFileSync(join(cwd, 'memloom.config.json'), JSON.stringify({ store: { type: 'qdrant', url: 'http://127.0.0.1:1', collection: 'team' } }));
    const env = { QDRANT_URL: 'localhost:6333', MEMLOOM_QDRANT_COLLECTION: 'team memories', MEMLOOM_QDRANT_SHARDS: 'x' };
    const memory = await open({ cwd, env: { ...env, MEMLOOM_QDRANT_SHARDS: '2' }, embedder: createTestEmbedder() });
    expect(memory.store.name).toBe('qdrant');
    // A client given in the setting makes QDRANT_URL unused: a stale one is not checked.
    const client = { getCollections: async () => ({ collections: [] }) };
    const withClient = await open({ cwd, configFile: false, env: { QDRANT_URL: 'localhost:6333' }, store: { type: 'qdrant', client } as never, embedder: createTestEmbedder() });
    expect(withClient.store.name).toBe('qdrant');
    // A variable for a field the setting leaves out is still read, and checked.
    expect((await errorOf(createMemory({ cwd, env, embedder: createTestEmbedder() }))).message).toContain('MEMLOOM_QDRANT_SHARDS');
  });
});

describe('mustExist: open the store only if it exists', () => {
  it('refuses a missing SQLite file or Markdown folder, from any layer or the default, with MISSING_RESOURCE naming it; nothing is created', async () => {
    const cases: [string, Parameters<typeof createMemory>[0], string][] = [
      ['option', { cwd, configFile: false, env: {}, store: 'sqlite:./typo/memory.db' }, join(cwd, 'typo', 'memory.db')],
      ['environment', { cwd, configFile: false, env: { MEMLOOM_STORE: 'markdown:./typo-notes' } }, join(cwd, 'typo-notes')],
      ['MEMLOOM_SQLITE_PATH', { cwd, configFile: false, env: { MEMLOOM_SQLITE_PATH: 'data/typo.db' } }, join(cwd, 'data', 'typo.db')],
      ['default', { cwd, configFile: false, env: {} }, join(cwd, '.memloom', 'memory.db')],
    ];
    for (const [name, options, path] of cases) {
      const memory = await open({ ...options, mustExist: true });
      const error = await errorOf(memory.count());
      expect(error.code, name).toBe('MISSING_RESOURCE');
      expect(error.details, name).toMatchObject({ path, mustExist: true });
      expect(error.message, name).toContain('nothing was created');
    }
    const file = join(cwd, 'memloom.config.json');
    writeFileSync(file, JSON.stringify({ store: { type: 'sqlite', path: './from-file.db' } }));
    expect((await errorOf((await open({ cwd, env: {}, mustExist: true })).count())).details).toMatchObject({ path: join(cwd, 'from-file.db') });
    rmSync(file);
    // Nothing was made: no file, no folder.
    expect(readdirSync(cwd)).toEqual([]);
    // Made by a write, the store is then opened with mustExist and read.
    const writer = await open({ cwd, configFile: false, env: {}, store: 'sqlite:./typo/memory.db' });
    await writer.add('I keep my bike in the garage');
    await writer.close();
    const reader = await open({ cwd, configFile: false, env: {}, store: 'sqlite:./typo/memory.db', mustExist: true });
    expect(await reader.count()).toBe(1);
    // A store kept in memory has nothing to find.
    expect(await (await open({ cwd, configFile: false, env: {}, store: 'memory:', mustExist: true })).count()).toBe(0);
    expect((await errorOf(createMemory({ cwd, configFile: false, env: {}, mustExist: 'yes' as never }))).code).toBe('INVALID_OPTIONS');
  });

  it('refuses a missing Qdrant collection with MISSING_RESOURCE naming it and the URL; nothing is created on the server', async () => {
    const { url, requests, close } = await standInQdrant();
    try {
      const env = { MEMLOOM_STORE: `qdrant:${url}`, MEMLOOM_QDRANT_COLLECTION: 'teem' };
      const reader = await open({ cwd, configFile: false, env, embedder: createTestEmbedder(), mustExist: true });
      const error = await errorOf(reader.count());
      expect(error).toMatchObject({ code: 'MISSING_RESOURCE', backend: 'qdrant', details: { collection: 'teem', url, mustExist: true } });
      expect(requests).toContain('GET /collections/teem/exists ');
      expect(requests.filter((request) => !request.startsWith('GET '))).toEqual([]);
      // Without it, the collection is created as before (the stand-in refuses, after the request was made).
      const writer = await open({ cwd, configFile: false, env, embedder: createTestEmbedder() });
      await errorOf(writer.count());
      expect(requests.some((request) => request.startsWith('PUT /collections/teem '))).toBe(true);
    } finally {
      close();
    }
  });
});

describe('configuration errors name the field and where it came from', () => {
  it('a bad field in the file', async () => {
    writeFileSync(join(cwd, 'memloom.config.json'), JSON.stringify({ strategy: { highSimilarity: 3 } }));
    const error = await errorOf(createMemory({ cwd, env: {} }));
    expect(error.code).toBe('INVALID_CONFIG');
    expect(error.message).toContain('memloom.config.json');
    expect(error.message).toContain('strategy.highSimilarity');
  });

  it('puts the default SQLite file beside the configuration file, so a project\'s subfolders share one memory', async () => {
    writeFileSync(join(cwd, 'memloom.config.json'), JSON.stringify({ scope: { userId: 'me' } }));
    const inner = join(cwd, 'a', 'b');
    mkdirSync(inner, { recursive: true });
    const memory = await open({ cwd: inner, env: {} });
    await memory.add('I keep my notes in the project root.');
    await memory.close();
    expect(existsSync(join(cwd, '.memloom', 'memory.db'))).toBe(true);
    expect(existsSync(join(inner, '.memloom'))).toBe(false);
    // Without a configuration file, the working directory.
    const alone = await open({ cwd: inner, configFile: false, env: {} });
    await alone.add('I keep these notes here.');
    await alone.close();
    expect(existsSync(join(inner, '.memloom', 'memory.db'))).toBe(true);
  });

  it('a misspelt key inside a section is refused, naming it, not silently ignored', async () => {
    for (const [section, value] of [
      ['strategy', { highSimilarty: 0.9 }],
      ['retrieval', { defaultLimt: 5 }],
      ['freshness', { globalThresholdHour: 12 }],
      ['defaults', { categroy: 'fact' }],
      ['decay', { weightAlfa: 0.1 }],
      ['limits', { maxContentLenght: 10 }],
    ] as const) {
      writeFileSync(join(cwd, 'memloom.config.json'), JSON.stringify({ store: 'memory:', [section]: value }));
      const error = await errorOf(createMemory({ cwd, env: {} }));
      expect(error.code, section).toBe('INVALID_CONFIG');
      expect(error.message).toContain(`${section}: unknown key "${Object.keys(value)[0]}"`);
    }
  });

  it('values valid in each layer but not together are INVALID_CONFIG naming every layer that set them', async () => {
    writeFileSync(join(cwd, 'memloom.config.json'), JSON.stringify({ store: 'memory:', strategy: { mediumSimilarity: 0.8 } }));
    const error = await errorOf(createMemory({ cwd, env: {}, strategy: { highSimilarity: 0.7 } }));
    expect(error.code).toBe('INVALID_CONFIG');
    expect(error.message).toContain('createMemory options and');
    expect(error.message).toContain('memloom.config.json');
    expect(error.message).toMatch(/mediumSimilarity/);
  });

  it('MEMLOOM_FRESHNESS turns the stale-memory warnings on (24 h, hours or JSON) or off; a file still wins over it', async () => {
    const freshnessOf = async (value: string) => (await resolveMemloomConfig({ cwd, configFile: false, env: { MEMLOOM_FRESHNESS: value } })).engine.freshness;
    expect(await freshnessOf('on')).toEqual({});
    expect(await freshnessOf('TRUE')).toEqual({});
    expect(await freshnessOf('off')).toBe(false);
    expect(await freshnessOf('12')).toEqual({ globalThresholdHours: 12 });
    expect(await freshnessOf('{"globalThresholdHours":6,"typeOverrides":{"project":2}}')).toEqual({ globalThresholdHours: 6, typeOverrides: { project: 2 } });
    const memory = await open({ cwd, configFile: false, env: { MEMLOOM_STORE: 'memory:', MEMLOOM_FRESHNESS: 'on' } });
    expect(memory.config.freshness).toMatchObject({ globalThresholdHours: 24 });

    for (const bad of ['soon', '{"globalThresholdHours": -1}', '{broken', '-3', '24h', 'null']) {
      const error = await errorOf(createMemory({ cwd, configFile: false, env: { MEMLOOM_FRESHNESS: bad } }));
      expect(error.code).toBe('INVALID_CONFIG');
      expect(error.message).toMatch(/environment variable MEMLOOM_FRESHNESS: freshness/);
      if (!bad.startsWith('{"')) expect(error.message, bad).toContain('must be on, off, a number of hours');
    }
    writeFileSync(join(cwd, 'memloom.config.json'), JSON.stringify({ store: 'memory:', freshness: false }));
    expect((await resolveMemloomConfig({ cwd, env: { MEMLOOM_FRESHNESS: 'on' } })).engine.freshness).toBe(false);
  });

  it('an unknown key, broken JSON, an unknown store, a bad MEMLOOM_POLICY', async () => {
    writeFileSync(join(cwd, 'memloom.config.json'), JSON.stringify({ stroe: 'sqlite' }));
    expect((await errorOf(createMemory({ cwd, env: {} }))).message).toMatch(/memloom\.config\.json.*stroe/);
    writeFileSync(join(cwd, 'memloom.config.json'), '{ "store": ');
    expect((await errorOf(createMemory({ cwd, env: {} }))).message).toMatch(/memloom\.config\.json is not valid JSON/);
    const unknown = await errorOf(createMemory({ cwd, configFile: false, env: { MEMLOOM_STORE: 'postgres:x' } }));
    expect(unknown.message).toMatch(/environment variable MEMLOOM_STORE: store: unknown store "postgres"/);
    const policy = await errorOf(createMemory({ cwd, configFile: false, env: { MEMLOOM_POLICY: '{"retrieve_limit": 0}' } }));
    expect(policy.message).toMatch(/environment variable MEMLOOM_POLICY: policy\.retrieve_limit/);
    const brokenPolicy = await errorOf(createMemory({ cwd, configFile: false, env: { MEMLOOM_POLICY: '{retrieve_limit' } }));
    expect(brokenPolicy.message).toMatch(/environment variable MEMLOOM_POLICY: policy: must be a JSON object/);
    const embedder = await errorOf(createMemory({ cwd, configFile: false, env: { MEMLOOM_EMBEDDER: 'word2vec' } }));
    expect(embedder.message).toMatch(/environment variable MEMLOOM_EMBEDDER: embedder: unknown embedder "word2vec"/);
    const user = await errorOf(createMemory({ cwd, configFile: false, env: { MEMLOOM_USER_ID: 'a'.repeat(300) } }));
    expect(user.code).toBe('INVALID_CONFIG');
    expect(user.message).toMatch(/environment variable MEMLOOM_USER_ID: scope: /);
  });

  it("a store or embedder option its own factory refuses, named with the file", async () => {
    writeFileSync(join(cwd, 'memloom.config.json'), JSON.stringify({ store: { type: 'sqlite', path: './m.db', vectorChunkSize: 7 } }));
    const store = await errorOf(createMemory({ cwd, env: {} }));
    expect(store.code).toBe('INVALID_CONFIG');
    expect(store.message).toMatch(/invalid configuration in .*memloom\.config\.json: store: vectorChunkSize must be a positive multiple of 8/);
    writeFileSync(join(cwd, 'memloom.config.json'), JSON.stringify({ store: { type: 'sqlite', path: './m.db', vectorMirow: false } }));
    expect((await errorOf(createMemory({ cwd, env: {} }))).message).toMatch(/memloom\.config\.json: store: unknown option vectorMirow/);
    // The Markdown store checks its options with a schema: the misspelt key is named, not placed at "(root)".
    writeFileSync(join(cwd, 'memloom.config.json'), JSON.stringify({ store: { type: 'markdown', root: './notes', bakupRetention: 3 } }));
    const markdown = await errorOf(createMemory({ cwd, env: {} }));
    expect(markdown.code).toBe('INVALID_CONFIG');
    expect(markdown.message).toMatch(/memloom\.config\.json: store: invalid markdown store options: unknown key "bakupRetention"$/);
    expect(markdown.details).toMatchObject({ field: 'store' });
    writeFileSync(join(cwd, 'memloom.config.json'), JSON.stringify({ store: 'memory:', embedder: { type: 'lexical', wordDimension: -3 } }));
    const embedder = await errorOf(createMemory({ cwd, env: {} }));
    expect(embedder.code).toBe('INVALID_CONFIG');
    expect(embedder.message).toMatch(/memloom\.config\.json: embedder: lexical embedder: /);
    // Text after the colon of a named embedder would be dropped unread (MEMLOOM_EMBEDDER, the CLI's --embedder).
    for (const given of ['lexical:wordDimension=64', 'default:cacheEntries=5', 'use-lite:batchSize=3']) {
      const error = await errorOf(createMemory({ cwd: mkdtempSync(join(tmpdir(), 'memloom-suffix-')), env: { MEMLOOM_EMBEDDER: given, MEMLOOM_STORE: 'memory:' } }));
      expect(error.code, given).toBe('INVALID_CONFIG');
      expect(error.message, given).toMatch(/MEMLOOM_EMBEDDER: embedder: ".+" takes nothing after a colon/);
    }
  });

  it('names options as the caller says (a command line\'s flags), in errors and in what was resolved', async () => {
    const optionSources = { store: '--store', embedder: '--embedder' };
    const store = await errorOf(createMemory({ cwd, configFile: false, env: {}, store: 'bogus:x', optionSources }));
    expect(store).toMatchObject({ code: 'INVALID_CONFIG', details: { source: '--store', field: 'store' } });
    expect(store.message).toBe('[memloom] [config] invalid configuration in --store: store: unknown store "bogus" (expected one of sqlite, markdown, qdrant, memory, e.g. "sqlite:./memory.db")');
    const folder = await errorOf(createMemory({ cwd, configFile: false, env: {}, store: `sqlite:${cwd}`, optionSources }));
    expect(folder.message).toContain(`invalid configuration in --store: store: path ${cwd} is a folder`);
    expect((await errorOf(createMemory({ cwd, configFile: false, env: {}, embedder: 'word2vec', optionSources }))).message).toContain('invalid configuration in --embedder: embedder: unknown embedder');
    const resolved = await resolveMemloomConfig({ cwd, configFile: false, env: {}, store: 'memory:', optionSources });
    expect(resolved.store.source).toBe('--store');
    // Without them, as before.
    expect((await errorOf(createMemory({ cwd, configFile: false, env: {}, store: 'bogus:x' }))).message).toContain('invalid configuration in options: store');
  });

  it('a store package that is not installed names the package to install', async () => {
    const notInstalled = Object.assign(new Error("Cannot find package '@memloom/store-qdrant' imported from memloom"), {
      code: 'ERR_MODULE_NOT_FOUND',
    });
    const error = await errorOf(importOptional(() => Promise.reject(notInstalled), '@memloom/store-qdrant', 'environment (MEMLOOM_*)'));
    expect(error.code).toBe('MISSING_RESOURCE');
    expect(error.message).toContain('npm install @memloom/store-qdrant');
    expect(error.message).toContain('environment (MEMLOOM_*)');
    // Any other failure inside the package is not mistaken for a missing package.
    const inner = Object.assign(new Error("Cannot find package 'left-pad'"), { code: 'ERR_MODULE_NOT_FOUND' });
    await expect(importOptional(() => Promise.reject(inner), '@memloom/store-qdrant', 'x')).rejects.toBe(inner);
  });
});

describe('createMemory with the configuration already resolved', () => {
  it('does not read the configuration again: the file may be gone, and the Memory is built as it said', async () => {
    writeFileSync(join(cwd, 'memloom.config.json'), JSON.stringify({ store: 'memory:', embedder: 'lexical', scope: { userId: 'ana' } }));
    const options = { cwd, env: {} };
    const resolved = await resolveMemloomConfig(options);
    rmSync(join(cwd, 'memloom.config.json'));
    const memory = await createMemory(options, resolved);
    opened.push(memory);
    expect(memory.store.name).toBe('memory');
    expect(memory.embedder.id).toMatch(/lexical/);
    expect((await memory.add('I keep bees')).memory.scope).toEqual({ userId: 'ana' });
    // Without it the file is read again: here, nothing configures a scope any more.
    const reread = await open({ ...options, store: 'memory:' });
    expect((await reread.add('I keep bees')).memory.scope).toEqual({});
  });
});

describe('configuration modules', () => {
  it('reads the default export of memloom.config.mjs', async () => {
    writeFileSync(join(cwd, 'memloom.config.mjs'), "export default { store: 'memory:', embedder: 'lexical', scope: { userId: 'mjs' } };\n");
    const resolved = await resolveMemloomConfig({ cwd, env: {} });
    expect(resolved.store).toEqual({ config: 'memory:', source: join(cwd, 'memloom.config.mjs'), parsed: { type: 'memory' } });
    expect(resolved.engine.scope).toEqual({ userId: 'mjs' });
  });

  it('reads the default export of memloom.config.ts (the CLI tests load one in plain Node, through tsx)', async () => {
    writeFileSync(
      join(cwd, 'memloom.config.ts'),
      [
        "import type { MemloomConfig } from 'memloom';",
        "const userId: string = 'typed';",
        "const config: MemloomConfig = { store: 'memory:', embedder: 'lexical', scope: { userId } };",
        'export default config;',
        '',
      ].join('\n'),
    );
    const memory = await open({ cwd, env: {} });
    expect(memory.store.name).toBe('memory');
    const resolved = await resolveMemloomConfig({ cwd, env: {} });
    expect(resolved.engine.scope).toEqual({ userId: 'typed' });
  });

  it('names the .ts file and the field when its configuration is wrong', async () => {
    writeFileSync(join(cwd, 'memloom.config.ts'), "export default { store: 'memory:', retrieval: { defaultLimit: 'ten' as unknown as number } };\n");
    const error = await errorOf(createMemory({ cwd, env: {} }));
    expect(error.code).toBe('INVALID_CONFIG');
    expect(error.message).toContain(join(cwd, 'memloom.config.ts'));
    expect(error.message).toContain('retrieval.defaultLimit');
  });
});
