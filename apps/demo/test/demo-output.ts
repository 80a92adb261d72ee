import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Reads the demo's printed story back as data (decisions, memories, reports), so a test checks
// strategies, levels and contents, not the wording of a reason.

const DEMO = join(fileURLToPath(new URL('..', import.meta.url)), 'dist', 'main.js');

export interface DemoRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The built demo, run as `node dist/main.js`, without any of the caller's MEMLOOM_* variables (part 2 sets its own). */
export async function runDemo(): Promise<DemoRun> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('MEMLOOM_')));
  const child = spawn(process.execPath, [DEMO], { cwd: join(DEMO, '..', '..'), env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

/** Lines that start a part of the demo's output (see main.ts, configured.ts and story.ts). */
const HEADINGS = ['Day ', 'Another user', 'MEMORY.md for', 'History of', 'Part 2:', '$ node configured.js', 'What the Markdown run'];

/** The lines under the first heading that starts with `heading`, up to the next heading. */
export function section(output: string, heading: string): string {
  const lines = output.split('\n');
  const start = lines.findIndex((line) => line.startsWith(heading));
  if (start < 0) throw new Error(`the demo printed no heading starting with ${JSON.stringify(heading)}`);
  const end = lines.findIndex((line, index) => index > start && HEADINGS.some((prefix) => line.startsWith(prefix)));
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

export interface PrintedDecision {
  said: string;
  strategy: string;
  similarity: number;
}

/** What each "… says" / "… answers" line decided (print.ts `printDecision`). */
export function decisions(text: string): PrintedDecision[] {
  return [...text.matchAll(/^ {2}.+? (?:says|answers) (".*")\n {4}-> (\S+) \(similarity (-?\d+\.\d+)\)/gm)].map((match) => ({
    said: JSON.parse(match[1]!) as string,
    strategy: match[2]!,
    similarity: Number(match[3]),
  }));
}

/** The memory a merge left (print.ts: "memory now [level] content"), if the text shows one. */
export function merged(text: string): { level: string; content: string } | undefined {
  const match = /-> memory now \[(\w+)\] (.*)$/m.exec(text);
  return match ? { level: match[1]!, content: match[2]! } : undefined;
}

export interface PrintedMemory {
  level: string;
  weight: number;
  updated: string;
  content: string;
}

/** The memories listed (print.ts `printMemories`). */
export function memories(text: string): PrintedMemory[] {
  return [...text.matchAll(/^ {4}\[(\w+) *\] w=(\d+\.\d+) updated (\S+) {2}(.*)$/gm)].map((match) => ({
    level: match[1]!,
    weight: Number(match[2]),
    updated: match[3]!,
    content: match[4]!,
  }));
}

/** The counts of a maintenance pass (print.ts `printReport`). */
export function report(text: string): { compressed: number; decayed: number; deleted: number } {
  const match = /maintain @ \S+: (\d+) compressed, (\d+) decayed, (\d+) deleted/.exec(text);
  if (!match) throw new Error(`no maintenance report in:\n${text}`);
  return { compressed: Number(match[1]), decayed: Number(match[2]), deleted: Number(match[3]) };
}

/** What a search line found (configured.ts, main.ts: `search "query" -> content (…)`). */
export function found(text: string, query: string): string | undefined {
  const line = text.split('\n').find((candidate) => candidate.trimStart().startsWith(`search ${JSON.stringify(query)} -> `));
  return line?.slice(line.indexOf(' -> ') + 4).replace(/ \((?:score|its context)\b.*\)$/, '');
}

/** The memory blocks of a printed MEMORY.md written by the Markdown store: their memloom line and text. */
export function markdownBlocks(text: string): { meta: Record<string, unknown>; content: string }[] {
  return [...text.matchAll(/^<!-- memloom (\{.*\}) -->\n(.*)$/gm)].map((match) => ({
    meta: JSON.parse(match[1]!) as Record<string, unknown>,
    content: match[2]!,
  }));
}
