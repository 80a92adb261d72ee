import { describe, expect, it } from 'vitest';
import {
  ageString,
  DEFAULT_FRESHNESS,
  freshnessConfigSchema,
  freshnessNote,
  freshnessThresholdMs,
  indexAnnotation,
  shouldWarn,
  truncateIndex,
} from '../src/index.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const now = Date.parse('2024-06-01T12:00:00.000Z');

describe('seed 000 thresholds', () => {
  it('defaults to 24 hours for every type', () => {
    const config = freshnessConfigSchema.parse({});
    expect(freshnessThresholdMs('user', config)).toBe(24 * HOUR);
    expect(freshnessThresholdMs('project', config)).toBe(24 * HOUR);
  });

  it('exports DEFAULT_FRESHNESS equal to the schema default, 24 hours (P-F02)', () => {
    expect(DEFAULT_FRESHNESS).toEqual(freshnessConfigSchema.parse({}));
    expect(DEFAULT_FRESHNESS.globalThresholdHours).toBe(24);
  });

  it('lets a type override the global threshold', () => {
    const config = freshnessConfigSchema.parse({ globalThresholdHours: 24, typeOverrides: { project: 12, user: 168 } });
    expect(freshnessThresholdMs('project', config)).toBe(12 * HOUR);
    expect(freshnessThresholdMs('user', config)).toBe(168 * HOUR);
    expect(freshnessThresholdMs('reference', config)).toBe(24 * HOUR);
  });

  it('warns at and past the threshold, not before', () => {
    expect(shouldWarn(now - 24 * HOUR, 24 * HOUR, now)).toBe(true);
    expect(shouldWarn(now - 24 * HOUR + 1, 24 * HOUR, now)).toBe(false);
  });

  it('always warns at threshold 0, even for a memory written this instant', () => {
    expect(shouldWarn(now, 0, now)).toBe(true);
  });

  it('warns at threshold 0 even for a memory updated slightly in the future (P-F03)', () => {
    expect(shouldWarn(now + MINUTE, 0, now)).toBe(true);
  });

  it('never warns without a config, or without a timestamp', () => {
    expect(shouldWarn(now - 400 * DAY, undefined, now)).toBe(false);
    expect(shouldWarn(undefined, 0, now)).toBe(false);
    expect(freshnessNote(now - 400 * DAY, undefined, now)).toBe('');
    expect(indexAnnotation(now - 400 * DAY, undefined, now)).toBe('');
  });
});

describe('seed 000 age strings', () => {
  it('uses minutes under 2 hours', () => {
    expect(ageString(0)).toBe('1 minute');
    expect(ageString(90 * 1000)).toBe('1 minute');
    expect(ageString(45 * MINUTE)).toBe('45 minutes');
    expect(ageString(2 * HOUR - 1)).toBe('119 minutes');
  });

  it('uses hours from 2 to 48 hours', () => {
    expect(ageString(2 * HOUR)).toBe('2 hours');
    expect(ageString(25 * HOUR)).toBe('25 hours');
    expect(ageString(48 * HOUR - 1)).toBe('47 hours');
  });

  it('uses days from 48 hours on', () => {
    expect(ageString(48 * HOUR)).toBe('2 days');
    expect(ageString(10 * DAY + 5 * HOUR)).toBe('10 days');
  });
});

describe('seed 000 warning note and index annotation', () => {
  it('wraps the warning in a system reminder with age, meaning and advice', () => {
    const note = freshnessNote(now - 3 * DAY, 24 * HOUR, now);
    expect(note).toBe(
      '<system-reminder>\nThis memory is 3 days old. Memories are point-in-time observations and may no longer reflect current state. ' +
        'Please verify with current context (re-read files, re-check configuration) before acting on this information.\n</system-reminder>',
    );
    expect(freshnessNote(now - HOUR, 24 * HOUR, now)).toBe('');
  });

  it('annotates stale index lines with a leading space', () => {
    expect(indexAnnotation(now - 6 * HOUR, 2 * HOUR, now)).toBe(' _(last updated 6 hours ago)_');
    expect(indexAnnotation(now - 6 * HOUR, 24 * HOUR, now)).toBe('');
  });
});

describe('seed 000 index truncation at 200 lines / 25 KB', () => {
  it('leaves a small index alone', () => {
    const content = '# MEMORY.md\n\n- one\n- two\n';
    expect(truncateIndex(content)).toEqual({ content, truncated: false });
  });

  it('keeps exactly 200 lines (a final newline is not a line)', () => {
    const content = `${Array.from({ length: 200 }, (_, index) => `- line ${index}`).join('\n')}\n`;
    expect(truncateIndex(content).truncated).toBe(false);
  });

  it('cuts at 200 lines with a warning that says so', () => {
    const content = Array.from({ length: 250 }, (_, index) => `- line ${index}`).join('\n');
    const result = truncateIndex(content);
    expect(result.truncated).toBe(true);
    expect(result.limit).toBe('lines');
    const [body, warning] = result.content.split('\n\n> ');
    expect(body!.split('\n')).toHaveLength(200);
    expect(body!.split('\n').at(-1)).toBe('- line 199');
    expect(warning).toBe(
      '**WARNING**: MEMORY.md has been truncated (exceeded 200 lines). Some memories are not shown. Use List/Read tools to access the full memory store.',
    );
  });

  it('cuts at 25 KB on a line boundary when lines are long', () => {
    const line = `- ${'x'.repeat(498)}`; // 500 bytes + newline
    const content = Array.from({ length: 100 }, () => line).join('\n');
    const result = truncateIndex(content);
    expect(result.limit).toBe('bytes');
    const body = result.content.split('\n\n> ')[0]!;
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(25 * 1024);
    expect(body.split('\n').every((kept) => kept === line)).toBe(true);
    expect(body.split('\n')).toHaveLength(51); // 51 × 501 bytes = 25,551 ≤ 25,600
    expect(result.content).toContain('(exceeded 25KB)');
  });

  it('keeps an index of exactly 25 KB (25,600 bytes) and cuts it one line later (P-F13)', () => {
    const line = `- ${'x'.repeat(509)}`; // 511 bytes + newline
    const content = `${Array.from({ length: 50 }, () => line).join('\n')}\n`; // 50 × 512 bytes = 25,600
    expect(Buffer.byteLength(content)).toBe(25 * 1024);
    expect(truncateIndex(content)).toEqual({ content, truncated: false });
    const over = truncateIndex(`${content}y\n`);
    expect(over.truncated).toBe(true);
    expect(over.limit).toBe('bytes');
  });

  it('counts bytes, not characters, for Chinese text', () => {
    const line = `- ${'记'.repeat(100)}`; // 302 bytes in UTF-8
    const content = Array.from({ length: 150 }, () => line).join('\n');
    const result = truncateIndex(content);
    expect(result.limit).toBe('bytes');
    expect(Buffer.byteLength(result.content.split('\n\n> ')[0]!)).toBeLessThanOrEqual(25 * 1024);
  });
});
