import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { hasLoneSurrogate, SCOPE_KEYS, scopeEntries, type Scope, type ScopeKey } from '@memloom/core';
import { isMissing, writeFileAtomic, type Durability } from './atomic-file.js';
import { BACKEND, storeError } from './errors.js';

/** Folder that holds the values of each scope field, in nesting order. */
const KIND_FOLDERS: Record<ScopeKey, string> = { userId: 'users', agentId: 'agents', sessionId: 'sessions' };

/**
 * Windows device names ("nul", "com1", also with an extension: "aux.team"): Windows opens the device
 * instead of a folder so named, whatever the folder it is in. Once encoded only a lowercase name can be
 * one (capitals, `$` and superscript digits are `%XX` already), so `scopeSegment` %-encodes its first letter.
 */
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\.|$)/u;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/u;
/** Longest encoded folder name kept readable; longer values get a hashed name. */
const MAX_ENCODED = 96;
/** File inside a hashed folder that holds the scope value it stands for. */
export const SCOPE_VALUE_FILE = '.scope-value';

/**
 * Check one scope value before it becomes a folder name. Refused with INVALID_SCOPE: a blank value,
 * a control character (as core's `validateScope` refuses it) and a lone surrogate (it has no UTF-8
 * form: two of them would share a folder). Everything else, `..`, `/etc`, `C:`, `con` included, is
 * encoded by `scopeSegment` into one portable folder name.
 */
