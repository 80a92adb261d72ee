import { compressDeterministic, mergeDeterministic } from './compression.js';
import type { LanguageModel } from './contracts.js';
import { callModel, cleanModelText, unusableModelText } from './model-text.js';
import type { Prompts } from './prompts.js';
import type { MemoryLevel } from './types.js';
import { wellFormed } from './well-formed.js';

export interface TextResult {
  text: string;
  /** True when the text came from the language model. */
  byModel: boolean;
  /** Why the model's answer was not used, when it was asked and failed. */
  fallbackReason?: string;
}

/**
 * Compression and merge text: from the language model when one is given,
 * else (or when the model fails, times out or answers with something
 * unusable) from the deterministic functions. An abort of `signal` is no
 * failure: it aborts the model call and is thrown (its reason, see `callModel`).
 */
export class TextOperations {
  constructor(
    private readonly model: LanguageModel | undefined,
    private readonly prompts: Prompts,
    private readonly timeoutMs: number,
    private readonly maxLength: number,
  ) {}

  async compress(content: string, from: MemoryLevel, to: MemoryLevel, signal?: AbortSignal): Promise<TextResult> {
    const fallback = () => compressDeterministic(content, to);
    if (!this.model) return { text: fallback(), byModel: false };
    const result = await callModel(this.model, { ...this.prompts.compress({ content, from, to }), signal }, this.timeoutMs);
    if (!result.ok) return { text: fallback(), byModel: false, fallbackReason: result.error?.message ?? 'model failed' };
    // Stored as it is (maintenance writes it straight to the store): a lone half of a UTF-16 pair becomes U+FFFD.
    const text = wellFormed(cleanModelText(result.text, [content]));
    if (!text) return { text: fallback(), byModel: false, fallbackReason: 'model answered with empty text' };
    // Tag, trace and archive levels are written in formats of their own (`#pet:dog`, "once had a memory
    // about pets"), which need not share a word with the memory: only a refusal or a question is judged there.
    const unusable = unusableModelText(text, [content], { judgeWords: to === 'full' || to === 'summary' });
    if (unusable) return { text: fallback(), byModel: false, fallbackReason: unusable };
    if (text.length > content.length) {
      return { text: fallback(), byModel: false, fallbackReason: 'model answer was longer than the memory it compressed' };
    }
    return { text, byModel: true };
  }

  async merge(oldContent: string, oldLevel: MemoryLevel, newContent: string, signal?: AbortSignal): Promise<TextResult> {
    const fallback = () => mergeDeterministic(oldContent, newContent, oldLevel, this.maxLength);
    if (!this.model) return { text: fallback(), byModel: false };
    const result = await callModel(this.model, { ...this.prompts.merge({ oldContent, newContent }), signal }, this.timeoutMs);
    if (!result.ok) return { text: fallback(), byModel: false, fallbackReason: result.error?.message ?? 'model failed' };
    const text = cleanModelText(result.text, [oldContent, newContent]);
    if (!text) return { text: fallback(), byModel: false, fallbackReason: 'model answered with empty text' };
    const unusable = unusableModelText(text, [oldContent, newContent]);
    if (unusable) return { text: fallback(), byModel: false, fallbackReason: unusable };
    if (text.length > this.maxLength) {
      return { text: fallback(), byModel: false, fallbackReason: `model answer exceeded ${this.maxLength} characters` };
    }
    return { text, byModel: true };
  }
}
