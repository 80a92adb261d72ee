import { MemloomError } from '../src/index.js';

/** The MemloomError a promise rejects with; anything else (or no rejection) fails the test. */
export async function errorOf(promise: Promise<unknown>): Promise<MemloomError> {
  try {
    await promise;
  } catch (error) {
    if (MemloomError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a MemloomError');
}
