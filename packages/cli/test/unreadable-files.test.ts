import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runBin, tempFolder, type RunResult } from './helpers.js';

// A Markdown file the store cannot read hides its memories: the commands that read say so and exit 1, as a write into it does.
let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempFolder('memloom-unreadable-'));
});
afterEach(() => cleanup());

const env = { MEMLOOM_EMBEDDER: 'lexical' };
const cli = (...args: string[]) => runBin(dir, [...args, '--no-config', '--store', 'markdown:./记忆'], env);
const XIAOMING_FILE = join('记忆', 'users', '%E5%B0%8F%E6%98%8E', 'memory', 'MEMORY.md');

/** 小明's MEMORY.md saved again as GBK (我喜欢吃火锅。 in two bytes a character), as a legacy Windows editor saves it; the line it is on. */
function saveAsGbk(): number {
  const file = join(dir, XIAOMING_FILE);
  const text = readFileSync(file, 'utf8');
  const [before, after] = text.split('我喜欢吃火锅。') as [string, string];
  writeFileSync(file, Buffer.concat([Buffer.from(before), Buffer.from('ced2cfb2bbb6b3d4bbf0b9f8a1a3', 'hex'), Buffer.from(after)]));
  return text.split('\n').indexOf('我喜欢吃火锅。') + 1;
}

