import { existsSync, readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { COMMANDS, EXIT_CODES } from '../src/index.js';
import { json, run, storedIn, syntheticExport, tempFolder } from './helpers.js';

let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempFolder());
  // Every test here works on one SQLite file in its own folder, with the lexical embedder (helpers).
  writeFileSync(join(dir, 'memloom.config.json'), JSON.stringify({ store: 'sqlite:./memory.db' }));
});
afterEach(() => cleanup());

const cli = (...args: string[]) => run(dir, args);

describe('help and usage', () => {
  it.each(COMMANDS.map((command) => command.name))('memloom %s --help shows usage, options and examples', async (name) => {
    const result = await cli(name, '--help');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^Usage: memloom ${name}`));
    expect(result.stdout).toContain('Examples:\n  memloom ');
    expect(result.stdout).toContain('--user <id>');
  });

  it('lists every command and the exit codes; no command is a usage error', async () => {
    const help = await cli('--help');
    expect(help.code).toBe(0);
    for (const command of COMMANDS) expect(help.stdout).toContain(`  ${command.name} `);
    expect(help.stdout).toMatch(/Exit codes:[\s\S]*3 +no memory with that id/);
    const bare = await cli();
    expect(bare.code).toBe(EXIT_CODES.USAGE);
    expect(bare.stderr).toContain('Usage: memloom <command>');
  });

  it('answers unknown commands, unknown options, missing and bad arguments with exit 2 and what to do', async () => {
    const unknown = await cli('remember', 'x');
    expect(unknown).toMatchObject({ code: 2, stderr: expect.stringContaining('unknown command "remember"') });
    const option = await cli('list', '--colour');
    expect(option.code).toBe(2);
    expect(option.stderr).toContain("Unknown option '--colour'");
    expect(option.stderr).toContain('Run "memloom list --help" for usage.');
    expect((await cli('show')).stderr).toContain('missing <id>');
    expect((await cli('search', 'x', '--limit', 'ten')).stderr).toContain('--limit must be an integer >= 1, got "ten"');
    // A negative number is checked as any other wrong number, in one line, however the option is written.
    for (const args of [['list', '--limit', '-1'], ['list', '-n', '-1'], ['list', '--limit=-1']]) {
      expect(await cli(...args), args.join(' ')).toMatchObject({ code: 2, stderr: 'memloom list: --limit must be an integer >= 1, got "-1"\nRun "memloom list --help" for usage.\n' });
    }
    expect((await cli('add', 'x', '--importance', '-0.5')).stderr).toContain('--importance must be a number >= 0, got "-0.5"');
    // After "--", a dash starts content, not an option.
    expect(json(await cli('add', '--json', '--', '-5', 'degrees', 'outside')).memory.content).toBe('-5 degrees outside');
    expect((await cli('maintain', '--now', 'yesterday-ish')).code).toBe(2);
    // A Date reads 2024-02-30 as March 1: refused, and nothing stored.
    const shifted = await cli('add', 'I moved to Lyon', '--user', 'alice', '--at', '2024-02-30');
    expect(shifted.code).toBe(2);
    expect(shifted.stderr).toContain('--at must be a date such as 2024-05-01');
    expect((await cli('maintain', '--now', '2023-02-29')).code).toBe(2);
    expect((await cli('list', '--category', 'gossip')).stderr).toContain('--category must be one of system, core, fact, episode');
    expect((await cli('add', '   ')).code).toBe(2); // EMPTY_CONTENT from core
  });

  it('refuses an argument after add -, and an option that takes one value given twice, naming it (exit 2); nothing is stored', async () => {
    const extra = await run(dir, ['add', '-', 'extra'], { stdin: 'Ana adopted a puppy' });
    expect(extra).toMatchObject({ code: 2, stderr: expect.stringContaining('memloom add: unexpected argument "extra": - reads the content from stdin, and comes alone\n') });
    expect(await cli('help', 'add', 'extra')).toMatchObject({ code: 2, stderr: expect.stringContaining('unexpected argument "extra"') });
    const twice = await cli('add', 'Ana keeps bees', '--category', 'fact', '--category', 'core');
    expect(twice).toMatchObject({ code: 2, stderr: expect.stringContaining('memloom add: --category was given twice ("fact", then "core"): it takes one value\n') });
    // However it is written (short, long, with =), and for the options every command takes.
    expect((await cli('list', '-n', '1', '--limit=2')).stderr).toContain('--limit was given twice ("1", then "2")');
    expect((await cli('add', 'Ana keeps bees', '--user', 'ana', '--user', 'bob')).stderr).toContain('--user was given twice ("ana", then "bob")');
    expect(await storedIn(dir, 'memory.db')).toEqual([]);
    // Repeatable options (--tag, a filter's --category) and switches are not concerned.
    expect((await cli('add', 'Ana keeps bees', '--tag', 'garden', '--tag', 'bees', '--json', '--json')).code).toBe(0);
    expect(json(await cli('list', '--category', 'fact', '--category', 'core', '--json'))).toHaveLength(1);
  });

  it('refuses an option given an empty value, which would fall back to the configured one (exit 2); nothing is stored or written', async () => {
    await cli('add', 'Ana keeps bees');
    // --store "" would read the configured store, --config "" the nearest file, -o "" write to stdout, --category "" filter nothing.
    const cases: [string, string[]][] = [
      ['--store', ['list', '--store', '']],
      ['--config', ['list', '--config=']],
      ['--embedder', ['list', '--embedder', '']],
      ['--output', ['export', '-o', '']],
      ['--category', ['list', '--category', 'fact', '--category', '']],
      ['--context', ['add', 'Bob keeps bees', '--context', '']],
    ];
    for (const [option, args] of cases) {
      const usage = `memloom ${args[0]}: ${option} was given an empty value: give it one, or leave the option out\nRun "memloom ${args[0]} --help" for usage.\n`;
      expect(await cli(...args), args.join(' ')).toEqual({ code: EXIT_CODES.USAGE, stdout: '', stderr: usage });
    }
    expect((await storedIn(dir, 'memory.db')).map((memory) => memory.content)).toEqual(['Ana keeps bees']);
  });

  it('takes a version or a whole-number option written in digits only: not 1.0, 1e0 or 0x1, which Number() reads as 1', async () => {
    const added = json(await cli('add', 'I live in Lisbon', '--json'));
    for (const version of ['1.0', '1e0', '0x1', ' 1']) {
      expect(await cli('restore', added.memory.id, version), version).toMatchObject({ code: 2, stderr: expect.stringContaining(`<version> must be an integer >= 1, got "${version}"`) });
    }
    expect(json(await cli('show', added.memory.id, '--json')).revision).toBe(1);
    expect((await cli('list', '--limit', '0x10')).stderr).toContain('--limit must be an integer >= 1, got "0x10"');
    expect((await cli('add', 'x', '--importance', '0x1')).stderr).toContain('--importance must be a number >= 0, got "0x1"');
    expect(json(await cli('restore', added.memory.id, '1', '--json')).revision).toBe(2);
  });

  it('prints the version', async () => {
    const result = await cli('--version');
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(result.stdout.trim()).toBe(pkg.version);
  });
});

describe('remembering and reading back', () => {
  it('add decides merge / new, search finds, list, show and history read it, restore brings a version back', async () => {
    const first = json(await run(dir, ['add', 'I live in Lisbon and work as a nurse', '--user', 'alice', '--at', '2025-01-01', '--json']));
    expect(first.decision.strategy).toBe('create_new');
    const again = json(await run(dir, ['add', 'I live in Lisbon and work as a nurse', '--user', 'alice', '--at', '2025-06-01', '--json']));
    expect(again.decision.strategy).toBe('merge_update');
    expect(again.memory.id).toBe(first.memory.id);
    const other = await run(dir, ['add', 'My sister Emma lives in Porto', '--user', 'alice', '--tag', 'family', '--category', 'core']);
    expect(other.code).toBe(0);
    expect(other.stdout).toMatch(/^create_new \(similarity [0-9.]+\): created /);
    await run(dir, ['add', 'Bob keeps bees', '--user', 'bob']);

    const found = json(await cli('search', 'where does my sister live', '--user', 'alice', '--limit', '1', '--json'));
    expect(found).toHaveLength(1);
    expect(found[0].memory.content).toBe('My sister Emma lives in Porto');
    expect(found[0].parts).toHaveProperty('semantic');

    const alice = json(await cli('list', '--user', 'alice', '--json'));
    expect(alice.map((memory: { content: string }) => memory.content).sort()).toEqual(['I live in Lisbon and work as a nurse', 'My sister Emma lives in Porto']);
    expect(json(await cli('list', '--json'))).toHaveLength(3); // no scope: everyone's
    expect(json(await cli('list', '--category', 'core', '--json'))).toHaveLength(1);
    const listed = await cli('list', '--user', 'alice');
    expect(listed.stdout).toContain(`${first.memory.id}  full    fact `);

    const shown = await cli('show', first.memory.id);
    expect(shown.stdout).toMatch(/content +I live in Lisbon and work as a nurse\n/);
    expect(shown.stdout).toMatch(/updated +2025-06-01T00:00:00\.000Z/);
    // Merged five months on, the memory's weight had decayed: the merge lifts it 60% of the way to 1, and the
    // sister's new memory (added now, later still) then adds seed 004's +0.1 to it (its nearest).
    expect(shown.stdout).toMatch(/revision +3/);

    const history = json(await cli('history', first.memory.id, '--json'));
    expect(history.map((version: { action: string }) => version.action)).toEqual(['create', 'merge', 'boost']);
    expect((await cli('history', first.memory.id)).stdout).toMatch(/v2 .* user_mention\/merge: similarity/);

    const restored = json(await cli('restore', first.memory.id, '1', '--reason', 'shorter is better', '--json'));
    expect(restored).toMatchObject({ content: 'I live in Lisbon and work as a nurse', updatedAt: first.memory.updatedAt, revision: 4 });
    const afterRestore = json(await cli('history', first.memory.id, '--json'));
    expect(afterRestore.at(-1)).toMatchObject({ trigger: 'restore', reason: 'shorter is better' });
  });

  it('keeps --context with the memory, shows it, and finds the memory by its words', async () => {
    const added = json(await run(dir, ['add', 'Yes, since last spring', '--context', 'Do you still live in Lisbon?', '--user', 'alice', '--json']));
    expect(added.memory).toMatchObject({ content: 'Yes, since last spring', context: 'Do you still live in Lisbon?' });
    const found = json(await cli('search', 'Lisbon', '--user', 'alice', '--json'));
    expect(found[0].memory.id).toBe(added.memory.id);
    expect((await cli('show', added.memory.id)).stdout).toMatch(/context +Do you still live in Lisbon\?/);
    // The history says when the context came and went (a compression drops it; the version before keeps it).
    const tenDaysOn = new Date(Date.parse(added.memory.createdAt) + 10 * 86_400_000).toISOString();
    await cli('maintain', '--now', tenDaysOn);
    const history = (await cli('history', added.memory.id)).stdout;
    expect(history).toMatch(/v1 .*\n {4}Yes, since last spring\n {4}context: Do you still live in Lisbon\?\n/);
    expect(history).toMatch(/v2 .*passive_decay\/compress.*\n {4}level full -> \w+; .*context dropped/);
    expect(history.match(/context: /g)).toHaveLength(1);
  });

  it('reads content from stdin with "-"', async () => {
    const result = await run(dir, ['add', '-', '--user', 'alice', '--json'], { stdin: 'Prefers short answers\n' });
    expect(json(result).memory.content).toBe('Prefers short answers');
  });

  it('not found is exit 3, in the human and the JSON form', async () => {
    const { memory } = json(await cli('add', 'A note', '--user', 'alice', '--json'));
    const missing = await cli('show', 'no-such-id');
    expect(missing.code).toBe(EXIT_CODES.NOT_FOUND);
    expect(missing.stderr).toMatch(/^memloom: \[sqlite\] no memory with id no-such-id\n/);
    expect(missing.stderr).not.toContain('    at ');
    // One wording and one JSON shape for an id not found, whichever command looked for it.
    for (const command of ['show', 'history', 'forget']) {
      const error = JSON.parse((await cli(command, 'no-such-id', '--json')).stderr).error;
      expect(error, command).toMatchObject({ code: 'NOT_FOUND', exitCode: 3, message: expect.stringMatching(/\] no memory with id no-such-id$/), details: { id: 'no-such-id' } });
    }
    const outside = await cli('show', memory.id, '--user', 'bob');
    expect(outside.code).toBe(3);
    expect(outside.stderr).toMatch(/^memloom: \[sqlite\] no memory with id \S+ in the scope user "bob"\n/);
    // history, restore and forget (core's message) name it the same way, in the message and in details.
    for (const args of [['history', memory.id], ['restore', memory.id, '1'], ['forget', memory.id]]) {
      const result = await cli(...args, '--user', 'bob', '--json');
      expect(result.code, args[0]).toBe(3);
      expect(JSON.parse(result.stderr).error, args[0]).toMatchObject({
        code: 'NOT_FOUND',
        message: expect.stringMatching(new RegExp(`\\] no memory with id ${memory.id} in the scope user "bob"$`)),
        details: { id: memory.id, scope: { userId: 'bob' } },
      });
    }
    expect(JSON.parse((await cli('show', memory.id, '--user', 'bob', '--json')).stderr).error.details).toEqual({ id: memory.id, scope: { userId: 'bob' } });
    // The scope looked in is the configured default scope too, when no flag gives one.
    writeFileSync(join(dir, 'memloom.config.json'), JSON.stringify({ store: 'sqlite:./memory.db', scope: { userId: 'carol', agentId: 'helper' } }));
    const configured = await cli('show', memory.id);
    expect(configured.code).toBe(3);
    expect(configured.stderr).toMatch(/^memloom: \[sqlite\] no memory with id \S+ in the scope user "carol", agent "helper"\n/);
    expect((await cli('show', memory.id, '--user', 'alice', '--agent', 'x')).stderr).toContain('in the scope user "alice", agent "x"\n');
    writeFileSync(join(dir, 'memloom.config.json'), JSON.stringify({ store: 'sqlite:./memory.db' }));
    const version = await cli('restore', memory.id, '7', '--json');
    expect(version.code).toBe(3);
    expect(JSON.parse(version.stderr)).toMatchObject({ error: { code: 'VERSION_NOT_FOUND', exitCode: 3 } });
    expect((await cli('restore', memory.id, 'two')).code).toBe(2);
  });

  it('refuses to import a memory whose id holds an escape sequence or a bidi control, naming the line and the code point; an id looked up is shown as text', async () => {
    // An id holding an OSC title, a screen clear and a right-to-left override; the export's embedder id too.
    const id = '00000000-0000-7000-8000-\u001b]0;PWNED\u0007\u001b[2J\u202eX';
    const shown = '00000000-0000-7000-8000-X';
    const { header, lines } = syntheticExport(2);
    const line = JSON.parse(lines[1]!);
    line.memory.id = line.versions[0].memoryId = line.versions[0].after.id = id;
    const evilHeader = JSON.stringify({ ...JSON.parse(header), embedder: { id: 'test/\u001b[31mred', dimension: 8 } });
    writeFileSync(join(dir, 'evil.jsonl'), `${evilHeader}\n${lines[0]}\n${JSON.stringify(line)}\n`);
    const controls = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u;
    expect((await cli('add', 'Alice likes green tea', '--user', 'alice')).code).toBe(0);
    // No store creates such a memory (core's newIdProblem): the line is refused as it is read, and its batch is not written.
    const imported = await cli('import', 'evil.jsonl');
    expect(imported.code, imported.stderr).toBe(EXIT_CODES.USAGE);
    expect(imported.stderr).toContain('evil.jsonl, line 3: memory.id: a memory id must not hold a control character or a bidi control');
    expect(imported.stderr).toContain('U+001B at index 24');
    expect(`${imported.stdout}${imported.stderr}`).not.toMatch(controls);
    expect((await storedIn(dir, 'memory.db')).map((stored) => stored.content)).toEqual(['Alice likes green tea']);
    // A lookup takes it (a store written by 0.1.0 may hold one): here it is not found, and the message shows it as text.
    const restored = await cli('restore', id, '1');
    expect(restored.code, restored.stderr).toBe(EXIT_CODES.NOT_FOUND);
    expect(restored.stderr).toContain(`no memory with id ${shown}`);
    expect(`${restored.stdout}${restored.stderr}`).not.toMatch(controls);
  });

  it('refuses to import a memory whose id is blank or longer than 256 characters, naming the line; nothing is written', async () => {
    const { header, lines } = syntheticExport(2);
    for (const [name, id, message] of [
      ['blank', '   ', 'line 3: memory.id: a memory id must not be blank'],
      ['long', 'x'.repeat(300), 'line 3: memory.id: a memory id must be at most 256 characters long; this one is 300'],
    ] as const) {
      const line = JSON.parse(lines[1]!);
      line.memory.id = line.versions[0].memoryId = line.versions[0].after.id = id;
      writeFileSync(join(dir, `${name}.jsonl`), `${header}\n${lines[0]}\n${JSON.stringify(line)}\n`);
      const result = await cli('import', `${name}.jsonl`, '--store', `sqlite:./${name}.db`);
      expect(result.code, name).toBe(EXIT_CODES.USAGE);
      expect(result.stderr, name).toContain(`${name}.jsonl, ${message}`);
      expect(await storedIn(dir, `${name}.db`), name).toEqual([]);
    }
  });
});

describe('values from flags and the configuration, printed', () => {
  // C1 controls (U+009B is a CSI: U+009B 2J clears the screen) and bidi marks: JSON leaves them as they are.
  const controls = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

  it('refuses scope ids holding a C1 control or a bidi mark, from a flag or the configuration, naming it by code point and printing it nowhere', async () => {
    const added = await cli('add', 'Alice keeps bees', '--user', 'al\u009b2Jice');
    expect(added.code).not.toBe(0);
    expect(added.stderr).toContain('scope.userId holds a control character or a bidi control (U+009B at index 2)');
    expect(added.stderr).not.toMatch(controls);
    expect(JSON.parse((await cli('list', '--user', 'alice\u202e', '--json')).stderr)).toMatchObject({ error: { code: 'INVALID_SCOPE' } });
    // From the configuration file: refused as the file's error.
    writeFileSync(join(dir, 'memloom.config.json'), JSON.stringify({ store: 'sqlite:./memory.db', scope: { agentId: 'bo\u2066t' } }));
    const stats = await cli('stats', '--user', 'alice');
    expect(stats.code).not.toBe(0);
    expect(stats.stderr).toContain('scope.agentId holds a control character or a bidi control (U+2066 at index 2)');
    expect(stats.stderr).not.toMatch(controls);
  });

  it('shows scope ids and store paths from flags or a configuration file as text for a person; --json keeps them as given', async () => {
    writeFileSync(join(dir, 'memloom.config.json'), JSON.stringify({ store: 'sqlite:./memory.db', scope: { agentId: 'bot' } }));
    const store = ['--store', 'sqlite:./mem\u009b2Jory.db'];
    expect((await cli('add', 'Alice keeps bees', '--user', 'alice', ...store)).code).toBe(0);
    const preview = await cli('forget', '--scope', '--user', 'alice', ...store);
    expect(preview.stdout).toBe('1 memory in scope user alice, agent bot would be forgotten: run again with --yes to delete them.\n');
    const stats = await cli('stats', '--user', 'alice', ...store);
    expect(stats.stdout).toContain('in scope user alice, agent bot\n');
    expect(stats.stdout).toContain(`at ${join(dir, 'memory.db')}`);
    expect(stats.stdout).toContain('from --store\n');
    expect(stats.stdout).not.toMatch(controls);
    expect((await cli('forget', 'no-such\u009b2J-id')).stderr).not.toMatch(controls);
    // A script gets the values as they are, in JSON it can parse.
    expect(json(await cli('stats', '--user', 'alice', ...store, '--json'))).toMatchObject({ scope: { userId: 'alice', agentId: 'bot' }, store: { location: join(dir, 'mem\u009b2Jory.db') } });
    expect(json(await cli('forget', '--scope', '--user', 'alice', ...store, '--yes', '--json'))).toEqual({ deleted: 1, scope: { userId: 'alice', agentId: 'bot' } });
  });

  it('shows paths from flags and the folder it runs in as text: export --output, import, init, reindex', async () => {
    const name = 'ex\u009b2J\u202e.jsonl';
    expect((await cli('add', 'Alice keeps bees', '--user', 'alice')).code).toBe(0);
    const exported = await cli('export', '--output', name);
    // The CSI (U+009B 2J, which clears the screen) and the bidi override are left out.
    expect(exported.stdout).toBe(`exported 1 memory to ${join(dir, 'ex.jsonl')}\n`);
    const imported = await cli('import', name, '--merge');
    expect(imported.code).toBe(0);
    expect(imported.stdout).toContain(`imported 1 memory from ${join(dir, 'ex.jsonl')}: `);
    // A folder whose name holds controls: init's file and the default store reindex finds missing there.
    const folder = join(dir, 'sub\u009b2J\u202e');
    mkdirSync(folder);
    const init = await run(folder, ['init', '--store', 'memory:']);
    expect(init.code).toBe(0);
    expect(init.stdout).toContain(`Wrote ${join(dir, 'sub', 'memloom.config.json')}\n`);
    expect(`${init.stdout}${init.stderr}`).not.toMatch(controls);
    const other = join(dir, 'other\u009b2J');
    mkdirSync(other);
    const reindexed = await run(other, ['reindex', 'lexical', '--no-config']);
    expect(reindexed.code).toBe(0);
    expect(reindexed.stdout).toContain(`No store at ${join(dir, 'other', '.memloom', 'memory.db')} yet`);
    expect(json(await cli('export', '--output', name, '--json'))).toMatchObject({ file: join(dir, name) });
  });

  it('shows an argument quoted in a usage error as text; with --json, as given, in valid JSON', async () => {
    const bad = 'x\u009b2J\u202e\u001b]0;PWNED\u0007\ny';
    for (const args of [[bad], ['list', '--limit', bad], ['show', 'id', bad], ['list', `--${bad}`]]) {
      const human = await cli(...args);
      expect(human.code, args.join(' ')).toBe(EXIT_CODES.USAGE);
      // One line of message, and the line saying where the usage is.
      expect(human.stderr.split('\n'), args.join(' ')).toHaveLength(3);
      expect(human.stderr, args.join(' ')).not.toMatch(controls);
      const machine = await cli(...args, '--json');
      expect(machine.code).toBe(EXIT_CODES.USAGE);
      const { error } = JSON.parse(machine.stderr) as { error: { code: string; message: string } };
      expect(error.code).toBe('USAGE');
      expect(error.message, args.join(' ')).toContain(bad.slice(0, 4));
    }
  });
});

describe('add-turns', () => {
  const transcript = [
    'Ana: Where did you run your first marathon?',
    '{"content": "Ben: In Lisbon, last spring.", "at": "2023-03-03T10:01:00Z", "sources": ["D1:2"]}',
    '',
    '"Ana: Biscuit learned to sit."',
    'Ben: Good dog!',
  ].join('\n');

  it('stores each turn as a memory with the turns before it in its session as context, a blank line between sessions', async () => {
    writeFileSync(join(dir, 'chat.txt'), `${transcript}\n`);
    const result = await cli('add-turns', 'chat.txt', '--user', 'ana', '--json');
    expect(result.code).toBe(0);
    const report = json(result);
    expect(report).toMatchObject({ turns: 4, sessions: 2 });
    expect(Object.values(report.decisions as Record<string, number>).reduce((sum, count) => sum + count, 0)).toBe(4);
    const shown = await Promise.all((report.memories as string[]).map(async (id) => json(await cli('show', id, '--json'))));
    expect(shown.map((memory) => [memory.content, memory.context])).toEqual([
      ['Ana: Where did you run your first marathon?', undefined],
      ['Ben: In Lisbon, last spring.', 'Ana: Where did you run your first marathon?'],
      ['Ana: Biscuit learned to sit.', undefined],
      ['Ben: Good dog!', 'Ana: Biscuit learned to sit.'],
    ]);
    expect(shown[1]).toMatchObject({ createdAt: '2023-03-03T10:01:00.000Z', sources: ['D1:2'] });
    const found = json(await cli('search', 'first marathon', '--user', 'ana', '--json'));
    expect(found.map((hit: { memory: { content: string } }) => hit.memory.content)).toContain('Ben: In Lisbon, last spring.');
    const human = await run(dir, ['add-turns', '-', '--user', 'bob', '--context-turns', '0'], { stdin: 'one\ntwo\n' });
    expect(human.stdout).toMatch(/^stored 2 turns in 1 session: /);
    const one = await run(dir, ['add-turns', '-', '--user', 'cai'], { stdin: 'just one\n' });
    expect(one.stdout).toMatch(/^stored 1 turn in 1 session: /);
  });

  it('refuses a transcript with a bad line before storing anything, naming the line', async () => {
    for (const [text, message] of [
      [`${transcript}\n{"content": oops}`, /line 6: not valid JSON/],
      [`${transcript}\n{"content": "x", "speaker": "Ana"}`, /line 6: unknown field "speaker"/],
      [`${transcript}\n{"content": "   "}`, /line 6: the turn is empty/],
      [`${transcript}\n{"content": "x", "at": "someday"}`, /line 6: "at" must be a date/],
      ['\n\n', /holds no turns/],
    ] as const) {
      const result = await run(dir, ['add-turns', '-', '--user', 'ana'], { stdin: text });
      expect(result.code).toBe(EXIT_CODES.USAGE);
      expect(result.stderr).toMatch(message);
    }
    const missing = await cli('add-turns', 'missing.txt', '--user', 'ana');
    expect(missing.code).toBe(EXIT_CODES.USAGE);
    expect(missing.stderr).toContain('missing.txt does not exist');
    expect((await run(dir, ['add-turns', '-', '--context-turns', '-1'], { stdin: 'x' })).code).toBe(EXIT_CODES.USAGE);
    expect(await storedIn(dir, 'memory.db', ['--user', 'ana'])).toEqual([]);
  });

  it('checks the type of every field of a JSON turn while reading, naming the line, before any session is stored', async () => {
    const first = 'Ana: I adopted a puppy\nBen: What breed?\n\n';
    for (const [turn, message] of [
      ['{"content":"Ana: a beagle","tags":"pets"}', 'line 4: "tags" must be a list of strings such as ["pets"], got "pets"'],
      ['{"content":"Ana: a beagle","tags":["pets",""]}', 'line 4: "tags" must be a list of non-empty strings'],
      ['{"content":"Ana: a beagle","sources":[1]}', 'line 4: "sources" must be a list of non-empty strings'],
      ['{"content":"Ana: a beagle","metadata":[1,2]}', 'line 4: "metadata" must be an object'],
      ['{"content":"Ana: a beagle","metadata":"dog"}', 'line 4: "metadata" must be an object'],
      ['{"content":"Ana: a beagle","at":true}', 'line 4: "at" must be a date'],
      ['{"content":"Ana: a beagle","at":""}', 'line 4: "at" must be a date'],
      // A Date would read it as March 1; core refuses it, so it must be found before the first session is stored.
      ['{"content":"Ana: a beagle","at":"2024-02-30T09:00:00Z"}', 'line 4: "at" must be a date on the calendar'],
      // Seconds since 1970 (2024-05-01), which read as milliseconds would be 1970-01-20.
      ['{"content":"Ana: a beagle","at":1714550400}', 'line 4: "at" must be milliseconds since 1970 (this looks like seconds: 2024-05-01T08:00:00.000Z'],
      // More than a day ahead: core refuses it (it would never decay until then), and only when its session is stored.
      ['{"content":"Ana: a beagle","at":"2099-01-01T00:00:00Z"}', 'line 4: "at" 2099-01-01T00:00:00.000Z is in the future: at most '],
    ] as const) {
      const result = await run(dir, ['add-turns', '-', '--user', 'ana'], { stdin: `${first}${turn}\n` });
      expect(result.code).toBe(EXIT_CODES.USAGE);
      expect(result.stderr).toContain(message);
      expect(await storedIn(dir, 'memory.db', ['--user', 'ana'])).toEqual([]);
    }
    // Every field of the right type is taken as it is.
    const good = '{"content":"Ana: a beagle","at":"2024-05-01T09:00:00Z","tags":["pets"],"sources":["D1:3"],"metadata":{"speaker":"Ana"}}';
    const stored = json(await run(dir, ['add-turns', '-', '--user', 'ana', '--json'], { stdin: `${first}${good}\n` }));
    const beagle = json(await cli('show', stored.memories[2], '--json'));
    expect(beagle).toMatchObject({ tags: ['pets'], sources: ['D1:3'], metadata: { speaker: 'Ana' }, createdAt: '2024-05-01T09:00:00.000Z' });
  });

  it('says which session failed when storing fails part-way, and keeps the sessions before it', async () => {
    const tooManyTags = JSON.stringify({ content: 'Ana: tagged to death', tags: Array.from({ length: 65 }, (_, index) => `t${index}`) });
    const result = await run(dir, ['add-turns', '-', '--user', 'ana'], { stdin: `first\nsecond\n\n${tooManyTags}\n` });
    expect(result.code).toBe(EXIT_CODES.USAGE);
    expect(result.stderr).toContain('session 2 (line 4) was not stored; the 2 turns before it were');
    expect(json(await cli('list', '--user', 'ana', '--json')).map((memory: { content: string }) => memory.content).sort()).toEqual(['first', 'second']);
  });
});

describe('a time in the future', () => {
  it('add --at more than a day ahead is exit 2 naming the time and the limit; nothing is stored', async () => {
    const far = await cli('add', 'I will live on Mars', '--user', 'alice', '--at', '2099-01-01T00:00:00Z');
    expect(far.code).toBe(EXIT_CODES.USAGE);
    expect(far.stderr).toMatch(/^memloom: \[core\] at 2099-01-01T00:00:00\.000Z is in the future: at most \d{4}-\S+ is accepted \(now, /);
    const turns = await run(dir, ['add-turns', '-', '--user', 'alice', '--at', '2099-01-01'], { stdin: 'one\ntwo\n' });
    expect(turns.code).toBe(EXIT_CODES.USAGE);
    expect(turns.stderr).toContain('turn 0: at 2099-01-01T00:00:00.000Z is in the future');
    expect(await storedIn(dir, 'memory.db')).toEqual([]);
    // An hour ahead (a clock a little fast, a time zone written wrong) is taken.
    const soon = new Date(Date.now() + 3_600_000).toISOString();
    expect(json(await cli('add', 'I moved to Lyon', '--user', 'alice', '--at', soon, '--json')).memory.createdAt).toBe(soon);
  });
});

describe('commands that only read never create a store', () => {
  // reindex too: a store that does not exist has nothing to re-index.
  const READS = [['search', 'tea'], ['list'], ['show', 'some-id'], ['history', 'some-id'], ['index'], ['stats'], ['export'], ['forget', 'some-id'], ['restore', 'some-id', '1'], ['maintain', '--dry-run'], ['reindex', 'lexical']];

  it('a configured store that does not exist is exit 4 naming the path and what creates it, from every source; nothing is made', async () => {
    // The configuration file of these tests names sqlite:./memory.db, which no command has made yet.
    for (const args of READS) {
      const result = await cli(...args);
      expect(result.code, args[0]).toBe(EXIT_CODES.CONFIG);
      expect(result.stderr, args[0]).toContain(`memloom: [sqlite] no store at ${join(dir, 'memory.db')}: the file does not exist, and nothing was created`);
      expect(result.stderr, args[0]).toContain('If the path is right, "memloom add", "memloom import" or "memloom init" creates it');
    }
    const flag = await cli('list', '--store', 'sqlite:./typo/memory.db', '--json');
    expect(flag.code).toBe(EXIT_CODES.CONFIG);
    expect(JSON.parse(flag.stderr).error).toMatchObject({ code: 'MISSING_RESOURCE', details: { path: join(dir, 'typo', 'memory.db') } });
    const markdown = await cli('export', '--store', 'markdown:./notes');
    expect(markdown.code).toBe(EXIT_CODES.CONFIG);
    expect(markdown.stderr).toContain(`memloom: [markdown] no store at ${join(dir, 'notes')}: the folder does not exist`);
    const variable = await run(dir, ['stats', '--no-config'], { env: { MEMLOOM_STORE: 'sqlite:./from-env.db' } });
    expect(variable.stderr).toContain(`no store at ${join(dir, 'from-env.db')}`);
    const sqlitePath = await run(dir, ['search', 'tea', '--no-config'], { env: { MEMLOOM_SQLITE_PATH: 'data/typo.db' } });
    expect(sqlitePath.code).toBe(EXIT_CODES.CONFIG);
    expect(sqlitePath.stderr).toContain(`no store at ${join(dir, 'data', 'typo.db')}`);
    expect(readdirSync(dir)).toEqual(['memloom.config.json']);
    // A folder that exists but holds no store (a plain notes folder, a mistyped markdown:.) is not made one either.
    mkdirSync(join(dir, 'plain'));
    writeFileSync(join(dir, 'plain', 'todo.txt'), 'my notes');
    const plain = await cli('list', '--store', 'markdown:./plain');
    expect(plain.code).toBe(EXIT_CODES.CONFIG);
    expect(plain.stderr).toContain(`memloom: [markdown] no store at ${join(dir, 'plain')}: the folder holds no memloom store`);
    expect(readdirSync(join(dir, 'plain'))).toEqual(['todo.txt']);
    // A command that writes makes the store as before; then the reads read it.
    expect((await cli('add', 'I drink tea', '--user', 'alice')).code).toBe(0);
    expect(json(await cli('search', 'tea', '--json'))[0].memory.content).toBe('I drink tea');
    expect((await cli('maintain', '--store', 'sqlite:./maintained.db')).code).toBe(0);
    expect(existsSync(join(dir, 'maintained.db'))).toBe(true);
  });

  it('a Qdrant collection that does not exist is exit 4 naming it and the URL; the server is asked to create nothing', async () => {
    // A stand-in server (not a Qdrant): the client's version check is answered, no collection exists, the rest is refused.
    const requests: string[] = [];
    const server = createHttpServer((request, response) => {
      request.resume();
      request.on('end', () => {
        if (request.url !== '/') requests.push(`${request.method} ${request.url}`);
        const answer = request.url === '/' ? { title: 'qdrant', version: '1.18.0' } : request.url?.endsWith('/exists') ? { result: { exists: false }, status: 'ok', time: 0 } : undefined;
        response.writeHead(answer ? 200 : 400, { 'content-type': 'application/json' });
        response.end(JSON.stringify(answer ?? { status: { error: 'refused by the test' } }));
      });
    });
    await new Promise<void>((resolvePromise) => server.listen(0, '127.0.0.1', resolvePromise));
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      const env = { env: { MEMLOOM_QDRANT_COLLECTION: 'teem' } };
      for (const args of READS.filter(([command]) => command !== 'reindex')) {
        const result = await run(dir, [...args, '--store', `qdrant:${url}`], env);
        expect(result.code, args[0]).toBe(EXIT_CODES.CONFIG);
        expect(result.stderr, args[0]).toContain(`memloom: [qdrant] no store at ${url}: the collection "teem" does not exist, and nothing was created`);
        expect(result.stderr, args[0]).toContain('If the collection and the URL are right, "memloom add", "memloom import" or "memloom init" creates the collection');
        expect(result.stderr, args[0]).toContain('MEMLOOM_QDRANT_COLLECTION');
      }
      const flagged = await run(dir, ['list', '--store', `qdrant:${url}`, '--json'], env);
      expect(JSON.parse(flagged.stderr).error).toMatchObject({ code: 'MISSING_RESOURCE', details: { collection: 'teem', url, mustExist: true } });
      expect(requests).toContain('GET /collections/teem/exists');
      expect(requests.filter((request) => !request.startsWith('GET '))).toEqual([]);
      // A command that writes asks for the collection as before (the stand-in refuses it).
      await run(dir, ['add', 'I drink tea', '--store', `qdrant:${url}`], env);
      expect(requests).toContain('PUT /collections/teem');
    } finally {
      server.close();
    }
  });

  it('with nothing configured, the default store not made yet reads as an empty store, and is not made', async () => {
    const env = { env: { MEMLOOM_STORE: undefined } };
    const bare = (...args: string[]) => run(dir, [...args, '--no-config'], env);
    const defaultPath = join(dir, '.memloom', 'memory.db');
    const stats = await bare('stats');
    expect(stats.code).toBe(0);
    expect(stats.stdout).toContain(`sqlite at ${defaultPath}\n`);
    expect(stats.stdout).toContain('not made yet: nothing is stored');
    expect(stats.stdout).toMatch(/memories {3}0\n/);
    expect(json(await bare('stats', '--json'))).toMatchObject({ store: { name: 'sqlite', location: defaultPath, exists: false, source: 'default', capabilities: {} }, total: 0 });
    expect(await bare('list')).toMatchObject({ code: 0, stdout: 'No memories.\n' });
    expect(await bare('search', 'tea')).toMatchObject({ code: 0, stdout: 'No memories match.\n' });
    expect(JSON.parse((await bare('export')).stdout.split('\n')[0]!)).toMatchObject({ memloom: 'export', count: 0 });
    expect((await bare('index')).code).toBe(0);
    expect((await bare('show', 'some-id')).code).toBe(EXIT_CODES.NOT_FOUND);
    expect((await bare('forget', 'some-id')).code).toBe(EXIT_CODES.NOT_FOUND);
    expect((await bare('maintain', '--dry-run')).stdout).toContain('0 memories scanned');
    expect(existsSync(join(dir, '.memloom'))).toBe(false);
    // The first write makes it where stats said it would be.
    expect((await bare('add', 'I drink tea')).code).toBe(0);
    expect(existsSync(defaultPath)).toBe(true);
    const made = json(await bare('stats', '--json'));
    expect(made.store).not.toHaveProperty('exists');
    expect(made.total).toBe(1);
  });
});

describe('forget', () => {
  it('deletes one memory, or a whole scope only with --yes', async () => {
    const { memory } = json(await cli('add', 'A passing thought', '--user', 'alice', '--json'));
    await cli('add', 'Alice likes jazz', '--user', 'alice');
    await cli('add', 'Bob likes folk', '--user', 'bob');
    expect(json(await cli('forget', memory.id, '--json'))).toEqual({ deleted: 1, id: memory.id });
    expect((await cli('show', memory.id)).code).toBe(3);

    const dry = await cli('forget', '--scope', '--user', 'alice');
    expect(dry.code).toBe(EXIT_CODES.USAGE);
    expect(dry.stdout).toContain('1 memory in scope user alice would be forgotten: run again with --yes');
    expect(json(await cli('list', '--json'))).toHaveLength(2);
    expect((await cli('forget', '--scope')).stderr).toContain('--scope needs --user, --agent or --session');
    const none = await cli('forget', '--scope', '--user', 'nobody');
    expect(none.code).toBe(0); // nothing to confirm
    expect(none.stdout).toContain('no memories in scope user nobody: nothing to forget.');
    expect(none.stdout).not.toContain('--yes');

    expect(json(await cli('forget', '--scope', '--user', 'alice', '--yes', '--json'))).toEqual({ deleted: 1, scope: { userId: 'alice' } });
    expect(json(await cli('list', '--json')).map((record: { content: string }) => record.content)).toEqual(['Bob likes folk']);
  });

  it('--scope deletes exactly the memories its preview counts, within the configured default scope', async () => {
    writeFileSync(join(dir, 'memloom.config.json'), JSON.stringify({ store: 'sqlite:./memory.db', scope: { userId: 'me' } }));
    await cli('add', 'my note', '--session', 's1'); // user me (configured), session s1
    await cli('add', "bob's note", '--user', 'bob', '--session', 's1');
    const preview = await cli('forget', '--scope', '--session', 's1');
    expect(preview.code).toBe(EXIT_CODES.USAGE);
    expect(preview.stdout).toMatch(/^1 memory in scope .* would be forgotten/);
    const forgot = await cli('forget', '--scope', '--session', 's1', '--yes');
    expect(forgot.stdout).toMatch(/^forgot 1 memory in scope /);
    const left = json(await cli('list', '--user', 'bob', '--json'));
    expect(left.map((record: { content: string }) => record.content)).toEqual(["bob's note"]);
    // Both say which scope: the configured user with the given session.
    expect(preview.stdout).toContain('1 memory in scope user me, session s1 would be forgotten');
    expect(forgot.stdout).toBe('forgot 1 memory in scope user me, session s1\n');
  });
});

describe('export with a configured default scope', () => {
  it('exports that scope and says so in its header', async () => {
    writeFileSync(join(dir, 'memloom.config.json'), JSON.stringify({ store: 'sqlite:./memory.db', scope: { userId: 'me' } }));
    await cli('add', 'my note'); // user me, from the configuration
    await cli('add', "bob's note", '--user', 'bob');
    const exported = await cli('export');
    expect(exported.code).toBe(0);
    const [header, ...lines] = exported.stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(header.scope).toEqual({ userId: 'me' });
    expect(lines.map((line: { memory: { content: string } }) => line.memory.content)).toEqual(['my note']);
    const bob = (await cli('export', '--user', 'bob')).stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(bob[0].scope).toEqual({ userId: 'bob' });
    expect(bob.slice(1).map((line: { memory: { content: string } }) => line.memory.content)).toEqual(["bob's note"]);
  });
});

describe('maintain', () => {
  it('--dry-run says what would be compressed, decayed or deleted and why, and changes nothing', async () => {
    await cli('add', 'We chose Postgres for the billing service', '--user', 'alice', '--at', '2024-01-01');
    await cli('add', 'Standup notes from Monday', '--user', 'alice', '--category', 'episode', '--at', '2024-01-01');
    await cli('add', 'The company was founded in 2009', '--user', 'alice', '--category', 'core', '--at', '2024-01-01');

    const dry = await cli('maintain', '--dry-run', '--now', '2024-01-16');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('Dry run at 2024-01-16T00:00:00.000Z: 3 memories scanned; 1 would be compressed, 0 decayed, 1 deleted; 1 unchanged.');
    expect(dry.stdout).toMatch(/compress +\S+ +full -> summary, weight 1\.000 -> 0\.870/);
    expect(dry.stdout).toContain('    We chose Postgres for the billing service');
    expect(dry.stdout).toMatch(/delete +\S+\n +Standup notes from Monday\n +why: .*episode/);
    expect(json(await cli('list', '--json')).map((record: { level: string }) => record.level)).toEqual(['full', 'full', 'full']);

    const report = json(await cli('maintain', '--now', '2024-01-16', '--json'));
    expect(report).toMatchObject({ dryRun: false, compressed: 1, deleted: 1, unchanged: 1 });
    const [compressed] = json(await cli('list', '--level', 'summary', '--json'));
    const history = json(await cli('history', compressed.id, '--json'));
    expect(history.at(-1)).toMatchObject({ trigger: 'passive_decay', action: 'compress' });
    expect(history.at(-1).after.updatedAt).toBe(history[0].after.updatedAt); // never refreshed
  });

  it('lists the first 50 changes of a larger pass (without reading every memory first), and every one with --all', async () => {
    for (let index = 0; index < 53; index++) await cli('add', `Standup number ${index} covered topic ${index}`, '--user', 'alice', '--category', 'episode', '--at', '2024-01-01');
    const stored = json(await cli('list', '--all', '--json')).length; // a few of the similar lines may merge
    expect(stored).toBeGreaterThan(50);
    const listed = (output: string) => output.split('\n').filter((line) => /^delete +\S+$/.test(line)).length;
    const dry = await cli('maintain', '--dry-run', '--now', '2024-01-16');
    expect(dry.stdout).toContain(`${stored} memories scanned; 0 would be compressed, 0 decayed, ${stored} deleted`);
    expect(listed(dry.stdout)).toBe(50);
    expect(dry.stdout).toContain(`${stored - 50} more changes not listed: --all lists every one with its text`);
    expect(dry.stdout).not.toContain('    Standup number');
    const all = await cli('maintain', '--dry-run', '--now', '2024-01-16', '--all');
    expect(listed(all.stdout)).toBe(stored);
    expect(all.stdout).toContain('    Standup number 52 covered topic 52');
    expect(all.stdout).not.toContain('more changes not listed');
  });
});

describe('maintain progress', () => {
  it('a log gets a line per tenth of the way inside a page too (a page holds 10,000 memories)', async () => {
    expect((await run(dir, ['import', '-', '--quiet'], { stdin: syntheticExport(30).text })).code).toBe(0);
    const result = await cli('maintain', '--dry-run', '--now', '2024-03-01');
    expect(result.code).toBe(0);
    const lines = result.stderr.split('\n').filter((line) => line.startsWith('maintain '));
    expect(lines.map((line) => line.split(/\s+/)[1])).toEqual(['0/30', '3/30', '6/30', '9/30', '12/30', '15/30', '18/30', '21/30', '24/30', '27/30', '30/30']);
  });
});

describe('index and stats', () => {
  it('prints the MEMORY.md index of a scope', async () => {
    await cli('add', 'Alice is allergic to shellfish', '--user', 'alice', '--category', 'core');
    await cli('add', 'Bob keeps bees', '--user', 'bob');
    const index = await cli('index', '--user', 'alice');
    expect(index.stdout).toMatch(/^# MEMORY\.md/);
    expect(index.stdout).toContain('Alice is allergic to shellfish');
    expect(index.stdout).not.toContain('bees');
  });

  it('names the store, the embedder and where each came from, and counts what is there', async () => {
    await cli('add', 'Alice is allergic to shellfish', '--user', 'alice', '--category', 'core');
    await cli('add', 'Alice likes jazz', '--user', 'alice');
    const stats = json(await cli('stats', '--json'));
    expect(stats).toMatchObject({
      store: { name: 'sqlite', location: join(dir, 'memory.db'), source: join(dir, 'memloom.config.json') },
      embedder: { source: 'environment variable MEMLOOM_EMBEDDER' },
      configFile: join(dir, 'memloom.config.json'),
      total: 2,
      byCategory: { core: 1, fact: 1 },
      byLevel: { full: 2 },
    });
    expect(stats.embedder.id).toMatch(/lexical/);
    expect((await cli('stats')).stdout).toMatch(/store +sqlite at .*memory\.db/);
  });

  it('says which scope it counts: the configured default scope, with --user/--agent/--session over it', async () => {
    writeFileSync(join(dir, 'memloom.config.json'), JSON.stringify({ store: 'sqlite:./memory.db', scope: { userId: 'me' } }));
    await cli('add', 'I keep bees');
    await cli('add', 'Bob keeps goats', '--user', 'bob');
    expect(json(await cli('stats', '--json'))).toMatchObject({ scope: { userId: 'me' }, total: 1 });
    expect((await cli('stats')).stdout).toMatch(/memories {3}1 in scope user me\n/);
    expect(json(await cli('stats', '--user', 'bob', '--json'))).toMatchObject({ scope: { userId: 'bob' }, total: 1 });
  });

  it('says where the default store is when the configuration file names none: beside that file, from a subfolder too', async () => {
    const { dir: project, cleanup: done } = tempFolder();
    try {
      writeFileSync(join(project, 'memloom.config.json'), JSON.stringify({ scope: { userId: 'me' } }));
      const inner = join(project, 'a', 'b');
      mkdirSync(inner, { recursive: true });
      expect((await run(project, ['add', 'a note at the root'], { env: { MEMLOOM_EMBEDDER: 'lexical' } })).code).toBe(0);
      const stats = json(await run(inner, ['stats', '--json'], { env: { MEMLOOM_EMBEDDER: 'lexical' } }));
      expect(stats.store.location).toBe(join(project, '.memloom', 'memory.db'));
      expect(stats.store.bytes).toBeGreaterThan(0);
      expect(stats.total).toBe(1);
    } finally {
      done();
    }
  });

  it('says where MEMLOOM_SQLITE_PATH puts the store, and where a Markdown store is', async () => {
    const env = { MEMLOOM_EMBEDDER: 'lexical', MEMLOOM_SQLITE_PATH: 'data/mine.db' };
    expect((await run(dir, ['add', 'a note', '--no-config'], { env })).code).toBe(0);
    const stats = json(await run(dir, ['stats', '--json', '--no-config'], { env }));
    expect(stats.store).toMatchObject({ name: 'sqlite', location: join(dir, 'data', 'mine.db'), source: 'default' });
    expect(stats.store.bytes).toBeGreaterThan(0);
    expect(stats.store.exists).toBeUndefined();
    expect((await cli('add', 'a note', '--store', 'markdown:./notes')).code).toBe(0);
    expect(json(await cli('stats', '--json', '--store', 'markdown:./notes')).store).toMatchObject({ name: 'markdown', location: join(dir, 'notes') });
  });
});

describe('configuration', () => {
  it("search's default count: the configured policy, then the user's policy_overrides.json of a Markdown store (seed 001)", { timeout: 60_000 }, async () => {
    for (const text of ['I live in Lyon', 'I live near the river', 'I live with two cats']) expect((await cli('add', text, '--user', 'u', '--store', 'markdown:./notes')).code).toBe(0);
    const count = async (env: Record<string, string> = {}) => json(await run(dir, ['search', 'I live', '--user', 'u', '--store', 'markdown:./notes', '--json'], { env })).length;
    expect(await count()).toBe(3);
    expect(await count({ MEMLOOM_POLICY: '{"retrieve_limit":2}' })).toBe(2);
    writeFileSync(join(dir, 'notes', 'users', 'u', 'memory', 'policy_overrides.json'), '{"retrieve_limit": 1}\n');
    expect(await count()).toBe(1);
    // The overrides file goes over the configuration; --limit over both.
    expect(await count({ MEMLOOM_POLICY: '{"retrieve_limit":2}' })).toBe(1);
    expect(json(await cli('search', 'I live', '--user', 'u', '--store', 'markdown:./notes', '--limit', '3', '--json'))).toHaveLength(3);
  });

  it('init writes memloom.config.json and creates the store; a second init needs --force', async () => {
    const { dir: fresh, cleanup: done } = tempFolder();
    try {
      const init = await run(fresh, ['init', '--store', 'markdown:./notes', '--user', 'me']);
      expect(init.code).toBe(0);
      expect(JSON.parse(readFileSync(join(fresh, 'memloom.config.json'), 'utf8'))).toEqual({ store: 'markdown:./notes', embedder: 'default', scope: { userId: 'me' } });
      expect(existsSync(join(fresh, 'notes'))).toBe(true);
      expect((await run(fresh, ['init'])).code).toBe(EXIT_CODES.USAGE);
      expect((await run(fresh, ['init', '--store', 'postgres:x', '--force'])).code).toBe(EXIT_CODES.CONFIG);
      // The default scope from the file applies when no --user is given.
      await run(fresh, ['add', 'I write with a fountain pen']);
      expect(json(await run(fresh, ['list', '--json']))[0].scope).toEqual({ userId: 'me' });
    } finally {
      done();
    }
  });

  it('a failed init writes no configuration, and leaves the one a folder had as it was', async () => {
    const { dir: fresh, cleanup: done } = tempFolder();
    try {
      const missingModel = await run(fresh, ['init', '--embedder', 'transformers:Xenova/nope'], { env: { MEMLOOM_EMBEDDER: undefined } });
      expect(missingModel.code).toBe(EXIT_CODES.CONFIG);
      expect(readdirSync(fresh).filter((name) => name.startsWith('memloom.config'))).toEqual([]);
      // Nothing was left behind to refuse the next init or break the next command.
      expect((await run(fresh, ['init', '--embedder', 'lexical'])).code).toBe(0);
      const working = readFileSync(join(fresh, 'memloom.config.json'), 'utf8');
      await run(fresh, ['add', 'I write with a fountain pen']);

      // A store that cannot be opened (nothing listens on the port): --force replaces nothing.
      const server = createServer();
      await new Promise<void>((resolvePromise) => server.listen(0, '127.0.0.1', resolvePromise));
      const { port } = server.address() as { port: number };
      await new Promise((resolvePromise) => server.close(resolvePromise));
      const unreachable = await run(fresh, ['init', '--store', `qdrant:http://127.0.0.1:${port}`, '--force']);
      expect(unreachable.code).not.toBe(0);
      expect(readFileSync(join(fresh, 'memloom.config.json'), 'utf8')).toBe(working);
      expect(readdirSync(fresh).filter((name) => name.startsWith('memloom.config'))).toEqual(['memloom.config.json']);
      expect(json(await run(fresh, ['list', '--json']))).toHaveLength(1);
    } finally {
      done();
    }
  });

  it('a bad configuration is exit 4 naming the file and the field; --store and --no-config override it', async () => {
    writeFileSync(join(dir, 'memloom.config.json'), JSON.stringify({ store: 'sqlite:./memory.db', retrieval: { defaultLimit: 0 } }));
    const bad = await cli('list');
    expect(bad.code).toBe(EXIT_CODES.CONFIG);
    expect(bad.stderr).toContain(`invalid configuration in ${join(dir, 'memloom.config.json')}: retrieval.defaultLimit`);
    expect((await cli('list', '--no-config', '--store', 'memory:')).code).toBe(0);
    const env = await run(dir, ['list', '--no-config'], { env: { MEMLOOM_STORE: 'mongodb:x' } });
    expect(env.code).toBe(4);
    expect(env.stderr).toContain('environment variable MEMLOOM_STORE: store: unknown store "mongodb"');
    expect((await cli('list', '--config', 'missing.json')).code).toBe(4);
    expect((await cli('list', '--config', 'x.json', '--no-config')).code).toBe(2);
  });

  it('a bad --store or --embedder is exit 4 naming the flag (reindex names its <embedder>), and stats says a store came from --store', async () => {
    expect(await cli('list', '--store', 'bogus:x')).toMatchObject({ code: 4, stderr: expect.stringContaining('memloom: [config] invalid configuration in --store: store: unknown store "bogus"') });
    expect((await cli('list', '--store', 'markdown:')).stderr).toContain('invalid configuration in --store: store: markdown needs a folder');
    expect((await cli('list', '--store', `sqlite:${dir}`)).stderr).toContain(`invalid configuration in --store: store: path ${dir} is a folder`);
    expect(await cli('list', '--embedder', 'bogus')).toMatchObject({ code: 4, stderr: expect.stringContaining('invalid configuration in --embedder: embedder: unknown embedder "bogus"') });
    expect((await cli('reindex', 'bogus')).stderr).toContain('invalid configuration in <embedder>: embedder: unknown embedder "bogus"');
    await cli('add', 'A note');
    expect(json(await cli('stats', '--store', 'sqlite:./memory.db', '--json')).store).toMatchObject({ location: join(dir, 'memory.db'), source: '--store' });
  });

  it('a store built by another embedder is exit 4 with what to do', async () => {
    await cli('add', 'A note');
    const other = await run(dir, ['list'], { env: { MEMLOOM_EMBEDDER: 'use-lite' } });
    expect(other.code).toBe(EXIT_CODES.CONFIG);
    expect(other.stderr).toContain('memloom reindex <embedder>');
  });

  it('a Markdown store built by another embedder says how to move it (it cannot be re-indexed in place)', async () => {
    await run(dir, ['add', 'A note', '--no-config', '--store', 'markdown:./notes']);
    const other = await run(dir, ['list', '--no-config', '--store', 'markdown:./notes'], { env: { MEMLOOM_EMBEDDER: 'use-lite' } });
    expect(other.code).toBe(EXIT_CODES.CONFIG);
    expect(other.stderr).toContain('delete the store\'s .memloom/store.json');
    expect(other.stderr).not.toContain('memloom reindex');
  });

  it('--verbose adds the stack trace', async () => {
    await cli('add', 'A note');
    const verbose = await cli('show', 'nope', '--verbose');
    expect(verbose.stderr).toMatch(/MemloomError: \[memloom\] \[sqlite\] no memory with id nope\n +at /);
  });

  it('with --json, a failure puts only its JSON on stderr (--verbose adds the stack trace in it)', async () => {
    // stdin failing while it is read: an unexpected error (exit 1), the kind that gets the --verbose hint.
    const failing = () => new Readable({ read() { this.destroy(new Error('the pipe broke')); } });
    const failed = await run(dir, ['add-turns', '-', '--json'], { stdin: failing() });
    expect(failed.code).toBe(EXIT_CODES.ERROR);
    expect(JSON.parse(failed.stderr)).toMatchObject({ error: { code: 'ERROR', exitCode: 1, message: 'the pipe broke' } });
    expect(failed.stderr.trim().split('\n')).toHaveLength(1);
    const human = await run(dir, ['add-turns', '-'], { stdin: failing() });
    expect(human.stderr).toBe('memloom: unexpected error: the pipe broke\nRun again with --verbose for the stack trace.\n');
    const verbose = await run(dir, ['add-turns', '-', '--json', '--verbose'], { stdin: failing() });
    expect(JSON.parse(verbose.stderr).error.stack).toMatch(/the pipe broke\n +at /);
  });

  it('a file the system refuses is exit 1 naming it, not an unexpected error; a folder given as a file is exit 2', async () => {
    expect((await cli('add', 'A note')).code).toBe(0);
    const unwritable = await cli('export', '-o', 'no-such-folder/backup.jsonl');
    expect(unwritable.code).toBe(EXIT_CODES.ERROR);
    // The file asked for, not the temporary one beside it (out.jsonl.<pid>.partial), with the system's reason; and
    // nothing else: no progress line, since the target is opened before any memory is read (not after the export).
    expect(unwritable.stderr).toBe(`memloom: cannot write ${join(dir, 'no-such-folder', 'backup.jsonl')}: ENOENT: no such file or directory\n`);
    // A folder given as the file: exit 2 before the export too (the rename at its end would fail), and no file left beside it.
    mkdirSync(join(dir, 'backups'));
    expect(await cli('export', '-o', 'backups')).toEqual({ code: EXIT_CODES.USAGE, stdout: '', stderr: 'memloom export: backups is a folder; give a file to write\nRun "memloom export --help" for usage.\n' });
    expect(readdirSync(dir).filter((name) => name.includes('backup'))).toEqual(['backups']);
    expect(JSON.parse((await cli('export', '-o', 'no-such-folder/backup.jsonl', '--json')).stderr).error).toMatchObject({ code: 'ERROR', exitCode: 1 });
    for (const command of ['add-turns', 'import']) {
      expect(await cli(command, '.'), command).toMatchObject({ code: EXIT_CODES.USAGE, stderr: expect.stringContaining(`memloom ${command}: . is a folder; give a file, or - to read stdin\n`) });
    }
  });
});

