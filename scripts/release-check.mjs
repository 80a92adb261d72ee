#!/usr/bin/env node
// The release check: what someone who is not us gets from npm.
//
//   0. changeset status: the pending changesets make a release plan (a file
//      naming an ignored package, e.g. the private testkit, beside published
//      ones stops `changeset version`);
//   1. publint --strict on every public package;
//   2. pnpm pack each one, and check the tarball: no workspace: range left,
//      every file its exports map, bin, main and types name is inside,
//      README and LICENSE are there;
//   3. in a fresh folder outside the workspace, npm install the tarballs into
//      a LangChain app and a LlamaIndex app (in parallel), type-check the app
//      against the packed .d.ts files with tsc, and run an agent with memory
//      in two processes: what the first one is told, the second one's model
//      is shown. The LangChain app also runs the packed `memloom` CLI.
//
// Usage: pnpm release:check [--keep] [--only langchain|llamaindex]
// (the root script builds first). The temporary folder is removed on success
// and kept, with every command's log, on failure or with --keep.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { appFiles } from './release-check-apps.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const KEEP = args.includes('--keep');
const ONLY = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
if (ONLY && !['langchain', 'llamaindex'].includes(ONLY)) fail(`--only takes langchain or llamaindex, not ${ONLY}`);
/** npm install compiles better-sqlite3 from source here (~70 s); a cold cache also downloads ~300 MB. */
const INSTALL_TIMEOUT_MS = Number(process.env.MEMLOOM_RELEASE_CHECK_INSTALL_TIMEOUT_MS ?? 15 * 60_000);
const RUN_TIMEOUT_MS = 3 * 60_000;

// Versions the apps install next to our tarballs: the ones the adapters are tested with.
const FRAMEWORKS = {
  langchain: { langchain: '1.5.14', '@langchain/core': '1.4.0', '@langchain/langgraph': '1.7.3' },
  llamaindex: { llamaindex: '0.12.1', '@llamaindex/core': '0.6.22', '@llamaindex/workflow': '1.1.24' },
};
const TOOLS = { typescript: '5.9.3', '@types/node': '^20.19.0' };

const started = performance.now();
const work = mkdtempSync(join(tmpdir(), 'memloom-release-check-'));
if (!relative(ROOT, work).startsWith('..')) fail(`the temporary folder ${work} is inside the workspace; set TMPDIR elsewhere`);
let failed = false;

try {
  const packages = publicPackages();
  step(`${packages.length} public packages: ${packages.map((pkg) => pkg.name).join(', ')}`);

  for (const pkg of packages) {
    if (!existsSync(join(pkg.dir, 'dist'))) fail(`${pkg.name} has no dist/: run "pnpm build" first (pnpm release:check does)`);
  }
  await run('changeset status', [pnpmBin(), ['exec', 'changeset', 'status']], { cwd: ROOT, log: 'changeset-status' });
  step('changeset status: the pending changesets make a release plan');
  await Promise.all(packages.map((pkg) => run('publint', [pnpmBin(), ['exec', 'publint', '--strict', pkg.dir]], { cwd: ROOT, log: `publint-${pkg.slug}` })));
  step('publint --strict: no problems');

  const tarballs = join(work, 'tarballs');
  mkdirSync(tarballs);
  for (const pkg of packages) {
    await run(`pack ${pkg.name}`, [pnpmBin(), ['pack', '--pack-destination', tarballs]], { cwd: pkg.dir, log: `pack-${pkg.slug}` });
  }
  for (const pkg of packages) {
    pkg.tarball = join(tarballs, readdirSync(tarballs).find((file) => file === `${pkg.slug}-${pkg.version}.tgz`) ?? fail(`no tarball for ${pkg.name} in ${tarballs}`));
    await checkTarball(pkg);
  }
  step(`packed ${packages.length} tarballs: no workspace: ranges, every exported file present, README and LICENSE in each`);

  const apps = ONLY ? [ONLY] : ['langchain', 'llamaindex'];
  await Promise.all(apps.map((app) => checkApp(app, packages)));
  step(`done in ${seconds(performance.now() - started)}`);
} catch (error) {
  failed = true;
  console.error(`\n✗ release check failed: ${error instanceof Error ? error.message : String(error)}`);
  console.error(`  logs and apps kept in ${work}`);
  process.exitCode = 1;
} finally {
  if (!failed && !KEEP) rmSync(work, { recursive: true, force: true });
  else if (!failed) console.log(`  kept ${work}`);
}

// ---------------------------------------------------------------------------

