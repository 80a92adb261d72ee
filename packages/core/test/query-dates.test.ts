import { describe, expect, it } from 'vitest';
import { dateScore, periodNamedIn } from '../src/index.js';

const day = (iso: string) => ({ fromMs: Date.parse(`${iso}T00:00:00.000Z`), toMs: Date.parse(`${iso}T00:00:00.000Z`) + 86_400_000 });
const month = (from: string, to: string) => ({ fromMs: Date.parse(`${from}-01T00:00:00.000Z`), toMs: Date.parse(`${to}-01T00:00:00.000Z`) });

describe('periodNamedIn', () => {
  it('reads a day with its year, in English words or in numbers', () => {
    for (const query of [
      'What movie did Joanna watch on 1 May, 2022?',
      'What did she do on May 1, 2022?',
      'on May 1st 2022',
      'on the 1st May 2022',
      'on 1 may 2022',
      'on 2022-05-01',
      'on 2022/5/1',
      '2022年5月1日她看了什么电影？',
      '２０２２年５月１日她看了什么电影？',
      '她在2022年5月1日看了什么电影？',
      'on the 1st of May 2022',
      'on 1 May,2022',
      'on May 1,2022',
    ]) {
      expect(periodNamedIn(query), query).toEqual(day('2022-05-01'));
    }
    expect(periodNamedIn('Who did Maria have dinner with on Dec 31, 2023?')).toEqual(day('2023-12-31'));
    expect(periodNamedIn('on Sept 9, 2023')).toEqual(day('2023-09-09'));
  });

  it('reads a month with its year', () => {
    expect(periodNamedIn('What workout class did Maria start in December 2023?')).toEqual(month('2023-12', '2024-01'));
    expect(periodNamedIn('in Feb, 2024')).toEqual(month('2024-02', '2024-03'));
    expect(periodNamedIn('2024-02 的账单')).toEqual(month('2024-02', '2024-03'));
    expect(periodNamedIn('2024年2月做了什么？')).toEqual(month('2024-02', '2024-03'));
    expect(periodNamedIn('２０２４年２月做了什么？')).toEqual(month('2024-02', '2024-03'));
    expect(periodNamedIn('in Sept 2023')).toEqual(month('2023-09', '2023-10'));
    expect(periodNamedIn('in Sept. 2023')).toEqual(month('2023-09', '2023-10'));
  });

  it('reads the span from the first to the end of the last when the query names two or more', () => {
    expect(periodNamedIn('What pottery did I do from May 2023 to June 2023?')).toEqual(month('2023-05', '2023-07'));
    expect(periodNamedIn('between 2023-05 and 2023-07')).toEqual(month('2023-05', '2023-08'));
    const span = (from: string, to: string) => ({ fromMs: day(from).fromMs, toMs: day(to).toMs });
    expect(periodNamedIn('after the race on 7 July, 2023, and before May 2023?')).toEqual(span('2023-05-01', '2023-07-07'));
    // A day's words hold its month's (`May, 2023` in `3 May, 2023`): read once, as the day.
    expect(periodNamedIn('on 3 May, 2023 and 5 May, 2023')).toEqual(span('2023-05-03', '2023-05-05'));
  });

  it('names no period for a year alone, a day without its year, a day the calendar lacks, or no date', () => {
    for (const query of ['How many times did she go to the beach in 2023?', 'What happened on May 3?', 'on 30 February, 2024', 'on 2023-02-29', '2024-13', 'Where does Ana live?', '']) {
      expect(periodNamedIn(query), query).toBeUndefined();
    }
  });

  it('reads no date in numbers glued to a version or a longer number', () => {
    for (const query of ['What changed in v2023-05?', 'the fix in version 1.2023-05', 'Which api-version 2024-02-01 did we pin?', 'api-version=2024-02-01', 'call 1-800-2023-05-11', 'the build release_2023-05-03']) {
      expect(periodNamedIn(query), query).toBeUndefined();
    }
  });
});

describe('dateScore', () => {
  it('is 1 within the period widened by a day on each side, else 0', () => {
    const period = day('2023-05-03');
    expect(dateScore('2023-05-03T12:00:00.000Z', period)).toBe(1);
    expect(dateScore('2023-05-02T00:00:00.000Z', period)).toBe(1);
    expect(dateScore('2023-05-04T23:59:59.999Z', period)).toBe(1);
    expect(dateScore('2023-05-01T23:59:59.999Z', period)).toBe(0);
    expect(dateScore('2023-05-05T00:00:00.000Z', period)).toBe(0);
  });
});
