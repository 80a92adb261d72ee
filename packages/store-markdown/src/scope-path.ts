import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { hasLoneSurrogate, SCOPE_KEYS, scopeEntries, type Scope, type ScopeKey } from '@memloom/core';
import { isMissing, writeFileAtomic, type Durability } from './atomic-file.js';
import { BACKEND, storeError } from './errors.js';

/** Folder that holds the values of each scope field, in nesting order. */
const KIND_FOLDERS: Record<ScopeKey, string> = { userId: 'users', agentId: 'agents', sessionId: 'sessions' };

/** Windows device names, refused with or without an extension ("con", "nul.txt", "COM1"). */
const RESERVED = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$|clock\$)$/iu;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/u;
/** Longest encoded folder name kept readable; longer values get a hashed name. */
const MAX_ENCODED = 96;
/** File inside a hashed folder that holds the scope value it stands for. */
export const SCOPE_VALUE_FILE = '.scope-value';

/**
 * Check one scope value before it becomes part of a path: path traversal,
 * absolute paths, control characters (NUL) and reserved device names are
 * refused with INVALID_SCOPE. Everything else is encoded by `encodeSegment`.
 */
export function assertSafeScopeValue(key: string, value: unknown): asserts value is string {
  const refuse = (why: string) => {
    throw storeError('INVALID_SCOPE', `scope.${key} ${why}; it cannot name a folder`, { field: key });
  };
  if (typeof value !== 'string' || value.trim() === '') refuse('must be a non-empty string');
  const text = value as string;
  if (CONTROL.test(text)) refuse('holds a control character');
  // UTF-8 turns it into U+FFFD, so two values would share a folder.
  if (hasLoneSurrogate(text)) refuse('holds a lone surrogate (half of a UTF-16 pair)');
  if (text === '.' || text === '..') refuse(`is "${text}"`);
  if (text.split(/[/\\]/u).some((segment) => segment === '..')) refuse('holds a ".." path segment');
  if (/^[/\\]/u.test(text) || /^[a-z]:/iu.test(text)) refuse('is an absolute path');
  const stem = text.split('.')[0]?.replace(/[ .]+$/u, '') ?? '';
  if (RESERVED.test(stem) || RESERVED.test(text.replace(/[ .]+$/u, ''))) refuse(`is a reserved device name ("${text}")`);
}

/**
 * Validate a whole scope for use as a folder: its shape as core's `validateScope` takes it
 * (`scopeEntries`: absent or `null` is the empty scope; only userId, agentId and sessionId), each
 * value given (`undefined` is left out) a safe folder name (`assertSafeScopeValue`; `null` is not).
 */
export function assertSafeScope(scope: unknown): Scope {
  const clean: Scope = {};
  for (const [key, value] of scopeEntries(scope, BACKEND)) {
    if (value === undefined) continue;
    assertSafeScopeValue(key, value);
    clean[key as ScopeKey] = value;
  }
  return clean;
}

/**
 * Encode a scope value as one folder name. Lowercase ASCII letters, digits,
 * `-`, `_` and inner dots stay as they are; every other byte becomes `%XX`
 * (uppercase hex), so two different values never share a folder, even on a
 * case-insensitive filesystem ("ALICE" is `%41%4C%49%43%45`, "alice" is
 * `alice`). Long values get `~` + a hash, with the value kept in a file.
 */
