import { isIsoTime, isOnCalendar } from '@memloom/core';

/**
 * Values that the files hold as text, checked where they come in (a put, a
 * file read back), so the store never takes in a value it would read back
 * as another one.
 */

const DAY = /^\d{4}-\d{2}-\d{2}$/u;

/** `YYYY-MM-DD` naming a day the calendar has: not 2024-02-30, 2023-02-29 or 2024-13-01. */
export function isCalendarDay(text: string): boolean {
  return DAY.test(text) && isOnCalendar(text);
}

/**
 * A time as the files hold it: ISO 8601 with `Z` or an offset
 * (`2024-03-02T09:14:00.000Z`, `2024-03-02T11:14+02:00`) on a day the
 * calendar has, before hour 24 (core's `isIsoTime`). `Date.parse` alone reads
 * 2024-02-30 as March 1, and a time without an offset (`2024-03-02T09:14`) as
 * the machine's local time, so a date a person typed would be taken in
 * shifted, or differently on another machine, without a word.
 */
export function isFileTime(value: string): boolean {
  return isIsoTime(value);
}
