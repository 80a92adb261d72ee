import type { GenerateRequest, LanguageModel } from '../contracts.js';

/** A call a controlled model received and has not answered yet. */
export interface PendingModelCall {
  request: GenerateRequest;
  answer(text: string): void;
}

/** A language model whose calls the test answers (or aborts) one by one. */
export interface ControlledModel {
  model: LanguageModel;
  /** Every call received, in order. */
  calls: PendingModelCall[];
  /** The call at `index` (0-based), once it is made; an error if `operation` ends first. */
  call(index: number, operation: Promise<unknown>): Promise<PendingModelCall>;
  /**
   * Abort `stop` with `reason` while `call` is in flight. When the caller did not pass its signal
   * on, the call's own signal stays alone: the model then answers it, and every later call, with
   * `lateAnswer`, as a real one would, and the work goes on (so that a test fails instead of
   * hanging).
   */
  abortDuring(call: PendingModelCall, stop: AbortController, reason: unknown, lateAnswer: string): void;
}

/**
 * A language model whose every call waits until the test answers it, for tests of what happens
 * while a model call is in flight (an abort, a concurrent write). It does not heed its request's
 * signal itself: an abort must come back to the caller whether or not a model stops when told.
 * No timers: a test never sleeps.
 */
export function createControlledModel(id = 'test/controlled'): ControlledModel {
  const calls: PendingModelCall[] = [];
  const waiting: Array<() => void> = [];
  let answerEveryCall: string | undefined;
  const model: LanguageModel = {
    id,
    generate: (request) =>
      new Promise<string>((resolve) => {
        calls.push({ request, answer: resolve });
        if (answerEveryCall !== undefined) resolve(answerEveryCall);
        for (const wake of waiting.splice(0)) wake();
      }),
  };
  return {
    model,
    calls,
    async call(index, operation) {
      const ended = operation.then(
        () => 'ended',
        () => 'ended',
      );
      while (calls.length <= index) {
        if ((await Promise.race([new Promise<void>((resolve) => waiting.push(resolve)), ended])) === 'ended') {
          throw new Error(`the operation ended before model call ${index + 1}`);
        }
      }
      return calls[index] as PendingModelCall;
    },
    abortDuring(call, stop, reason, lateAnswer) {
      stop.abort(reason);
      if (call.request.signal?.aborted) return;
      answerEveryCall = lateAnswer;
      call.answer(lateAnswer);
    },
  };
}
