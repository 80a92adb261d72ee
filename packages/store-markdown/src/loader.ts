import { lstatSync, promises as fs, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { isMissing, readIfExists, signatureOf } from './atomic-file.js';
import { decodeAccessLog, decodeDeletions, decodeHistory, decodeVectorHeader, decodeVectorRecords, type LoggedVector, type VectorHeader } from './index-logs.js';
import { decodeSegment } from './scope-path.js';
import { accessFile, deletionFile, MEMORY_FILE, vectorFile, type ScopeState } from './world.js';

const MONTH = /^\d{6}$/u;
const DAY_FILE = /^\d{8}\.md$/u;

/**
 * The Markdown files of a scope (`MEMORY.md`, `YYYYMM/YYYYMMDD.md`) with
 * their signatures; a file, or a month folder (`YYYYMM`), that is a
 * symbolic link gets a link signature (see `isLinkSignature`) and is not
 * followed. Synchronous, like discoverScopes: it runs before reads.
 */
export function listMarkdownFiles(directory: string): Map<string, string> {
  const files = new Map<string, string>();
  let entries;
  try {
    entries = readdirSync(directory, { withFileTypes: true });
  } catch (error) {
    if (isMissing(error)) return files;
    throw error;
  }
  for (const entry of entries) {
    if (entry.name === MEMORY_FILE) {
      const signature = markdownSignature(path.join(directory, MEMORY_FILE));
      if (signature) files.set(MEMORY_FILE, signature);
    } else if (entry.isSymbolicLink() && MONTH.test(entry.name)) {
      const signature = markdownSignature(path.join(directory, entry.name));
      if (signature) files.set(entry.name, signature);
    } else if (entry.isDirectory() && MONTH.test(entry.name)) {
      let days: string[];
      try {
        days = readdirSync(path.join(directory, entry.name));
      } catch (error) {
        if (isMissing(error)) continue;
        throw error;
      }
      for (const day of days.sort()) {
        if (!DAY_FILE.test(day) || day.slice(0, 6) !== entry.name) continue;
        const signature = markdownSignature(path.join(directory, entry.name, day));
        if (signature) files.set(`${entry.name}/${day}`, signature);
      }
    }
  }
  return files;
}

/**
 * Files read before that are not in `listing` any more: deleted, unless
 * they are behind a month folder that is now a link, which is not looked
 * into (its notes are kept as they were read, like those of a linked file).
 */
export function goneFiles(listing: Map<string, string>, known: Map<string, { signature: string | undefined }>): string[] {
  return [...known].flatMap(([rel, { signature }]) => {
    if (listing.has(rel) || signature === undefined) return [];
    const folder = listing.get(rel.split('/')[0] as string);
    return folder !== undefined && isLinkSignature(folder) ? [] : [rel];
  });
}

/** MEMORY.md first, then daily notes by date: the order duplicates are resolved in. */
export function fileOrder(a: string, b: string): number {
  if (a === b) return 0;
  if (a === MEMORY_FILE) return -1;
  if (b === MEMORY_FILE) return 1;
  return a < b ? -1 : 1;
}

const LINK = 'link:';

/**
 * True for the signature of a Markdown file that is a symbolic link. Such a
 * file is reported as a problem and neither read nor written: writing
 * through it would replace the link with a plain file.
 */
export function isLinkSignature(signature: string): boolean {
  return signature.startsWith(LINK);
}

/** Signature of a Markdown file: of the link itself when it is one, undefined when it is not a file. */
function markdownSignature(file: string): string | undefined {
  try {
    const stat = lstatSync(file);
    if (stat.isSymbolicLink()) return `${LINK}${signatureOf(stat)}`;
    return stat.isFile() ? signatureOf(stat) : undefined;
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

/** Signature of a regular file, or undefined when there is none (synchronous: a single stat). */
export function statSignature(file: string): string | undefined {
  try {
    const stat = statSync(file);
    return stat.isFile() ? signatureOf(stat) : undefined;
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

/**
 * Bring a scope's vectors up to date with its vector log: read only the
 * appended tail when the file just grew, all of it otherwise. Vectors from
 * another embedder are dropped and the log marked for rewrite.
 */
export async function syncVectors(scope: ScopeState, expected: VectorHeader | undefined): Promise<boolean> {
  const file = vectorFile(scope);
  let stat;
  try {
    stat = await fs.stat(file);
  } catch (error) {
    if (!isMissing(error)) throw error;
    const had = scope.vectorSignature !== undefined;
    scope.vectors = new Map();
    scope.vectorRecords = -1;
    scope.vectorSignature = undefined;
    scope.vectorSize = 0;
    return had;
  }
  const signature = signatureOf(stat);
  if (signature === scope.vectorSignature) return false;
  const sameFile = scope.vectorSignature !== undefined && scope.vectorSignature.split(':')[0] === String(stat.ino) && stat.size > scope.vectorSize;
  if (sameFile && scope.vectorRecords >= 0 && expected) {
    const handle = await fs.open(file, 'r');
    try {
      const tail = Buffer.alloc(stat.size - scope.vectorSize);
      await handle.read(tail, 0, tail.length, scope.vectorSize);
      const { records, end } = decodeVectorRecords(tail, 0, expected.dimension, scope.vectors);
      scope.vectorRecords += records;
      scope.vectorSize += end;
      scope.vectorSignature = signature;
      return true;
    } finally {
      await handle.close();
    }
  }
  const data = await fs.readFile(file);
  const decoded = decodeVectorHeader(data);
  scope.vectorSignature = signature;
  if (!decoded || (expected && (decoded.header.embedderId !== expected.embedderId || decoded.header.dimension !== expected.dimension))) {
    scope.vectors = new Map();
    scope.vectorRecords = -1;
    scope.vectorSize = 0;
    return true;
  }
  const vectors = new Map<string, LoggedVector>();
  const { records, end } = decodeVectorRecords(data, decoded.offset, decoded.header.dimension, vectors);
  scope.vectors = vectors;
  scope.vectorRecords = records;
  scope.vectorSize = end;
  return true;
}

/** Load a scope's access log into the state. */
export async function loadAccess(scope: ScopeState): Promise<void> {
  const text = (await readIfExists(accessFile(scope))) ?? '';
  const { entries, lines } = decodeAccessLog(text);
  scope.access = entries;
  scope.accessLines = lines;
  scope.accessSignature = statSignature(accessFile(scope));
}

/** Load a scope's pending hand deletions into the state. */
export async function loadDeletions(scope: ScopeState): Promise<void> {
  const file = deletionFile(scope);
  scope.deletions = decodeDeletions((await readIfExists(file)) ?? '');
  scope.deletionSignature = statSignature(file);
}

/** Ids that have a history file in this scope. */
export async function historyIds(scope: ScopeState): Promise<string[]> {
  const directory = path.join(scope.directory, '.history');
  let names: string[];
  try {
    names = await fs.readdir(directory);
  } catch (error) {
    if (isMissing(error)) return [];
    throw error;
  }
  const ids: string[] = [];
  for (const name of names) {
    if (!name.endsWith('.jsonl') || name.startsWith('.')) continue;
    const stem = name.slice(0, -'.jsonl'.length);
    const id = decodeSegment(stem) ?? (await firstMemoryId(path.join(directory, name)));
    if (id !== undefined) ids.push(id);
  }
  return ids;
}

async function firstMemoryId(file: string): Promise<string | undefined> {
  const text = await readIfExists(file);
  const first = text ? decodeHistory(text).versions[0] : undefined;
  return typeof first?.memoryId === 'string' ? first.memoryId : undefined;
}
