/**
 * What every peer benchmark (`pnpm bench locomo`, `pnpm bench latency`)
 * stamps on its results: the machine and how busy it was, the versions and
 * installed sizes of what was measured, and a file under bench/results/.
 * Also the small helpers they share: options, percentiles, tables, workers.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const benchDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const repoRoot = resolve(benchDir, '..');

/** A path as a results file may show it: relative to the repository (with `..` when outside it), never the machine's absolute path. */
export function displayPath(path: string): string {
  return relative(repoRoot, path).split(sep).join('/') || '.';
}

/** `--name value` from an argument list. */
export function option(args: readonly string[], name: string): string | undefined {
  const index = args.indexOf(name);
  return index >= 0 ? args[index + 1] : undefined;
}

/**
 * The LoCoMo folder: `--data` when given (relative to the directory `pnpm bench` was run from),
 * else `shared/data/locomo` beside the repository, or beside the folder holding work trees.
 */
export function locomoDir(args: readonly string[]): string {
  const given = option(args, '--data');
  if (given) return resolve(process.env.INIT_CWD ?? process.cwd(), given);
  const candidates = [join(repoRoot, '..', 'shared', 'data', 'locomo'), join(repoRoot, '..', '..', 'shared', 'data', 'locomo')];
  return candidates.find((dir) => existsSync(dir)) ?? (candidates[0] as string);
}

export interface MachineFacts {
  cores: number;
  cpu: string | undefined;
  ramGiB: number;
  node: string;
  platform: string;
  /** 1-minute load average when the run started and when it ended: other work on the same cores skews every timing. */
  loadAverage1mBeforeAfter: [number, number];
}

export function machineFacts(loadBefore: number): MachineFacts {
  return {
    cores: cpus().length,
    cpu: cpus()[0]?.model,
    ramGiB: Math.round(totalmem() / 1024 ** 3),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    loadAverage1mBeforeAfter: [round(loadBefore, 2), round(loadavg()[0] as number, 2)],
  };
}

export interface GitFacts {
  /** Short sha of the checked-out commit; null outside a git checkout. */
  commit: string | null;
  /**
   * Whether the working tree differed from that commit (changed, staged or new
   * files; result files under bench/results/ aside), so that the code measured
   * is not exactly the commit's. null when git could not say.
   */
  dirty: boolean | null;
}

/** The commit the benchmark runs from, and whether the tree was dirty: call it when the run starts. */
export function gitFacts(): GitFacts {
  const git = (...gitArgs: string[]) => spawnSync('git', gitArgs, { cwd: repoRoot, encoding: 'utf8' });
  const head = git('rev-parse', '--short', 'HEAD');
  if (head.status !== 0 || !head.stdout) return { commit: null, dirty: null };
  const status = git('status', '--porcelain', '--', '.', ':(exclude)bench/results');
  return { commit: head.stdout.trim(), dirty: status.status === 0 ? status.stdout.trim() !== '' : null };
}

/** `a5488b7`, `a5488b7 + uncommitted changes`, or why there is no commit. */
export function describeGit(facts: GitFacts): string {
  if (facts.commit === null) return 'not a git checkout';
  return facts.dirty === false ? facts.commit : `${facts.commit} + ${facts.dirty ? 'uncommitted changes' : 'unknown changes'}`;
}

export interface PackageFact {
  version: string;
  /** The package's own files (for workspace packages: dist, package.json, README). */
  ownMb: number;
  /** The package with its dependencies and required peers, each counted once: what an install costs. */
  withDependenciesMb: number;
}

/** Versions and installed sizes of packages as bench/ resolves them. */
export function packageFacts(names: readonly string[]): Record<string, PackageFact> {
  const facts: Record<string, PackageFact> = {};
  for (const name of names) {
    const dir = resolvePackage(join(benchDir, 'package.json'), name);
    if (!dir) continue;
    const manifest = readManifest(dir);
    const seen = new Set<string>();
    facts[name] = {
      version: manifest.version ?? '?',
      ownMb: round(packageSize(dir) / 1024 ** 2, 2),
      withDependenciesMb: round(closureSize(dir, seen) / 1024 ** 2, 1),
    };
  }
  return facts;
}

/**
 * Start a benchmark run: its start time and code (`started`, `git`), and the load on the machine
 * now, for `stamp`, which gives the fields every results file opens with (name, date, the command
 * that ran it, code, machine and its load before and after, `packages` as the benchmark lists them).
 */
