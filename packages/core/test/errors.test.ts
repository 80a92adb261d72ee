import { describe, expect, it } from 'vitest';
import { MemloomError, missingStoreError } from '../src/index.js';

describe('missingStoreError', () => {
  it('builds MISSING_RESOURCE in the one wording every store uses, with mustExist in its details', () => {
    const cause = new Error('ENOENT');
    const error = missingStoreError({ backend: 'sqlite', where: 'at /data/m.db', what: 'the file does not exist', check: 'the path', details: { path: '/data/m.db' }, cause });
    expect(MemloomError.hasCode(error, 'MISSING_RESOURCE')).toBe(true);
    expect(error.backend).toBe('sqlite');
    expect(error.message).toBe(
      '[memloom] [sqlite] no store at /data/m.db: the file does not exist, and nothing was created (mustExist). Check the path, or create the store by opening it without mustExist',
    );
    expect(error.details).toEqual({ path: '/data/m.db', mustExist: true });
    expect(error.cause).toBe(cause);
  });
});