describe('export, import, reindex', () => {
  it('export then import into a Markdown store by --store loses nothing; import counts and resumes', async () => {
    const { memory } = json(await cli('add', 'I live in Lisbon', '--user', 'alice', '--json'));
    await cli('add', 'I live in Lisbon', '--user', 'alice'); // merges: a second version
    await cli('add', 'Bob keeps bees', '--user', 'bob', '--tag', 'hobby');
    const exported = await cli('export', '-o', 'backup.jsonl', '--vectors');
    expect(exported.stdout).toBe(`exported 2 memories to ${join(dir, 'backup.jsonl')}\n`);
    const lines = readFileSync(join(dir, 'backup.jsonl'), 'utf8').trim().split('\n');
    expect(JSON.parse(lines[0]!)).toMatchObject({ memloom: 'export', format: 1, store: 'sqlite', count: 2, vectors: true });
    expect(JSON.parse(lines.find((line) => line.includes(memory.id))!).versions).toHaveLength(2);

    const imported = await cli('import', 'backup.jsonl', '--store', 'markdown:./md');
    expect(imported.stdout).toBe(`imported 2 memories from ${join(dir, 'backup.jsonl')}: 2 created, 0 merged (newer history), 0 kept (already there)\n`);
    expect(imported.stderr).toMatch(/import 2\/2 \(100%\)/); // progress, not a terminal: plain lines
    expect(json(await cli('import', 'backup.jsonl', '--store', 'markdown:./md', '--json'))).toMatchObject({ created: 0, kept: 2 });
    const missing = await cli('import', 'missing.jsonl', '--store', 'markdown:./md');
    expect(missing.code).toBe(EXIT_CODES.USAGE);
    expect(missing.stderr).toContain('missing.jsonl does not exist');
    expect(json(await cli('history', memory.id, '--store', 'markdown:./md', '--json'))).toEqual(json(await cli('history', memory.id, '--json')));
    const markdown = await run(dir, ['export', '--store', 'markdown:./md']);
    const sqlite = await run(dir, ['export']);
    const body = (text: string) => text.trim().split('\n').slice(1).sort();
    expect(body(markdown.stdout)).toEqual(body(sqlite.stdout));
  });

  it('reads an export from stdin, and refuses a file that is not one (exit 2, naming the line)', async () => {
    await cli('add', 'Bob keeps bees', '--user', 'bob');
    const exported = await cli('export');
    const piped = await run(dir, ['import', '-', '--store', 'sqlite:./copy.db', '--json'], { stdin: exported.stdout });
    expect(json(piped)).toMatchObject({ source: 'stdin', created: 1 });
    writeFileSync(join(dir, 'broken.jsonl'), `${exported.stdout.split('\n')[0]}\n{"memory":{"id":"x"},"versions":[]}\n`);
    const broken = await cli('import', 'broken.jsonl', '--store', 'sqlite:./other.db');
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/broken\.jsonl, line 2: memory\.content/);
    writeFileSync(join(dir, 'notes.jsonl'), '{"hello":"world"}\n');
    expect((await cli('import', 'notes.jsonl')).stderr).toContain('notes.jsonl, line 1: the first line is not a memloom export header');
    expect((await cli('import', 'nowhere.jsonl')).code).toBe(2);
  });

  it('a conflicting copy is exit 5 unless --on-conflict says what to do', async () => {
    const { memory } = json(await cli('add', 'I live in Lisbon', '--user', 'alice', '--json'));
    await cli('export', '-o', 'before.jsonl');
    await cli('import', 'before.jsonl', '--store', 'sqlite:./copy.db');
    await cli('restore', memory.id, '1', '--store', 'sqlite:./copy.db'); // the copy moves on
    await cli('add', 'I live in Lisbon now', '--user', 'alice'); // and so does the original
    await cli('export', '-o', 'after.jsonl');
    const conflict = await cli('import', 'after.jsonl', '--store', 'sqlite:./copy.db');
    expect(conflict.code).toBe(EXIT_CODES.CONFLICT);
    expect(conflict.stderr).toContain('--on-conflict skip');
    expect(json(await cli('import', 'after.jsonl', '--store', 'sqlite:./copy.db', '--on-conflict', 'replace', '--json'))).toMatchObject({ replaced: 1 });
  });

  it('importing a backup again after the store moved on keeps the newer memory (no conflict)', async () => {
    const { memory } = json(await cli('add', 'I live in Lisbon', '--user', 'alice', '--json'));
    await cli('export', '-o', 'backup.jsonl');
    await cli('add', 'I live in Lisbon', '--user', 'alice'); // merges: the store is at revision 2
    const again = await cli('import', 'backup.jsonl', '--json');
    expect(again.code).toBe(0);
    expect(json(again)).toMatchObject({ created: 0, kept: 1 });
    expect(json(await cli('history', memory.id, '--json'))).toHaveLength(2);
    // A store that moved to another history is still a conflict, and its hint is the message's own.
    await cli('restore', memory.id, '1');
    await cli('export', '-o', 'restored.jsonl');
    await run(dir, ['import', 'backup.jsonl', '--store', 'sqlite:./copy.db']);
    await run(dir, ['add', 'I live in Lisbon', '--user', 'alice', '--store', 'sqlite:./copy.db']);
    const conflict = await cli('import', 'restored.jsonl', '--store', 'sqlite:./copy.db');
    expect(conflict.code).toBe(EXIT_CODES.CONFLICT);
    expect(conflict.stderr).toContain('--on-conflict skip');
    expect(conflict.stderr).not.toContain('run the command again');
  });

  it('--merge adds through the strategy engine, keeps a checkpoint while it runs and removes it at the end', async () => {
    await cli('add', 'I live in Lisbon and work as a nurse', '--user', 'alice');
    await cli('add', 'Bob keeps bees', '--user', 'bob');
    await cli('export', '-o', 'mine.jsonl');
    await run(dir, ['add', 'I live in Lisbon and work as a nurse', '--user', 'alice', '--store', 'sqlite:./team.db']);
    const merged = json(await cli('import', 'mine.jsonl', '--merge', '--store', 'sqlite:./team.db', '--json'));
    expect(merged).toMatchObject({ mode: 'merge', done: 2, merged: 1, created: 1 });
    expect(existsSync(join(dir, 'mine.jsonl.import-checkpoint.json'))).toBe(false);
  });

  it('an interrupted import says how to resume and exits 130; the --merge checkpoint resumes it', async () => {
    for (const text of ['one fact about tea', 'two facts about jazz', 'three facts about bees']) await cli('add', text, '--user', 'alice');
    await cli('export', '-o', 'three.jsonl');
    const stop = new AbortController();
    stop.abort();
    const interrupted = await run(dir, ['import', 'three.jsonl', '--store', 'sqlite:./copy.db'], { signal: stop.signal });
    expect(interrupted.code).toBe(EXIT_CODES.INTERRUPTED);
    // Stopped before its first batch: nothing to resume.
    expect(interrupted.stderr).toBe('memloom: import interrupted; nothing was imported\n');

    // A checkpoint left by a --merge run that handled the first memory: the rerun does the other two.
    const header = JSON.parse(readFileSync(join(dir, 'three.jsonl'), 'utf8').split('\n')[0]!);
    const counts = { mode: 'merge', done: 1, created: 1, merged: 0, kept: 0, skipped: 0, replaced: 0, outOfScope: 0 };
    writeFileSync(join(dir, 'three.jsonl.import-checkpoint.json'), JSON.stringify({ source: join(dir, 'three.jsonl'), exportedAt: header.exportedAt, done: 1, counts }));
    const resumed = await cli('import', 'three.jsonl', '--merge', '--store', 'sqlite:./merged.db', '--json');
    // The 'Resuming from' note is left out with --json: stderr holds nothing but a JSON error.
    expect(resumed.stderr).toBe('');
    expect(json(resumed)).toMatchObject({ done: 3, created: 3 });
    expect(json(await cli('list', '--store', 'sqlite:./merged.db', '--json'))).toHaveLength(2);
  });

  it('an interrupted import says how far it got; says it embedded again only when it wrote memories', async () => {
    writeFileSync(join(dir, 'notes.jsonl'), syntheticExport(250).text);
    const stop = new AbortController();
    const interrupted = await run(dir, ['import', 'notes.jsonl'], {
      signal: stop.signal,
      onStderr: (text) => {
        if (text.startsWith('import 100/250')) stop.abort(); // Ctrl-C after the first batch of 100
      },
    });
    expect(interrupted.code).toBe(EXIT_CODES.INTERRUPTED);
    expect(interrupted.stderr).toContain('memloom: import interrupted after 100 of 250 memories; run the same command again to resume');
    const resumed = await cli('import', 'notes.jsonl', '--quiet');
    expect(resumed.stdout).toContain('150 created, 0 merged (newer history), 100 kept (already there)');
    expect(resumed.stdout).toContain('embedded again with memloom/lexical'); // the export came from test/none
    const again = await cli('import', 'notes.jsonl', '--quiet');
    expect(again.stdout).toBe(`imported 250 memories from ${join(dir, 'notes.jsonl')}: 0 created, 0 merged (newer history), 250 kept (already there)\n`);
  });

  it('an interrupted import - says to pipe the same export again to resume', async () => {
    const { text } = syntheticExport(250);
    const stop = new AbortController();
    const interrupted = await run(dir, ['import', '-'], {
      stdin: text,
      signal: stop.signal,
      onStderr: (line) => {
        if (line.startsWith('import 100/250')) stop.abort(); // Ctrl-C after the first batch of 100
      },
    });
    expect(interrupted.code).toBe(EXIT_CODES.INTERRUPTED);
    expect(interrupted.stderr).toContain('memloom: import interrupted after 100 of 250 memories; run the same command again with the same export on stdin to resume (memories already imported are kept)\n');
    const resumed = await run(dir, ['import', '-', '--quiet'], { stdin: text });
    expect(resumed.stdout).toContain('150 created, 0 merged (newer history), 100 kept (already there)');
  });

  it('an export cut short is imported as far as it goes, then exit 2 saying so; a failure part-way says how many were imported', async () => {
    const { header, lines } = syntheticExport(250);
    writeFileSync(join(dir, 'cut.jsonl'), `${[header, ...lines.slice(0, 120)].join('\n')}\n`);
    const cut = await cli('import', 'cut.jsonl');
    expect(cut.code).toBe(EXIT_CODES.USAGE);
    expect(cut.stdout).toContain('imported 120 memories');
    expect(cut.stderr).toContain('cut.jsonl holds 120 memories, but its header says 250: the file looks cut short');
    const asJson = await cli('import', 'cut.jsonl', '--store', 'sqlite:./other.db', '--json', '--quiet');
    expect(asJson.code).toBe(EXIT_CODES.USAGE);
    expect(json(asJson)).toMatchObject({ created: 120, read: 120, expected: 250 });
    expect(JSON.parse(asJson.stderr)).toMatchObject({ error: { code: 'INVALID_INPUT', exitCode: 2, details: { read: 120, expected: 250 } } });

    // Cut in the middle of a line: every complete memory before it is in the store, and the error says how many.
    writeFileSync(join(dir, 'torn.jsonl'), `${[header, ...lines.slice(0, 150), lines[150]!.slice(0, 80)].join('\n')}`);
    const torn = await cli('import', 'torn.jsonl', '--store', 'sqlite:./torn.db', '--batch-size', '100');
    expect(torn.code).toBe(EXIT_CODES.USAGE);
    expect(torn.stderr).toContain('torn.jsonl, line 152: not JSON');
    // Every complete memory before the cut is written, the 50 of the last batch too.
    expect(torn.stderr).toContain('150 memories before it were imported and stay in the store');
    expect(json(await cli('list', '--all', '--store', 'sqlite:./torn.db', '--json'))).toHaveLength(150);
    // The whole file is complete: exit 0, and the 250 are there.
    writeFileSync(join(dir, 'whole.jsonl'), syntheticExport(250).text);
    expect(json(await cli('import', 'whole.jsonl', '--store', 'sqlite:./torn.db', '--json'))).toMatchObject({ created: 100, kept: 150 });
  });

  it('a memory twice in the file, in one batch or two: the same line is imported once (whatever --on-conflict), two different ones are exit 2 naming both lines', async () => {
    const { header, lines } = syntheticExport(3);
    writeFileSync(join(dir, 'twice.jsonl'), `${[header, ...lines, lines[1]].join('\n')}\n`);
    for (const batchSize of ['100', '2']) {
      for (const onConflict of ['error', 'skip', 'replace']) {
        const store = `sqlite:./twice-${batchSize}-${onConflict}.db`;
        const imported = await cli('import', 'twice.jsonl', '--store', store, '--batch-size', batchSize, '--on-conflict', onConflict, '--json', '--quiet');
        expect(imported.code).toBe(0);
        expect(json(imported)).toMatchObject({ done: 4, created: 3, kept: 1, skipped: 0, replaced: 0 });
        expect(json(await cli('history', JSON.parse(lines[1]!).memory.id, '--store', store, '--json'))).toHaveLength(1);
      }
    }
    const other = JSON.parse(lines[1]!);
    other.memory.content = 'Another text for the same memory';
    other.versions[0].after.content = other.memory.content;
    writeFileSync(join(dir, 'differ.jsonl'), `${[header, ...lines, JSON.stringify(other)].join('\n')}\n`);
    const differ = await cli('import', 'differ.jsonl', '--store', 'sqlite:./d.db');
    expect(differ.code).toBe(EXIT_CODES.USAGE);
    expect(differ.stderr).toContain(`differ.jsonl, lines 3 and 5: memory ${other.memory.id} is in the file twice, with different contents`);
    expect(await storedIn(dir, 'd.db')).toEqual([]);
    // In a later batch the first copy is already stored: the answer is the same, whatever --on-conflict says.
    for (const onConflict of ['error', 'replace']) {
      const later = await cli('import', 'differ.jsonl', '--store', `sqlite:./d-${onConflict}.db`, '--batch-size', '2', '--on-conflict', onConflict);
      expect(later.code).toBe(EXIT_CODES.USAGE);
      expect(later.stderr).toContain(`differ.jsonl, lines 3 and 5: memory ${other.memory.id} is in the file twice, with different contents`);
      expect(later.stderr).toContain('2 memories before it were imported and stay in the store');
      const stored = json(await cli('list', '--store', `sqlite:./d-${onConflict}.db`, '--json'));
      expect(stored.find((record: { id: string }) => record.id === other.memory.id)?.content).toBe(JSON.parse(lines[1]!).memory.content);
    }
  });

  it('refuses an export line whose times are not ISO 8601 on the calendar, or whose scope id holds a lone UTF-16 half, naming the line; nothing is stored', async () => {
    const { header, lines } = syntheticExport(2);
    const bad = (edit: (line: any) => void) => {
      const line = JSON.parse(lines[1]!);
      edit(line);
      return `${[header, lines[0], JSON.stringify(line)].join('\n')}\n`;
    };
    for (const [name, text] of [
      ['slashes', bad((line) => (line.memory.createdAt = '2024/03/01 10:00'))],
      ['shifted', bad((line) => (line.memory.updatedAt = '2024-02-30T10:00:00.000Z'))],
      ['version', bad((line) => (line.versions[0].at = '2024-01-01 24:00'))],
      ['scope', bad((line) => (line.memory.scope = { userId: 'al\uD800' }))],
    ] as const) {
      writeFileSync(join(dir, `${name}.jsonl`), text);
      const result = await cli('import', `${name}.jsonl`, '--store', `sqlite:./${name}.db`);
      expect(result.code, name).toBe(EXIT_CODES.USAGE);
      expect(result.stderr, name).toContain(`${name}.jsonl`);
      expect(result.stderr, name).toMatch(/line 3/);
      expect(await storedIn(dir, `${name}.db`), name).toEqual([]);
    }
  });

  it('Ctrl-C during reindex (SQLite, offline embedder) stops between batches with exit 130; run again, it resumes', async () => {
    expect((await run(dir, ['import', '-', '--quiet'], { stdin: syntheticExport(200).text })).code).toBe(0);
    const stop = new AbortController();
    // Ctrl-C arrives as an event: it can stop the command only if the command lets the event loop run.
    const interrupted = await run(dir, ['reindex', 'default', '--batch-size', '5'], {
      signal: stop.signal,
      onStderr: (text) => {
        const done = / (\d+)\/200 /.exec(text);
        if (done && Number(done[1]) > 0) setImmediate(() => stop.abort());
      },
    });
    expect(interrupted.code).toBe(EXIT_CODES.INTERRUPTED);
    const at = Number(/reindex interrupted at (\d+) of 200 memories; run the same command again to resume/.exec(interrupted.stderr)?.[1]);
    expect(at).toBeGreaterThan(0);
    expect(at).toBeLessThan(200);
    const resumed = await cli('reindex', 'default', '--json', '--quiet');
    expect(resumed.code).toBe(0);
    expect(json(resumed)).toMatchObject({ total: 200, resumed: at, embedded: 200 - at });
  });

  it('reindex says to configure the new embedder where the embedder is configured', async () => {
    await cli('add', 'Bob keeps bees', '--user', 'bob');
    // From MEMLOOM_EMBEDDER (the tests' environment): the variable, or the file that comes before it.
    const fromVariable = await cli('reindex', 'use-lite');
    expect(fromVariable.stdout).toContain(
      `Now use it: set MEMLOOM_EMBEDDER=use-lite (the embedder comes from that variable now), or set "embedder": "use-lite" in ${join(dir, 'memloom.config.json')}`,
    );
    expect(fromVariable.stdout).not.toContain('in options');
    // From the configuration file.
    writeFileSync(join(dir, 'memloom.config.json'), JSON.stringify({ store: 'sqlite:./memory.db', embedder: 'use-lite' }));
    const fromFile = await run(dir, ['reindex', 'lexical', '--embedder', 'lexical'], { env: { MEMLOOM_EMBEDDER: undefined } });
    expect(fromFile.code).toBe(0);
    expect(fromFile.stdout).toContain(`Now use it: set "embedder": "lexical" in ${join(dir, 'memloom.config.json')} (or pass --embedder lexical).`);
    // Configured nowhere: where to put it.
    const nowhere = await run(dir, ['reindex', 'use-lite', '--no-config', '--store', 'sqlite:./memory.db'], { env: { MEMLOOM_EMBEDDER: undefined } });
    expect(nowhere.stdout).toContain('Now use it: set "embedder": "use-lite" in memloom.config.json');
  });

  it('reindex with nothing configured and no default store made yet says there is none to re-index (exit 0), and makes none', async () => {
    const bare = (...args: string[]) => run(dir, [...args, '--no-config'], { env: { MEMLOOM_STORE: undefined } });
    const defaultPath = join(dir, '.memloom', 'memory.db');
    const said = await bare('reindex', 'use-lite');
    expect(said).toMatchObject({ code: 0, stderr: '' });
    expect(said.stdout).toBe(`No store at ${defaultPath} yet: nothing to re-index ("memloom add", "memloom import" or "memloom init" makes it, with the embedder configured then).\n`);
    expect(json(await bare('reindex', 'use-lite', '--json'))).toMatchObject({ total: 0, embedded: 0, resumed: 0, store: { location: defaultPath, exists: false } });
    expect(existsSync(join(dir, '.memloom'))).toBe(false);
  });

  it('reindex moves the default store (nothing configured) to another embedder', async () => {
    const bare = (...args: string[]) => run(dir, [...args, '--no-config'], { env: { MEMLOOM_STORE: undefined } });
    expect((await bare('add', 'Bob keeps bees', '--user', 'bob')).code).toBe(0);
    expect(existsSync(join(dir, '.memloom', 'memory.db'))).toBe(true);
    // The default store is probed for existence, not opened for the target embedder, whose vectors it does not hold yet.
    const moved = await bare('reindex', 'use-lite', '--json');
    expect(moved.stderr).toBe('');
    expect(moved.code).toBe(0);
    expect(json(moved)).toMatchObject({ total: 1, embedded: 1 });
    const search = await run(dir, ['search', 'bees', '--no-config', '--json'], { env: { MEMLOOM_STORE: undefined, MEMLOOM_EMBEDDER: 'use-lite' } });
    expect(json(search)[0].memory.content).toBe('Bob keeps bees');
  });

  it('reindex moves the store to another embedder; the old one then no longer fits', async () => {
    await cli('add', 'I live in Lisbon', '--user', 'alice');
    await cli('add', 'Bob keeps bees', '--user', 'bob');
    const moved = await cli('reindex', 'use-lite');
    expect(moved.code).toBe(0);
    expect(moved.stdout).toMatch(/re-indexed 2 memories with energetic-ai\/use-lite/);
    expect(moved.stdout).toContain('"embedder": "use-lite"');
    expect((await cli('list')).code).toBe(EXIT_CODES.CONFIG); // still configured for lexical
    const search = await run(dir, ['search', 'bees', '--json'], { env: { MEMLOOM_EMBEDDER: 'use-lite' } });
    expect(json(search)[0].memory.content).toBe('Bob keeps bees');
    // A Markdown store cannot re-index in place: it says how it moves to another embedder.
    expect((await cli('add', 'I keep notes', '--store', 'markdown:./md')).code).toBe(0);
    // Made with another embedder than the target (lexical, not use-lite): the store lacks the feature, not an embedder.
    const markdown = await cli('reindex', 'use-lite', '--store', 'markdown:./md', '--json');
    expect(markdown.code).toBe(EXIT_CODES.CONFIG);
    expect(JSON.parse(markdown.stderr).error).toMatchObject({ code: 'NOT_SUPPORTED', message: expect.stringContaining('cannot re-index in place') });
    expect(markdown.stderr).toContain('delete its .memloom/store.json (and, if you like, its .index folders), then run any command with the new embedder');
    expect(markdown.stderr).not.toContain('configure that embedder again');
    const same = await cli('reindex', 'lexical', '--store', 'markdown:./md');
    expect(same.code).toBe(EXIT_CODES.CONFIG);
    expect(same.stderr).toContain('cannot re-index in place');
    expect(same.stderr).toContain('delete its .memloom/store.json (and, if you like, its .index folders), then run any command with the new embedder');
    // A Markdown folder that does not exist is named, not answered with how to move it.
    const missing = await cli('reindex', 'lexical', '--store', 'markdown:./no-such-notes');
    expect(missing.code).toBe(EXIT_CODES.CONFIG);
    expect(missing.stderr).toContain(`no store at ${join(dir, 'no-such-notes')}`);
    expect(missing.stderr).not.toContain('cannot re-index in place');
    // Other stores that cannot re-index are refused without being opened: Qdrant is not contacted.
    const qdrant = await cli('reindex', 'lexical', '--store', 'qdrant:http://127.0.0.1:1');
    expect(qdrant.code).toBe(EXIT_CODES.CONFIG);
    expect(qdrant.stderr).toContain('cannot re-index in place');
    expect(qdrant.stderr).not.toContain('fetch failed');
  });
});