export function startRun(benchmark: string, args: readonly string[]) {
  const started = new Date();
  const loadBefore = loadavg()[0] as number;
  const git = gitFacts();
  const stamp = <Packages>(packages: Packages) => ({
    benchmark,
    date: started.toISOString(),
    command: `pnpm bench ${benchmark} ${args.join(' ')}`.trim(),
    git,
    machine: machineFacts(loadBefore),
    packages,
  });
  return { started, git, stamp };
}

/** Write `<name>-<date>.json` under bench/results/ and return its path relative to the repository. */
export function writeResults(name: string, date: Date, report: unknown): string {
  const dir = join(benchDir, 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}-${date.toISOString().slice(0, 19).replaceAll(':', '-')}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return displayPath(file);
}

/** Run this bench file again in a child process (`--worker ...`) and read the JSON line it prints last. */
export function runWorker(script: string, args: readonly string[], env: Record<string, string> = {}): { ok: true; value: unknown } | { ok: false; error: string } {
  const child = spawnSync(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: benchDir,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, ...env },
  });
  const lastLine = child.stdout?.trim().split('\n').at(-1);
  if (child.status === 0 && lastLine) {
    try {
      return { ok: true, value: JSON.parse(lastLine) };
    } catch {
      // fall through to the error below
    }
  }
  const tail = (child.stderr ?? '').trim().split('\n').slice(-6).join(' | ');
  return { ok: false, error: `worker exited with ${child.status ?? child.signal}: ${tail || 'no output'}` };
}

export interface Percentiles {
  p50: number;
  p95: number;
  /** Samples measured. */
  n: number;
}

/** Nearest-rank percentiles of millisecond samples, rounded to 0.01 ms. */
export function percentiles(samples: readonly number[]): Percentiles {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (share: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(share * sorted.length) - 1))] ?? Number.NaN;
  return { p50: round(at(0.5), 2), p95: round(at(0.95), 2), n: sorted.length };
}

export function round(value: number, digits = 2): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** Left-aligned columns. */
export function printTable(rows: readonly (readonly (string | number | undefined)[])[]): void {
  const widths = (rows[0] ?? []).map((_, column) => Math.max(...rows.map((row) => String(row[column] ?? '').length)));
  for (const row of rows) console.log(row.map((cell, column) => String(cell ?? '').padEnd(widths[column] ?? 0)).join('  ').trimEnd());
}

// ---------------------------------------------------------------------------

interface Manifest {
  version?: string;
  files?: string[];
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

function readManifest(dir: string): Manifest {
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
}

/** Node's lookup: `<ancestor>/node_modules/<name>` from the requiring package's folder upwards; the real path. */
function resolvePackage(fromManifest: string, name: string): string | undefined {
  let dir = dirname(fromManifest);
  for (;;) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return realpathSync(candidate);
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

function closureSize(dir: string, seen: Set<string>): number {
  if (seen.has(dir)) return 0;
  seen.add(dir);
  let total = packageSize(dir);
  const manifest = readManifest(dir);
  const requiredPeers = Object.keys(manifest.peerDependencies ?? {}).filter((peer) => !manifest.peerDependenciesMeta?.[peer]?.optional);
  for (const dependency of [...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.optionalDependencies ?? {}), ...requiredPeers]) {
    const resolved = resolvePackage(join(dir, 'package.json'), dependency);
    if (resolved) total += closureSize(resolved, seen);
  }
  return total;
}

/** A package's files, without nested node_modules; for our workspace packages only what is published. */
function packageSize(dir: string): number {
  if (!dir.startsWith(join(repoRoot, 'packages'))) return treeSize(dir);
  // A workspace package counts what it publishes: its `files` entries (a folder, a file or
  // `folder/*.ext`), package.json, README and LICENSE, as npm packs them.
  const manifest = readManifest(dir);
  const entries = new Set(['package.json', 'README.md', 'LICENSE', ...(manifest.files ?? ['dist'])]);
  let total = 0;
  for (const entry of entries) {
    const star = entry.indexOf('*');
    if (star === -1) {
      if (existsSync(join(dir, entry))) total += treeSize(join(dir, entry));
      continue;
    }
    const folder = join(dir, dirname(entry));
    const suffix = entry.slice(star + 1);
    if (!existsSync(folder)) continue;
    for (const name of readdirSync(folder)) if (name.endsWith(suffix)) total += treeSize(join(folder, name));
  }
  return total;
}

function treeSize(path: string): number {
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) return 0;
  if (!stat.isDirectory()) return stat.size;
  let total = 0;
  for (const entry of readdirSync(path)) {
    if (entry === 'node_modules') continue;
    total += treeSize(join(path, entry));
  }
  return total;
}
