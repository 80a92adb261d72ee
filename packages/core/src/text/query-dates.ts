/** A span of time a query names, in epoch milliseconds: `fromMs` inclusive, `toMs` exclusive. */
export interface NamedPeriod {
  fromMs: number;
  toMs: number;
}

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const MONTH = `(${MONTHS.join('|')}|sept|${MONTHS.map((name) => name.slice(0, 3)).join('|')})\\.?`;
const DAY = '(\\d{1,2})(?:st|nd|rd|th)?';
/** Between a month (or day) and its year: `May 2023`, `May, 2023`, `May,2023`. */
const BEFORE_YEAR = '(?:, ?| )';
const YEAR = '(\\d{4})';
/**
 * Numbers glued to what comes before are not a date: a version (`v2023-05`, `1.2023-05`,
 * `api-version 2024-02-01`) or a longer number (`1-800-2023-05-11`).
 */
const NOT_GLUED = '(?<![\\dA-Za-z._-]|version[:= ]{0,2})';

/** How the query can name a day or a month, days first: each part of the query is read by the first form that matches it. */
const FORMS: ReadonlyArray<{ pattern: RegExp; read: (match: RegExpExecArray) => NamedPeriod | undefined }> = [
  // `3 May, 2023`, `3rd May 2023`, `1st of May 2023`
  {
    pattern: new RegExp(`\\b${DAY} (?:of )?${MONTH}${BEFORE_YEAR}${YEAR}\\b`, 'giu'),
    read: (match) => dayPeriod(Number(match[3]), monthIndex(match[2]!), Number(match[1])),
  },
  // `May 3, 2023`, `May 3rd 2023`
  {
    pattern: new RegExp(`\\b${MONTH} ${DAY}${BEFORE_YEAR}${YEAR}\\b`, 'giu'),
    read: (match) => dayPeriod(Number(match[3]), monthIndex(match[1]!), Number(match[2])),
  },
  // `2023-05-03`, `2023/5/3`, `2023年5月3日`
  {
    pattern: new RegExp(`${NOT_GLUED}(\\d{4})(?:[-/](\\d{1,2})[-/](\\d{1,2})|年(\\d{1,2})月(\\d{1,2})[日号號])(?!\\d)`, 'giu'),
    read: (match) => dayPeriod(Number(match[1]), Number(match[2] ?? match[4]) - 1, Number(match[3] ?? match[5])),
  },
  // `May 2023`, `May, 2023` (in `3 May, 2023`, already read as a day)
  {
    pattern: new RegExp(`\\b${MONTH}${BEFORE_YEAR}${YEAR}\\b`, 'giu'),
    read: (match) => monthPeriod(Number(match[2]), monthIndex(match[1]!)),
  },
  // `2023-05`, `2023年5月` (not followed by a day)
  {
    pattern: new RegExp(`${NOT_GLUED}(\\d{4})(?:-(\\d{1,2})(?![-/\\d])|年(\\d{1,2})月(?!\\d))`, 'giu'),
    read: (match) => monthPeriod(Number(match[1]), Number(match[2] ?? match[3]) - 1),
  },
];

/**
 * The day or month a query names with its year, in English (`on 3 May, 2023`, `May 3rd 2023`,
 * `1st of May 2023`, `in Sept. 2023`) or in numbers (`2023-05-03`, `2023/5/3`, `2023-05`,
 * `2023年5月3日`, `2023年5月`, full-width digits too), as a UTC calendar day or month. A query that
 * names two or more (`from May 2023 to June 2023`) names the span from the first to the end of
 * the last. Undefined when it names none (a year alone, a day without its year, a day the
 * calendar does not have, a version such as `v2023-05`).
 */
export function periodNamedIn(query: string): NamedPeriod | undefined {
  // Full-width digits and punctuation (２０２３年５月３日) read as ASCII.
  const text = query.normalize('NFKC');
  const taken: Array<{ start: number; end: number }> = [];
  let span: NamedPeriod | undefined;
  for (const form of FORMS) {
    for (const match of text.matchAll(form.pattern)) {
      const start = match.index;
      const end = start + match[0].length;
      // `3 May, 2023` holds `May, 2023`: the day was read, the month inside it is not another period.
      if (taken.some((part) => start < part.end && part.start < end)) continue;
      taken.push({ start, end });
      const period = form.read(match);
      if (period) span = span ? { fromMs: Math.min(span.fromMs, period.fromMs), toMs: Math.max(span.toMs, period.toMs) } : period;
    }
  }
  return span;
}

function monthIndex(name: string): number {
  const prefix = name.toLowerCase().slice(0, 3);
  return MONTHS.findIndex((month) => month.startsWith(prefix));
}

function dayPeriod(year: number, month: number, day: number): NamedPeriod | undefined {
  const fromMs = Date.UTC(year, month, day);
  // Date.UTC rolls 30 February over into March: such a day is not one the query names.
  if (year < 1000 || month < 0 || month > 11 || new Date(fromMs).getUTCDate() !== day) return undefined;
  return { fromMs, toMs: Date.UTC(year, month, day + 1) };
}

function monthPeriod(year: number, month: number): NamedPeriod | undefined {
  if (year < 1000 || month < 0 || month > 11) return undefined;
  return { fromMs: Date.UTC(year, month, 1), toMs: Date.UTC(year, month + 1, 1) };
}
