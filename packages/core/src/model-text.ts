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

// Words of a label line that introduces the answer rather than a heading of the memory itself.
const ANSWER_LABEL =
  /\b(?:here|below|following|merged|combined|updated|compressed|summary|summari[sz]ed|memory|result|answer|output|version)\b|以下|合并|压缩|更新|记忆|摘要|总结|结果|答案|输出/iu;

/**
 * Clean a model's free-text answer. Returns "" when nothing usable is left.
 * Handled, in this order:
 * - `<think>…</think>` reasoning blocks (and, when the opening tag was in the
 *   prompt, everything up to a lone `</think>`) are dropped; an answer cut
 *   off inside its reasoning gives "";
 * - when the answer holds a fenced code block anywhere, its content is the
 *   answer and the text around it ("Hope this helps!") is dropped;
 * - a first line that is only a label ending in ":" or "：" and names the
 *   answer ("Here is the merged memory:", "以下是合并后的记忆：") is dropped
 *   when the answer follows on the next lines; a heading of the memory's own
 *   ("Favourite foods:\n- sushi") is kept;
 * - a label in front of the answer on the same line ("Merged memory:",
 *   "合并后的记忆：") and wrapping quotes are dropped.
 * Not handled: prose after an answer that is not fenced ("I live in Lyon.\n\n
 * Let me know…") or before it on the same line ("Sure! Merged memory: …");
 * it cannot be told from the memory's own text without a model.
 */
export function cleanModelText(text: string): string {
  let cleaned = text.replace(/<think>[\s\S]*?<\/think>/giu, '');
  const reasoningEnd = cleaned.toLowerCase().lastIndexOf('</think>');
  if (reasoningEnd >= 0) cleaned = cleaned.slice(reasoningEnd + '</think>'.length);
  cleaned = cleaned.trim();
  if (/^<think>/iu.test(cleaned)) return ''; // cut off while still reasoning
  const fence = /```[\w-]*[^\S\n]*\n([\s\S]*?)\n?```/u.exec(cleaned);
  if (fence) cleaned = (fence[1] ?? '').trim();
  const labelLine = /^([^\n]{0,80}[:：])[^\S\n]*\n\s*(\S[\s\S]*)$/u.exec(cleaned);
  if (labelLine && ANSWER_LABEL.test(labelLine[1] ?? '')) cleaned = (labelLine[2] ?? '').trim();
  cleaned = cleaned.replace(/^(merged|compressed|summary|memory|result|answer|output)( memory| text)?\s*[:：]\s*/i, '');
  cleaned = cleaned.replace(/^(?:合并后的|压缩后的|更新后的)?(?:记忆|摘要|总结|结果|答案|输出)\s*[:：]\s*/u, '');
  if (/^(["'“「『]).*(["'”」』])$/su.test(cleaned)) cleaned = cleaned.slice(1, -1).trim();
  return cleaned;
}
