/**
 * A date written with numbers at the start of a text (after any spaces: `2024-02-30`,
 * `+002024-02-30`, `2024/02/30`), and the hour after it when there is one (after `T`, `t` or
 * spaces), in the forms `Date.parse` reads.
 */
const DATE_START = /^\s*([+-]\d{6}|\d{4})[-/](\d{1,2})[-/](\d{1,2})(?:(?:[Tt]|\s+)(\d{1,2}))?/u;

/** Days in each month of a common year. */
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;

/**
 * Whether a text written as an ISO 8601 date or time (`2024-03-02`,
 * `2024-03-02T09:14:00Z`) names a day the calendar has, and an hour below 24.
 * `Date.parse` does not check: it reads 2024-02-30 as March 1, 2023-02-29 as
 * March 1 and T24:00 as the next midnight, so a mistyped date would be taken
 * in shifted, without a word. A text that does not start with a date in
 * numbers (`Feb 30 2024`) is not judged here (true): whether it is a time at
 * all is `Date.parse`'s call.
 */
export function isOnCalendar(text: string): boolean {
  const match = DATE_START.exec(text);
  if (!match) return true;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = month === 2 && leap ? 29 : (MONTH_DAYS[month - 1] as number);
  return day <= days && (match[4] === undefined || Number(match[4]) < 24);
}

/** ISO 8601 as core writes times: `2024-03-02T09:14:00.000Z`, seconds and fraction optional, `Z` or an offset. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})$/u;

/** Whether `value` is an ISO 8601 time as core writes them, on a day the calendar has. */
export function isIsoTime(value: unknown): value is string {
  return typeof value === 'string' && ISO_TIME.test(value) && isOnCalendar(value) && Number.isFinite(Date.parse(value));
}

/** The later of two ISO times (the first on a tie). */
export function laterIso(a: string, b: string): string {
  return Date.parse(b) > Date.parse(a) ? b : a;
}
