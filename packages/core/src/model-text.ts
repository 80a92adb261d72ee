import type { LanguageModel } from './contracts.js';
import { MemloomError, toMemloomError } from './errors.js';

export interface ModelCallResult {
  ok: boolean;
  text: string;
  error?: MemloomError;
}

/**
 * Call a model with a timeout. Never throws: a failure or timeout comes back
 * as `{ ok: false, error }` so the caller can take its deterministic path.
 */
export async function callModel(
  model: LanguageModel,
  request: { system?: string; prompt: string; maxOutputTokens?: number },
  timeoutMs: number,
): Promise<ModelCallResult> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // Settle the race first, then tell the model to stop.
      reject(
        new MemloomError({
          code: 'TIMEOUT',
          backend: 'model',
          message: `${model.id} did not answer within ${timeoutMs} ms`,
        }),
      );
      controller.abort();
    }, timeoutMs);
  });
  try {
    const text = await Promise.race([model.generate({ ...request, signal: controller.signal }), timeout]);
    if (typeof text !== 'string') {
      return {
        ok: false,
        text: '',
        error: new MemloomError({ code: 'MODEL_ERROR', backend: 'model', message: `${model.id} returned ${typeof text}, not text` }),
      };
    }
    return { ok: true, text };
  } catch (error) {
    return { ok: false, text: '', error: toMemloomError(error, { code: 'MODEL_ERROR', backend: 'model', message: `${model.id} failed` }) };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Clean a model's free-text answer: drop code fences, a leading label such as
 * "Merged memory:", and wrapping quotes. Returns "" when nothing usable is left.
 */
export function cleanModelText(text: string): string {
  let cleaned = text.trim();
  const fence = /^```[a-z]*\s*\n([\s\S]*?)\n?```$/i.exec(cleaned);
  if (fence) cleaned = (fence[1] ?? '').trim();
  cleaned = cleaned.replace(/^(merged|compressed|summary|memory|result|answer|output)( memory| text)?\s*[:：]\s*/i, '');
  if (/^(["'“「『]).*(["'”」』])$/su.test(cleaned)) cleaned = cleaned.slice(1, -1).trim();
  return cleaned;
}
