import { describeValue, MemloomError } from './errors.js';

/** Fills `bytes` with random bytes. */
export type RandomBytes = (bytes: Uint8Array) => void;

const cryptoRandom: RandomBytes = (bytes) => {
  crypto.getRandomValues(bytes);
};

/**
 * A UUID of version 7 (RFC 9562): the time `atMs` (Unix milliseconds) in its
 * first 48 bits, then 74 random bits. Ids made later sort after ids made
 * earlier (ids of one millisecond in any order), so a store's index of ids
 * grows at one end, like its rows, instead of taking each new id at a random
 * place; and ids read in order read in the order memories were made.
 * `random` (default: the runtime's cryptographic random numbers) lets a
 * test or a benchmark make the same ids again.
 */
export function timeOrderedId(atMs: number, random: RandomBytes = cryptoRandom): string {
  if (typeof atMs !== 'number' || !Number.isFinite(atMs) || atMs < 0 || atMs >= 2 ** 48) {
    throw new MemloomError({ code: 'INVALID_INPUT', message: `a time-ordered id needs a time in milliseconds from 0 to 2^48, got ${describeValue(atMs)}` });
  }
  const bytes = new Uint8Array(16);
  random(bytes);
  let time = Math.floor(atMs);
  for (let index = 5; index >= 0; index--) {
    bytes[index] = time % 256;
    time = Math.floor(time / 256);
  }
  // Version 7 in the high bits of byte 6, the RFC 9562 variant (binary 10) in those of byte 8.
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x70;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
