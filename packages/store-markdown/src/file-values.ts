import { isOnCalendar } from '@memloom/core';

/**
 * Values that the files hold as text, checked where they come in (a put, a
 * file read back), so the store never takes in a value it would read back
 * as another one.
 */

const DAY = /^\d{4}-\d{2}-\d{2}$/u;
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}/u;

/** `YYYY-MM-DD` naming a day the calendar has: not 2024-02-30, 2023-02-29 or 2024-13-01. */
export function isCalendarDay(text: string): boolean {
  return DAY.test(text) && isOnCalendar(text);
}

/**
 * A time as the files hold it: ISO 8601 (`2024-03-02T09:14:00.000Z`) on a
 * day the calendar has, before hour 24 (core's `isOnCalendar`): `Date.parse`
 * alone reads 2024-02-30 as March 1, so a date a person mistyped would be
 * taken in shifted, without a word.
 */
export function isFileTime(value: string): boolean {
  return TIME.test(value) && isOnCalendar(value) && !Number.isNaN(Date.parse(value));
}

/**
 * Half of a UTF-16 surrogate pair without its other half (a string cut in the
 * wrong place). With the `u` flag a whole pair is one code point, so only a
 * lone half matches.
 */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
const LONE_SURROGATES = /[\uD800-\uDFFF]/gu;

/** True when `text` holds a lone surrogate, which UTF-8 cannot hold: written to a file it reads back as U+FFFD. */
export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}

/** `text` as it reads back from a UTF-8 file: each lone surrogate becomes U+FFFD. */
export function asWrittenInUtf8(text: string): string {
  return text.replace(LONE_SURROGATES, '\uFFFD');
}