async function checkApp(name, packages) {
  const app = join(work, `${name}-app`);
  mkdirSync(join(app, 'src'), { recursive: true });
  const ours = Object.fromEntries(packages.map((pkg) => [pkg.name, `file:${pkg.tarball}`]));
  const manifest = {
    name: `memloom-release-check-${name}`,
    private: true,
    type: 'module',
    dependencies: { ...ours, ...FRAMEWORKS[name] },
    devDependencies: TOOLS,
    // Our packages depend on each other by version: point those edges at the tarballs too,
    // so that nothing is looked up on the registry (none of it is published yet).
    overrides: {
      ...Object.fromEntries(packages.map((pkg) => [pkg.name, `$${pkg.name}`])),
      ...(name === 'llamaindex' ? { '@llamaindex/core': '$@llamaindex/core' } : {}),
    },
  };
  writeFileSync(join(app, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  for (const [file, text] of Object.entries(appFiles(name))) writeFileSync(join(app, file), text);

  const installStart = performance.now();
  step(`${name} app: npm install of the tarballs and ${Object.entries(FRAMEWORKS[name]).map(([dep, version]) => `${dep}@${version}`).join(', ')} (better-sqlite3 compiles from source: about a minute)`);
  await run(`${name}: npm install`, ['npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error']], {
    cwd: app,
    log: `${name}-npm-install`,
    timeoutMs: INSTALL_TIMEOUT_MS,
  });
  step(`${name} app: installed in ${seconds(performance.now() - installStart)}`);

  for (const pkg of packages) {
    const installed = JSON.parse(readFileSync(join(app, 'node_modules', pkg.name, 'package.json'), 'utf8'));
    if (installed.version !== pkg.version) throw new Error(`${name} app installed ${pkg.name}@${installed.version}, not the tarball's ${pkg.version}`);
  }
  await typeCheck(name, app);
  // Two processes: the first tells the agent something, the second must be shown it.
  const first = await run(`${name}: session 1`, [process.execPath, ['dist/agent.js', 'remember']], { cwd: app, log: `${name}-session-1`, timeoutMs: RUN_TIMEOUT_MS });
  const second = await run(`${name}: session 2`, [process.execPath, ['dist/agent.js', 'recall']], { cwd: app, log: `${name}-session-2`, timeoutMs: RUN_TIMEOUT_MS });
  step(`${name} app: ${lastLine(first)}; ${lastLine(second)}`);

  if (name === 'langchain') {
    const bin = join(app, 'node_modules', '.bin', 'memloom');
    const listed = await run(`${name}: memloom list`, [bin, ['list', '--user', 'alice', '--json']], { cwd: app, log: `${name}-cli-list` });
    const memories = JSON.parse(listed);
    if (!memories.some((memory) => /green tea/i.test(memory.content))) throw new Error(`memloom list --user alice does not show the preference the agent saved:\n${listed}`);
    const exported = await run(`${name}: memloom export`, [bin, ['export', '-o', 'backup.jsonl']], { cwd: app, log: `${name}-cli-export` });
    await run(`${name}: memloom import`, [bin, ['import', 'backup.jsonl', '--store', 'markdown:./markdown-copy']], { cwd: app, log: `${name}-cli-import` });
    step(`${name} app: the packed memloom CLI lists what the agent saved (${memories.length} ${memories.length === 1 ? 'memory' : 'memories'}); ${exported.trim()}, imported into Markdown`);
  }
}

/**
 * tsc over the app with every .d.ts checked. Errors in our sources or our
 * packed declarations fail the check; errors inside the frameworks' own
 * declarations (llamaindex 0.12 ships some) are counted and left to them.
 */
async function typeCheck(name, app) {
  try {
    await run(`${name}: tsc`, [join(app, 'node_modules', '.bin', 'tsc'), ['-p', '.']], { cwd: app, log: `${name}-tsc` });
    return;
  } catch (error) {
    const log = readFileSync(join(work, 'logs', `${name}-tsc.log`), 'utf8');
    const errors = log.split('\n').filter((line) => /^\S+\(\d+,\d+\): error TS/.test(line));
    const ours = errors.filter((line) => /^(src\/|node_modules\/(@memloom\/|memloom\/))/.test(line));
    if (ours.length > 0 || errors.length === 0) throw error;
    // tsc still wrote the JavaScript: noEmitOnError is off.
    if (!existsSync(join(app, 'dist', 'agent.js'))) throw error;
    step(`${name} app: tsc: our code and declarations are clean; ${errors.length} errors inside third-party declarations left to them`);
  }
}

async function checkTarball(pkg) {
  const files = new Set((await run(`list ${pkg.tarball}`, ['tar', ['-tzf', pkg.tarball]], { cwd: work })).split('\n').filter(Boolean).map((file) => file.replace(/^package\//, '')));
  const manifest = JSON.parse(await run(`read ${pkg.name}'s packed package.json`, ['tar', ['-xzOf', pkg.tarball, 'package/package.json']], { cwd: work }));
  const problems = [];
  for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies', 'devDependencies']) {
    for (const [dep, range] of Object.entries(manifest[field] ?? {})) {
      if (String(range).startsWith('workspace:')) problems.push(`${field}.${dep} is still ${range}`);
    }
  }
  const wanted = new Set(['README.md', 'LICENSE', 'package.json']);
  const collect = (value) => {
    if (typeof value === 'string') wanted.add(value.replace(/^\.\//, ''));
    else if (value && typeof value === 'object') Object.values(value).forEach(collect);
  };
  collect(manifest.exports);
  collect(manifest.bin);
  if (manifest.main) wanted.add(manifest.main.replace(/^\.\//, ''));
  if (manifest.types) wanted.add(manifest.types.replace(/^\.\//, ''));
  for (const file of wanted) if (!files.has(file)) problems.push(`${file} is named in package.json but not in the tarball`);
  for (const file of files) if (/(^|\/)(test|src)\//.test(file) || file.endsWith('.test.js')) problems.push(`${file} should not be published`);
  if (manifest.private) problems.push('the package is private');
  if (!manifest.license || !manifest.description) problems.push('license and description are required');
  if (problems.length > 0) throw new Error(`${pkg.name}'s tarball:\n  - ${problems.join('\n  - ')}`);
}

function publicPackages() {
  return readdirSync(join(ROOT, 'packages'))
    .map((folder) => join(ROOT, 'packages', folder))
    .filter((dir) => existsSync(join(dir, 'package.json')))
    .map((dir) => ({ dir, ...JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) }))
    .filter((pkg) => !pkg.private)
    .map((pkg) => ({ dir: pkg.dir, name: pkg.name, version: pkg.version, slug: pkg.name.replace(/^@/, '').replace('/', '-') }));
}

/** Run a command with a clean environment; resolve with stdout, reject with the log's tail. */
function run(label, [command, commandArgs], { cwd, log, timeoutMs = 5 * 60_000 }) {
  return new Promise((resolvePromise, reject) => {
    const logPath = log ? join(work, 'logs', `${log}.log`) : undefined;
    if (logPath) mkdirSync(dirname(logPath), { recursive: true });
    const logStream = logPath ? createWriteStream(logPath) : undefined;
    const child = spawn(command, commandArgs, { cwd, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let output = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      output += chunk;
      logStream?.write(chunk);
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
      logStream?.write(chunk);
    });
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 5000).unref();
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`${label}: cannot run ${command}: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      logStream?.end();
      if (code === 0) return resolvePromise(stdout);
      const why = signal ? `stopped after ${seconds(timeoutMs)} (timeout)` : `exit ${code}`;
      const tail = output.trim().split('\n').slice(-40).join('\n    ');
      reject(new Error(`${label}: ${why}${logPath ? ` (log: ${logPath})` : ''}\n    ${tail}`));
    });
  });
}

/**
 * The environment of a user's shell: without the npm_* / pnpm variables that
 * `pnpm release:check` sets (they would carry the workspace's settings into
 * npm), and with Node's headers for node-gyp where the machine has them
 * (better-sqlite3 cannot download its prebuilt binary here).
 */
function cleanEnv() {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(npm_|pnpm_|PNPM_|INIT_CWD$|MEMLOOM_|NODE_PATH$)/.test(key)) continue;
    env[key] = value;
  }
  if (process.env.npm_config_nodedir) env.npm_config_nodedir = process.env.npm_config_nodedir;
  else if (existsSync('/usr/include/node/node.h')) env.npm_config_nodedir = '/usr';
  if (process.env.npm_config_cache) env.npm_config_cache = process.env.npm_config_cache;
  return env;
}

function pnpmBin() {
  return process.platform === 'win32' ? 'pnpm.cmd' : 'pnpm';
}

function lastLine(text) {
  return text.trim().split('\n').at(-1) ?? '';
}

function step(text) {
  console.log(`[${seconds(performance.now() - started).padStart(6)}] ${text}`);
}

function seconds(ms) {
  return `${(ms / 1000).toFixed(1)} s`;
}

function fail(message) {
  throw new Error(message);
}
