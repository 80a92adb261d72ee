import type { FreshnessConfig } from './config.js';
import type { MemoryType } from './types.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/** Seed 000's default: warn about memories older than 24 hours. */
export const DEFAULT_FRESHNESS: FreshnessConfig = { globalThresholdHours: 24, typeOverrides: {} };

/** The warning threshold for a memory type, in milliseconds (type override, else the global one). */
export function freshnessThresholdMs(type: MemoryType, config: FreshnessConfig): number {
  return (config.typeOverrides[type] ?? config.globalThresholdHours) * HOUR_MS;
}

/**
 * Whether a memory last updated at `updatedAtMs` deserves a warning at
 * `nowMs`. A threshold of 0 always warns; no config (undefined) never does.
 */
export function shouldWarn(updatedAtMs: number | undefined, thresholdMs: number | undefined, nowMs: number): boolean {
  if (thresholdMs === undefined || updatedAtMs === undefined || !Number.isFinite(updatedAtMs)) return false;
  return thresholdMs === 0 || nowMs - updatedAtMs >= thresholdMs;
}

/** "45 minutes" under 2 hours, "6 hours" under 48 hours, then "3 days". */
export function ageString(ageMs: number): string {
  const age = Math.max(0, ageMs);
  if (age < 2 * HOUR_MS) {
    const minutes = Math.floor(age / MINUTE_MS);
    return minutes <= 1 ? '1 minute' : `${minutes} minutes`;
  }
  if (age < 48 * HOUR_MS) {
    const hours = Math.floor(age / HOUR_MS);
    return hours === 1 ? '1 hour' : `${hours} hours`;
  }
  const days = Math.floor(age / DAY_MS);
  return days === 1 ? '1 day' : `${days} days`;
}

/** The plain-language warning: how old, what that means, what to do. */
export function freshnessText(ageMs: number): string {
  return (
    `This memory is ${ageString(ageMs)} old. Memories are point-in-time observations and may no longer reflect current state. ` +
    'Please verify with current context (re-read files, re-check configuration) before acting on this information.'
  );
}

/**
 * The warning wrapped as a system reminder, or "" when no warning is due
 * (so it can be appended unconditionally).
 */
export function freshnessNote(updatedAtMs: number | undefined, thresholdMs: number | undefined, nowMs: number): string {
  if (!shouldWarn(updatedAtMs, thresholdMs, nowMs)) return '';
  return `<system-reminder>\n${freshnessText(nowMs - (updatedAtMs as number))}\n</system-reminder>`;
}

/** " _(last updated 3 days ago)_" for an index line (leading space included), or "". */
export function indexAnnotation(updatedAtMs: number | undefined, thresholdMs: number | undefined, nowMs: number): string {
  if (!shouldWarn(updatedAtMs, thresholdMs, nowMs)) return '';
  return ` _(last updated ${ageString(nowMs - (updatedAtMs as number))} ago)_`;
}

export const MAX_INDEX_LINES = 200;
export const MAX_INDEX_BYTES = 25 * 1024;

export interface TruncatedIndex {
  content: string;
  truncated: boolean;
  /** Which limit cut it: `lines`, `bytes`, or undefined when nothing was cut. */
  limit?: 'lines' | 'bytes';
}

/**
 * Cut an index at 200 lines or 25 KB (UTF-8), whichever comes first, on a
 * line boundary, and append a warning that says so.
 */
export function truncateIndex(content: string, maxLines = MAX_INDEX_LINES, maxBytes = MAX_INDEX_BYTES): TruncatedIndex {
  if (content === '') return { content, truncated: false };
  const encoder = new TextEncoder();
  const lines = content.split('\n');
  const kept: string[] = [];
  let bytes = 0;
  let limit: 'lines' | 'bytes' | undefined;
  for (const [index, line] of lines.entries()) {
    // A final newline does not start another line.
    if (index === lines.length - 1 && line === '') break;
    const lineBytes = encoder.encode(line).length + (index < lines.length - 1 ? 1 : 0);
    if (kept.length >= maxLines) {
      limit = 'lines';
      break;
    }
    if (bytes + lineBytes > maxBytes) {
      limit = 'bytes';
      break;
    }
    kept.push(line);
    bytes += lineBytes;
  }
  if (!limit) return { content, truncated: false };
  while (kept.length > 0 && kept[kept.length - 1] === '') kept.pop();
  const reason = limit === 'lines' ? `exceeded ${maxLines} lines` : `exceeded ${Math.round(maxBytes / 1024)}KB`;
  const warning =
    `\n\n> **WARNING**: MEMORY.md has been truncated (${reason}). ` +
    'Some memories are not shown. Use List/Read tools to access the full memory store.';
  return { content: kept.join('\n') + warning, truncated: true, limit };
}