export function assertSafeScopeValue(key: string, value: unknown): asserts value is string {
  const refuse = (why: string) => {
    throw storeError('INVALID_SCOPE', `scope.${key} ${why}`, { field: key });
  };
  if (typeof value !== 'string' || value.trim() === '') refuse('must be a non-empty string');
  const text = value as string;
  if (CONTROL.test(text)) refuse('holds a control character (core\'s validateScope refuses it too)');
  if (hasLoneSurrogate(text)) {
    refuse('holds a lone surrogate (half of a UTF-16 pair): it has no UTF-8 form, so in a folder name it would become U+FFFD and two values would share a folder');
  }
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
 * Encode a value (a memory id, a scope value) as one file or folder name. Lowercase ASCII letters,
 * digits, `-`, `_` and inner dots stay as they are; every other byte becomes `%XX` (uppercase hex),
 * so two different values never share a name, even on a case-insensitive filesystem ("ALICE" is
 * `%41%4C%49%43%45`, "alice" is `alice`), and no name is `.`, `..`, ends in a dot or a space, or
 * holds `/`, `\`, `:` or a byte that is not ASCII. Long values get `~` + a hash, with the value
 * kept in a file. Scope folders are named by `scopeSegment`, which also steers clear of Windows
 * device names.
 */
export function encodeSegment(value: string): string {
  return fitLength(value, encodeBytes(value));
}

/**
 * A scope value's folder name: `encodeSegment`, with the first letter of a Windows device name
 * %-encoded too ("nul" is `%6Eul`, "aux.team" is `%61ux.team`). Every other value keeps the name
 * `encodeSegment` gives it, the one earlier versions wrote.
 */
export function scopeSegment(value: string): string {
  const encoded = encodeBytes(value);
  const portable = WINDOWS_DEVICE.test(encoded) ? `%${encoded.charCodeAt(0).toString(16).toUpperCase()}${encoded.slice(1)}` : encoded;
  return fitLength(value, portable);
}

function encodeBytes(value: string): string {
  let encoded = '';
  const bytes = Buffer.from(value, 'utf8');
  for (let index = 0; index < bytes.length; index++) {
    const byte = bytes[index] as number;
    const char = String.fromCharCode(byte);
    const plain = /[a-z0-9_-]/u.test(char) || (char === '.' && index > 0 && index < bytes.length - 1);
    encoded += plain ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return encoded;
}

function fitLength(value: string, encoded: string): string {
  if (encoded.length <= MAX_ENCODED) return encoded;
  const hash = createHash('sha256').update(value, 'utf8').digest('hex').slice(0, 24);
  const prefix = encoded.slice(0, 48).replace(/%[0-9A-F]?$/u, '');
  return `~${prefix}~${hash}`;
}

/** Reverse of encodeSegment for readable names; undefined for hashed or foreign names. */
export function decodeSegment(name: string): string | undefined {
  return decodeWith(name, encodeSegment);
}

/** Reverse of scopeSegment for readable names; undefined for hashed or foreign names. */
export function decodeScopeSegment(name: string): string | undefined {
  return decodeWith(name, scopeSegment);
}

function decodeWith(name: string, encode: (value: string) => string): string | undefined {
  if (name.startsWith('~') || !/^(?:[a-z0-9_.-]|%[0-9A-F]{2})+$/u.test(name)) return undefined;
  try {
    const value = decodeURIComponent(name);
    return encode(value) === name ? value : undefined;
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
    parts.push(KIND_FOLDERS[key], scopeSegment(value));
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
    const segment = scopeSegment(value);
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

/** A folder of the layout that is a symbolic link (not followed), and whose memories may be behind it. */
export interface FoundLink {
  /** Absolute path of the link. */
  path: string;
  /** The scope its place names: `users/alice` and `users/alice/memory` alice's, `users` (or a hashed name) the scope it is in. */
  scope: Scope;
  /** The scope fields that scopes behind it may add to `scope`, with any value (none for a `memory/` folder). */
  innerKeys: ScopeKey[];
  /** For a value folder with a hashed name (`users/~…`): its field and name, which only one value has (see `mayHoldMemoriesOf`). */
  hashed?: HashedFolder;
}

/** A value folder with a hashed name: the field `key` it is a value of, and `name`, which `scopeSegment` gives one value alone. */
export interface HashedFolder {
  key: ScopeKey;
  name: string;
}

/**
 * Walk the root and return every scope folder that has a `memory/` folder.
 * Folders of the layout that are symbolic links are not followed; they go
 * to `links`, with the scope their place names. Synchronous on purpose: it
 * runs before reads, and a few hundred sync directory listings cost a
 * fraction of their promise-based equivalents.
 */
export function discoverScopes(root: string, links: FoundLink[] = []): FoundScope[] {
  const found: FoundScope[] = [];
  walk(root, {}, 0, found, links);
  return found;
}

function walk(directory: string, scope: Scope, depth: number, found: FoundScope[], links: FoundLink[]): void {
  const entries = readDirectory(directory);
  if (entries.folders.includes('memory')) found.push({ scope, directory: path.join(directory, 'memory') });
  if (entries.links.includes('memory')) links.push({ path: path.join(directory, 'memory'), scope, innerKeys: [] });
  for (const [index, key] of SCOPE_KEYS.entries()) {
    if (index < depth) continue;
    const kind = KIND_FOLDERS[key];
    const kindDirectory = path.join(directory, kind);
    // A linked `users/` may hold any user's scopes; a linked `users/alice` alice's, with the fields nested below userId.
    if (entries.links.includes(kind)) links.push({ path: kindDirectory, scope, innerKeys: SCOPE_KEYS.slice(index) });
    if (!entries.folders.includes(kind)) continue;
    const values = readDirectory(kindDirectory);
    for (const name of values.links) {
      // A hashed name does not tell its value (the value file is behind the link): only the value so named may be behind it.
      if (name.startsWith('~')) links.push({ path: path.join(kindDirectory, name), scope, innerKeys: SCOPE_KEYS.slice(index), hashed: { key, name } });
      const value = decodeScopeSegment(name);
      if (value !== undefined) links.push({ path: path.join(kindDirectory, name), scope: { ...scope, [key]: value }, innerKeys: SCOPE_KEYS.slice(index + 1) });
    }
    for (const name of values.folders) {
      const value = name.startsWith('~') ? readValueFile(path.join(kindDirectory, name, SCOPE_VALUE_FILE)) : decodeScopeSegment(name);
      // decodeScopeSegment gives only a value whose folder name this is; a hashed name is checked against its value file.
      if (value === undefined || (name.startsWith('~') && scopeSegment(value) !== name)) continue;
      walk(path.join(kindDirectory, name), { ...scope, [key]: value }, index + 1, found, links);
    }
  }
}

/**
 * Whether what is in a place of the layout (`scope`, and scopes that add `innerKeys` to it) may hold memories
 * of `query` as `list({ scope: query })` reads it: every field the query sets is the place's, or one it may add
 * (for a hashed folder's field, only with the value whose folder name it is).
 */
export function mayHoldMemoriesOf(scope: Scope, innerKeys: readonly ScopeKey[], query: Scope | undefined, hashed?: HashedFolder): boolean {
  if (!query) return true;
  return SCOPE_KEYS.every((key) => {
    const value = query[key];
    if (value === undefined) return true;
    if (scope[key] !== undefined) return scope[key] === value;
    return innerKeys.includes(key) && (hashed?.key !== key || scopeSegment(value) === hashed.name);
  });
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
