import type { Clock } from '../contracts.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface FakeClock extends Clock {
  /** Move to an instant (Date, ISO string or epoch ms). */
  set(time: Date | string | number): void;
  advance(ms: number): void;
  advanceDays(days: number): void;
  /** The current time as an ISO string. */
  iso(): string;
}

/** A clock that only moves when told to. */
export function createFakeClock(start: Date | string | number = '2024-01-01T10:00:00.000Z'): FakeClock {
  let current = toMs(start);
  return {
    now: () => current,
    set: (time) => {
      current = toMs(time);
    },
    advance: (ms) => {
      current += ms;
    },
    advanceDays: (days) => {
      current += days * DAY_MS;
    },
    iso: () => new Date(current).toISOString(),
  };
}

function toMs(time: Date | string | number): number {
  return time instanceof Date ? time.getTime() : typeof time === 'number' ? time : Date.parse(time);
}
