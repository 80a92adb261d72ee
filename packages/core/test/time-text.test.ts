import { describe, expect, it } from 'vitest';
import { assertRecordTimes, isOnCalendar, MemloomError } from '../src/index.js';

describe('isOnCalendar', () => {
  it('takes days and hours the calendar has', () => {
    for (const text of ['2024-02-29', '2024-02-29T23:59:59.999Z', '2000-02-29T00:00:00Z', '2023-12-31T10:00:00+02:00', '2024-04-30', '0001-01-01T00:00:00Z']) {
      expect(isOnCalendar(text), text).toBe(true);
    }
  });

  it('refuses the days and hours a Date would move to another day', () => {
    for (const text of ['2024-02-30', '2023-02-29T00:00:00Z', '1900-02-29T00:00:00Z', '2024-04-31T00:00:00Z', '2024-06-31', '2024-01-01T24:00:00Z', '2024-01-01 24:00', '2024-01-31t24:00:00z', '2024-00-10', '2024-13-01', '2024-01-00', ' 2024-02-30', '+002024-02-30T00:00:00Z', '2024/02/30', '2024/02/30 10:00', '2024-01-01  24:00Z', '2024-2-30']) {
      expect(isOnCalendar(text), text).toBe(false);
    }
  });

  it('leaves text that does not start with a date to Date.parse', () => {
    expect(isOnCalendar('March 1, 2024')).toBe(true);
    expect(isOnCalendar('')).toBe(true);
  });
});

describe('assertRecordTimes', () => {
  const times = { id: 'm1', createdAt: '2024-03-01T09:00:00.000Z', updatedAt: '2024-03-01T09:00:00.000Z', lastAccessedAt: '2024-03-01T09:00:00.000Z' };

  it('refuses a record time on a day the calendar does not have, naming the field', () => {
    expect(() => assertRecordTimes(times, 'test')).not.toThrow();
    for (const field of ['createdAt', 'updatedAt', 'lastAccessedAt'] as const) {
      let caught: unknown;
      try {
        assertRecordTimes({ ...times, [field]: '2024-02-30T09:00:00.000Z' }, 'test');
      } catch (error) {
        caught = error;
      }
      expect(caught, field).toBeInstanceOf(MemloomError);
      expect((caught as MemloomError).code).toBe('INVALID_INPUT');
      expect((caught as MemloomError).message).toContain(field);
    }
  });
});
