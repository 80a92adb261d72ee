import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { explainZodIssues, formatZodIssues, memoryFilterSchema } from '../src/index.js';

const message = (schema: z.ZodType, value: unknown, options?: { reportInput: true }) => {
  const parsed = schema.safeParse(value, options);
  if (parsed.success) throw new Error('expected a failure');
  return formatZodIssues(parsed.error);
};

describe('formatZodIssues on a union', () => {
  const store = z.object({
    store: z.union([
      z.string().min(1),
      z.discriminatedUnion('type', [z.object({ type: z.literal('sqlite'), path: z.string().optional() }), z.object({ type: z.literal('markdown'), root: z.string() })]),
    ]),
  });

  it('names what is wrong inside the form a value was written in, not "Invalid input"', () => {
    expect(message(store, { store: { type: 'markdown' } })).toBe('store.root: Invalid input: expected string, received undefined');
    expect(message(store, { store: { type: 'sqlite', path: 7 } })).toBe('store.path: Invalid input: expected string, received number');
    // An array of the right kind: its item is named.
    expect(message(memoryFilterSchema, { level: ['whole'] })).toMatch(/^level\.0: Invalid option: expected one of "full"\|/);
  });

  it('for a value of no accepted kind, lists the kinds accepted, and the value when the issues carry it', () => {
    expect(message(store, { store: 5 })).toBe('store: Invalid input: expected string or object');
    expect(message(store, { store: 5 }, { reportInput: true })).toBe('store: Invalid input: expected string or object, received 5');
    // z.string().min(1) measures an array's length too: still an array is of no accepted kind.
    expect(message(store, { store: [] }, { reportInput: true })).toBe('store: Invalid input: expected string or object, received an array');
    expect(message(memoryFilterSchema, { type: 'gossip' }, { reportInput: true })).toBe(
      'type: Invalid input: expected "user" or "feedback" or "project" or "reference" or array, received "gossip"',
    );
  });

  it('for a value of a form\'s own type that the form refuses (NaN, Infinity, an invalid Date), says that form\'s problem, not the kinds accepted', () => {
    // As core's timestamps (`at`) are written.
    const timestamp = z.object({ at: z.union([z.date(), z.string().min(1), z.number()]) });
    expect(message(timestamp, { at: Number.NaN })).toBe('at: Invalid input: expected number, received NaN');
    expect(message(timestamp, { at: Number.POSITIVE_INFINITY })).toBe('at: Invalid input: expected number, received Infinity');
    expect(message(timestamp, { at: new Date('not a date') }, { reportInput: true })).toBe('at: Invalid input: expected date, received Invalid Date');
    // A value of no accepted kind still lists them.
    expect(message(timestamp, { at: true }, { reportInput: true })).toBe('at: Invalid input: expected date or string or number, received true');
  });

  it('explainZodIssues gives the explained issues with their paths, as formatZodIssues words them', () => {
    const parsed = store.safeParse({ store: { type: 'markdown' } });
    const issues = parsed.success ? [] : explainZodIssues(parsed.error.issues);
    expect(issues.map(({ path, message }) => ({ path, message }))).toEqual([{ path: ['store', 'root'], message: 'Invalid input: expected string, received undefined' }]);
  });

  it('leaves other issues as zod words them, with the prefix', () => {
    const parsed = z.object({ limit: z.number() }).strict().safeParse({ limit: 'x', extra: 1 });
    expect(parsed.success ? '' : formatZodIssues(parsed.error, 'options')).toBe('options.limit: Invalid input: expected number, received string; options: unknown key "extra"');
  });
});
