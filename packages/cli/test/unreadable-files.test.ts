import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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