describe('a Markdown store with a file it cannot read', () => {
  it('makes list, search, stats, index and export say which file and line, and exit 1, for the scope it hides memories of', { timeout: 120_000 }, async () => {
    const added = await cli('add', '我喜欢吃火锅。', '--user', '小明', '--json');
    expect(added.code).toBe(0);
    const id = JSON.parse(added.stdout).memory.id as string;
    expect((await cli('add', 'Bob sails on weekends.', '--user', 'bob')).code).toBe(0);
    const line = saveAsGbk();
    const shown = `${XIAOMING_FILE}:${line}: is not valid UTF-8 (saved in another encoding, such as GBK/GB18030`;

    const results = new Map<string, RunResult>();
    for (const command of [['list'], ['search', '火锅'], ['stats'], ['index'], ['export']]) {
      const result = await cli(...command, '--user', '小明');
      results.set(command[0] as string, result);
      expect(result.code, command[0]).toBe(1);
      expect(result.stderr, command[0]).toContain('memloom: [markdown] the store has a file with memories of user "小明" it cannot read');
      expect(result.stderr, command[0]).toContain(`\n  ${shown}`);
    }
    // What was read is printed as it is: the scope's other files are served.
    expect(results.get('list')?.stdout).toBe('No memories.\n');

    // --json: stdout holds what was read, stderr the error as JSON naming every file.
    const listed = await cli('list', '--user', '小明', '--json');
    expect(listed.code).toBe(1);
    expect(JSON.parse(listed.stdout)).toEqual([]);
    expect(JSON.parse(listed.stderr).error).toMatchObject({
      code: 'STORE_CORRUPT',
      exitCode: 1,
      details: { scope: { userId: '小明' }, problems: [{ file: XIAOMING_FILE, line, message: expect.stringContaining('GBK/GB18030') }] },
    });

    // An export to stdout writes nothing (piped into an import, it would move the store without the file's memories).
    expect(results.get('export')?.stdout).toBe('');
    // export -o writes no file that would look like a whole backup.
    expect((await cli('export', '--user', '小明', '-o', 'backup.jsonl')).code).toBe(1);
    expect(existsSync(join(dir, 'backup.jsonl'))).toBe(false);

    // A memory not found may be in the file: said so, instead of "no memory with that id".
    const show = await cli('show', id, '--user', '小明');
    expect(show.code).toBe(1);
    expect(show.stderr).toContain(`no memory with id ${id} in the scope user "小明"; the store has a file with memories of user "小明" it cannot read, which may hold it`);
    expect(show.stderr).toContain(shown);

    // Another scope reads as before; so does every scope, once the file is saved as UTF-8 again.
    const bob = await cli('list', '--user', 'bob');
    expect(bob).toMatchObject({ code: 0, stderr: '' });
    expect(bob.stdout).toContain('Bob sails on weekends.');
    const everyone = await cli('list');
    expect(everyone.code).toBe(1);
    expect(everyone.stderr).toContain('memloom: [markdown] the store has a file it cannot read');
    const file = join(dir, XIAOMING_FILE);
    writeFileSync(file, new TextDecoder('gbk').decode(readFileSync(file)));
    const fixed = await cli('list', '--user', '小明');
    expect(fixed).toMatchObject({ code: 0, stderr: '' });
    expect(fixed.stdout).toContain('我喜欢吃火锅。');
  });

  it('makes maintain say so (exit 1), refuses forget --scope and import before writing, and never writes the file', { timeout: 120_000 }, async () => {
    const added = await cli('add', '我喜欢吃火锅。', '--user', '小明', '--json');
    const id = JSON.parse(added.stdout).memory.id as string;
    const sessionAdded = await cli('add', 'Bob sails on weekends.', '--user', '小明', '--session', 's1', '--json');
    const sessionId = JSON.parse(sessionAdded.stdout).memory.id as string;
    expect((await cli('export', '-o', 'backup.jsonl')).code).toBe(0);
    const line = saveAsGbk();
    const file = join(dir, XIAOMING_FILE);
    const saved = readFileSync(file);
    const shown = `\n  ${XIAOMING_FILE}:${line}: is not valid UTF-8`;

    // Maintenance maintains what it read (the file is never written), then says what it left out.
    for (const dryRun of [['--dry-run'], []]) {
      const maintained = await cli('maintain', '--user', '小明', ...dryRun);
      expect(maintained.code, dryRun.join()).toBe(1);
      expect(maintained.stdout, dryRun.join()).toContain('1 memory scanned');
      expect(maintained.stderr, dryRun.join()).toContain('the store has a file with memories of user "小明" it cannot read: what was read leaves out the memories in it');
      expect(maintained.stderr, dryRun.join()).toContain(shown);
    }
    // Forgetting the scope would delete the file unread: refused before counting, with or without --yes.
    for (const yes of [[], ['--yes']]) {
      const forgot = await cli('forget', '--scope', '--user', '小明', ...yes);
      expect(forgot.code, yes.join()).toBe(1);
      expect(forgot.stdout, yes.join()).toBe('');
      expect(forgot.stderr, yes.join()).toContain('the store has a file with memories of user "小明" it cannot read: nothing was counted or forgotten');
      // Who wants the scope gone may not want to fix the file: deleting it (or moving it out) does too.
      expect(forgot.stderr, yes.join()).toContain('fix it as each problem says, or delete it or move it out of the store, and run the command again');
      expect(forgot.stderr, yes.join()).toContain(shown);
    }
    // An import would write the file's memories a second time elsewhere (or fail part-way on it): refused before writing.
    for (const merge of [[], ['--merge']]) {
      const imported = await cli('import', 'backup.jsonl', ...merge);
      expect(imported.code, merge.join()).toBe(1);
      expect(imported.stderr, merge.join()).toContain('the store has a file it cannot read: nothing was imported');
      expect(imported.stderr, merge.join()).toContain(shown);
    }
    // A memory not found may be in the file: restore and forget <id> say so, as show does.
    for (const command of [['restore', id, '1'], ['forget', id]]) {
      const result = await cli(...command, '--user', '小明');
      expect(result.code, command[0]).toBe(1);
      expect(result.stderr, command[0]).toContain(`no memory with id ${id} in the scope user "小明"; the store has a file with memories of user "小明" it cannot read, which may hold it`);
    }
    // A memory found has its versions beside the files (.history/), not in the file: a version it lacks is exit 3 as before.
    const version = await cli('restore', sessionId, '7', '--user', '小明');
    expect(version.code).toBe(3);
    expect(version.stderr).toContain(`memory ${sessionId} has no version 7 (it has 1)`);
    expect(version.stderr).not.toContain('may hold it');
    expect(readFileSync(file)).toEqual(saved);
    expect(existsSync(join(dir, 'backup.jsonl.import-checkpoint.json'))).toBe(false);
    // The session's memories were neither forgotten nor imported again; a scope without such a file is forgotten as before.
    const session = await cli('list', '--user', '小明', '--session', 's1', '--json');
    expect(session.code).toBe(0);
    expect(JSON.parse(session.stdout)).toHaveLength(1);
    expect((await cli('forget', '--scope', '--user', '小明', '--session', 's1', '--yes')).code).toBe(0);
    expect(readFileSync(file)).toEqual(saved);
  });

  it('gives a linked user folder (a hashed name too) to that user alone: other users read as before', { timeout: 60_000 }, async () => {
    expect((await cli('add', 'Alice keeps bees.', '--user', 'alice')).code).toBe(0);
    expect((await cli('add', 'Bob sails on weekends.', '--user', 'bob')).code).toBe(0);
    renameSync(join(dir, '记忆', 'users', 'alice'), join(dir, 'alice-vault'));
    symlinkSync(join(dir, 'alice-vault'), join(dir, '记忆', 'users', 'alice'));
    // A long user id's folder has a hashed name (`~…`), which names that user alone: linked, it is not bob's either.
    expect((await cli('add', 'The long-named user keeps bees.', '--user', `long-${'x'.repeat(120)}`)).code).toBe(0);
    const [hashed] = readdirSync(join(dir, '记忆', 'users')).filter((name) => name.startsWith('~'));
    renameSync(join(dir, '记忆', 'users', hashed!), join(dir, 'long-vault'));
    symlinkSync(join(dir, 'long-vault'), join(dir, '记忆', 'users', hashed!));

    const bob = await cli('list', '--user', 'bob');
    expect(bob).toMatchObject({ code: 0, stderr: '' });
    expect(bob.stdout).toContain('Bob sails on weekends.');
    const alice = await cli('list', '--user', 'alice');
    expect(alice.code).toBe(1);
    expect(alice.stderr).toContain('the store has a file with memories of user "alice" it cannot read');
    expect(alice.stderr).toContain(`\n  ${join('记忆', 'users', 'alice')}:1: is a symbolic link to a folder`);
    expect(alice.stderr).not.toContain(hashed);
    expect((await cli('list')).code).toBe(1);
  });

  it('makes import check the scope given by --user etc., not the configured default scope', { timeout: 120_000 }, async () => {
    expect((await cli('add', '我喜欢吃火锅。', '--user', '小明')).code).toBe(0);
    expect((await cli('add', 'Bob sails on weekends.', '--user', 'bob')).code).toBe(0);
    expect((await cli('export', '-o', 'backup.jsonl')).code).toBe(0);
    saveAsGbk();
    writeFileSync(join(dir, 'memloom.config.json'), JSON.stringify({ store: 'markdown:./记忆', scope: { userId: 'bob' } }));

    // The file hides 小明's memories, not bob's; but an import writes each memory in its own scope, 小明's too.
    const everyone = await runBin(dir, ['import', 'backup.jsonl'], env);
    expect(everyone.code).toBe(1);
    expect(everyone.stderr).toContain('the store has a file it cannot read: nothing was imported');
    // Given --user bob, it imports bob's memories alone, which the file cannot hold.
    const bob = await runBin(dir, ['import', 'backup.jsonl', '--user', 'bob'], env);
    expect(bob.code).toBe(0);
    expect(bob.stderr).not.toContain('cannot read');
    expect(bob.stdout).toContain('imported 1 memory');
  });

  it('leaves no store behind when an import fails before its first write (Markdown or SQLite)', { timeout: 120_000 }, async () => {
    expect((await cli('add', 'Bob sails on weekends.', '--user', 'bob')).code).toBe(0);
    expect((await cli('export', '-o', 'backup.jsonl')).code).toBe(0);
    const header = readFileSync(join(dir, 'backup.jsonl'), 'utf8').split('\n')[0];
    writeFileSync(join(dir, 'bad.jsonl'), 'not json\n');
    // A valid header, then a memory line that is not JSON: it fails before a batch is written.
    writeFileSync(join(dir, 'broken.jsonl'), `${header}\n{"memory":\n`);
    for (const store of ['markdown:./new', 'sqlite:./new.db']) {
      for (const [input, stdin] of [['bad.jsonl'], ['broken.jsonl'], ['-', '']] as const) {
        const result = await runBin(dir, ['import', input, '--no-config', '--store', store], env, stdin);
        expect(result.code, `${store} ${input}`).toBe(2);
      }
    }
    expect(existsSync(join(dir, 'new'))).toBe(false);
    expect(existsSync(join(dir, 'new.db'))).toBe(false);
  });

  it('stops maintain, naming the file, when a change lands in a file with a broken block (the file is not written)', { timeout: 120_000 }, async () => {
    expect((await cli('add', 'I like hotpot.', '--user', '小明')).code).toBe(0);
    expect((await cli('add', 'My cat is called Mimi.', '--user', '小明')).code).toBe(0);
    expect((await cli('add', 'Bob sails on weekends.', '--user', '小明', '--session', 's1')).code).toBe(0);
    const file = join(dir, XIAOMING_FILE);
    const broken = readFileSync(file, 'utf8').replace('"revision":1,', '"revision":"x",');
    writeFileSync(file, broken);
    const line = broken.split('\n').findIndex((text) => text.includes('"revision":"x"')) + 1;
    const shown = `users/%E5%B0%8F%E6%98%8E/memory/MEMORY.md:${line}`;

    // A dry run lists every change it would make (the intact block's too), then says what it left out.
    const dry = await cli('maintain', '--now', '2031-01-01', '--user', '小明', '--dry-run');
    expect(dry.code).toBe(1);
    expect(dry.stdout).toContain('2 memories scanned; 0 would be compressed, 0 decayed, 2 deleted');
    expect(dry.stderr).toContain('the store has a file with memories of user "小明" it cannot read');
    // The real pass: the deletion of the intact block would rewrite the file, which the store refuses; nothing of the batch is written.
    const maintained = await cli('maintain', '--now', '2031-01-01', '--user', '小明');
    expect(maintained.code).toBe(1);
    expect(maintained.stdout).toBe('');
    expect(maintained.stderr).toContain(`${shown}: memloom field revision`);
    expect(readFileSync(file, 'utf8')).toBe(broken);
    const session = await cli('list', '--user', '小明', '--session', 's1', '--json');
    expect(JSON.parse(session.stdout)).toHaveLength(1);
  });

  it('lists the first 10 broken comment lines, then how many more', { timeout: 60_000 }, async () => {
    expect((await cli('add', 'Bob sails on weekends.', '--user', 'bob')).code).toBe(0);
    const folder = join(dir, '记忆', 'users', 'carol', 'memory');
    mkdirSync(folder, { recursive: true });
    const blocks = Array.from({ length: 12 }, (_, index) => `## 2024-03-02\n<!-- memloom {"id":"m${index}",, -->\nCarol note ${index}.\n`);
    writeFileSync(join(folder, 'MEMORY.md'), `# Long-term memory\n\n${blocks.join('\n')}`);

    const result = await cli('list', '--user', 'carol');
    expect(result.code).toBe(1);
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe('memloom: [markdown] the store has a file with memories of user "carol" it cannot read: what was read leaves out the memories in it; fix it as each problem says, and run the command again');
    expect(lines.slice(1, 11).every((text) => /^ {2}记忆\/users\/carol\/memory\/MEMORY\.md:\d+: /u.test(text))).toBe(true);
    expect(lines[1]).toContain(`MEMORY.md:4: `);
    expect(lines.slice(11)).toEqual(['  … and 2 more']);
  });
});