export function encodeSegment(value: string): string {
  let encoded = '';
  const bytes = Buffer.from(value, 'utf8');
  for (let index = 0; index < bytes.length; index++) {
    const byte = bytes[index] as number;
    const char = String.fromCharCode(byte);
    const plain = /[a-z0-9_-]/u.test(char) || (char === '.' && index > 0 && index < bytes.length - 1);
    encoded += plain ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  if (encoded.length <= MAX_ENCODED) return encoded;
  const hash = createHash('sha256').update(value, 'utf8').digest('hex').slice(0, 24);
  const prefix = encoded.slice(0, 48).replace(/%[0-9A-F]?$/u, '');
  return `~${prefix}~${hash}`;
}

/** Reverse of encodeSegment for readable names; undefined for hashed or foreign names. */
export function decodeSegment(name: string): string | undefined {
  if (name.startsWith('~') || !/^(?:[a-z0-9_.-]|%[0-9A-F]{2})+$/u.test(name)) return undefined;
  try {
    const value = decodeURIComponent(name);
    return encodeSegment(value) === name ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The scope's folder relative to the store root, e.g. `users/alice/sessions/s1` ("" for the empty scope). */
export function scopeFolder(scope: Scope): string {
  const parts: string[] = [];
  for (const key of SCOPE_KEYS) {
    const value = scope[key];
    if (value === undefined) continue;
    parts.push(KIND_FOLDERS[key], encodeSegment(value));
  }
  return parts.join('/');
}

/** The scope's `memory/` folder, absolute. */
export function memoryDirectory(root: string, scope: Scope): string {
  return path.join(root, scopeFolder(scope), 'memory');
}

/** Write the value files that hashed folder names need (idempotent, atomic). */
export async function writeScopeValueFiles(root: string, scope: Scope, durability: Durability): Promise<void> {
  let current = root;
  for (const key of SCOPE_KEYS) {
    const value = scope[key];
    if (value === undefined) continue;
    const segment = encodeSegment(value);
    current = path.join(current, KIND_FOLDERS[key], segment);
    const file = path.join(current, SCOPE_VALUE_FILE);
    if (segment.startsWith('~') && readValueFile(file) !== value) await writeFileAtomic(file, value, durability);
  }
}

export interface FoundScope {
  scope: Scope;
  /** Absolute `memory/` folder. */
  directory: string;
}

/**
 * Walk the root and return every scope folder that has a `memory/` folder.
 * Folders of the layout that are symbolic links are not followed; their
 * paths go to `links`. Synchronous on purpose: it runs before reads, and a
 * few hundred sync directory listings cost a fraction of their
 * promise-based equivalents.
 */
export function discoverScopes(root: string, links: string[] = []): FoundScope[] {
  const found: FoundScope[] = [];
  walk(root, {}, 0, found, links);
  return found;
}

function walk(directory: string, scope: Scope, depth: number, found: FoundScope[], links: string[]): void {
  const entries = readDirectory(directory);
  if (entries.folders.includes('memory')) found.push({ scope, directory: path.join(directory, 'memory') });
  if (entries.links.includes('memory')) links.push(path.join(directory, 'memory'));
  for (const [index, key] of SCOPE_KEYS.entries()) {
    if (index < depth) continue;
    const kind = KIND_FOLDERS[key];
    const kindDirectory = path.join(directory, kind);
    if (entries.links.includes(kind)) links.push(kindDirectory);
    if (!entries.folders.includes(kind)) continue;
    const values = readDirectory(kindDirectory);
    for (const name of values.links) if (name.startsWith('~') || decodeSegment(name) !== undefined) links.push(path.join(kindDirectory, name));
    for (const name of values.folders) {
      const value = name.startsWith('~') ? readValueFile(path.join(kindDirectory, name, SCOPE_VALUE_FILE)) : decodeSegment(name);
      if (value === undefined || encodeSegment(value) !== name) continue;
      walk(path.join(kindDirectory, name), { ...scope, [key]: value }, index + 1, found, links);
    }
  }
}

/** A scope value as memloom wrote it: read exactly (a value may itself start with U+FEFF, which is no byte order mark here). */
function readValueFile(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** The folders in `directory`, and apart from them its symbolic links (not followed). */
function readDirectory(directory: string): { folders: string[]; links: string[] } {
  try {
    const entries = readdirSync(directory, { withFileTypes: true });
    return {
      folders: entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name),
      links: entries.filter((entry) => entry.isSymbolicLink()).map((entry) => entry.name),
    };
  } catch (error) {
    if (isMissing(error)) return { folders: [], links: [] };
    throw error;
  }
}

/** A path under the store root, relative and with forward slashes, as messages show it. */
export function shownPath(root: string, file: string): string {
  return path.relative(root, file).split(path.sep).join('/');
}
