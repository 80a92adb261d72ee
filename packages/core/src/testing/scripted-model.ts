import type { GenerateRequest, LanguageModel } from '../contracts.js';

export type ScriptStep = string | Error | ((request: GenerateRequest) => string | Promise<string>);

export interface ScriptedModel extends LanguageModel {
  /** Every request received, in order. */
  readonly requests: GenerateRequest[];
}

/**
 * A language model that answers from a script: each call takes the next
 * step (a text, an Error to throw, or a function of the request). When the
 * script runs out, the last step repeats.
 */
export function createScriptedModel(steps: ScriptStep[] | ScriptStep, id = 'memloom/scripted-model'): ScriptedModel {
  const script = Array.isArray(steps) ? steps : [steps];
  const requests: GenerateRequest[] = [];
  return {
    id,
    requests,
    async generate(request) {
      requests.push(request);
      const step = script[Math.min(requests.length - 1, script.length - 1)];
      if (step === undefined) return '';
      if (step instanceof Error) throw step;
      return typeof step === 'function' ? step(request) : step;
    },
  };
}

/** A model that never answers (until aborted), for timeout tests. */
export function createHangingModel(id = 'memloom/hanging-model'): LanguageModel {
  return {
    id,
    generate: (request) =>
      new Promise<string>((_, reject) => {
        request.signal?.addEventListener('abort', () => reject(new Error('aborted')));
      }),
  };
}
