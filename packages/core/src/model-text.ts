import type { LanguageModel } from './contracts.js';
import { MemloomError, toMemloomError } from './errors.js';
import { splitSentences } from './compression.js';
import { tokenize } from './text/tokenize.js';

export interface ModelCallResult {
  ok: boolean;
  text: string;
  error?: MemloomError;
}

/**
 * Call a model with a timeout. Never throws for the model: a failure or
 * timeout comes back as `{ ok: false, error }` so the caller can take its
 * deterministic path. The caller's own abort is no model failure: when
 * `request.signal` aborts (before or during the call), the call in flight is
 * aborted too (the model's `GenerateRequest.signal`) and the signal's reason
 * is thrown, as fetch() does, whether or not the model heeds its signal.
 */
export async function callModel(
  model: LanguageModel,
  request: { system?: string; prompt: string; maxOutputTokens?: number; signal?: AbortSignal | undefined },
  timeoutMs: number,
): Promise<ModelCallResult> {
  const { signal, ...prompt } = request;
  signal?.throwIfAborted();
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const stopped = new Promise<never>((_, reject) => {
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
    if (signal) {
      onAbort = () => {
        reject(signal.reason);
        controller.abort(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
    }
  });
  try {
    const text = await Promise.race([model.generate({ ...prompt, signal: controller.signal }), stopped]);
    if (typeof text !== 'string') {
      return {
        ok: false,
        text: '',
        error: new MemloomError({ code: 'MODEL_ERROR', backend: 'model', message: `${model.id} returned ${typeof text}, not text` }),
      };
    }
    return { ok: true, text };
  } catch (error) {
    // Whatever the model threw once it was told to stop, the caller stopped it: its reason, not a MODEL_ERROR.
    if (signal?.aborted) throw signal.reason;
    return { ok: false, text: '', error: toMemloomError(error, { code: 'MODEL_ERROR', backend: 'model', message: `${model.id} failed` }) };
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * A line that only introduces the answer ("Here is the merged memory:", "以下是合并后的记忆：", "Summary:"),
 * not a heading of the memory's own ("Favourite foods:", "Version history of my app:", "项目更新：").
 */
const ANSWER_LABEL_LINE =
  /^(?:(?:here|below|the following)\b.*|.*\b(?:merged|combined|updated|compressed|rewritten|summari[sz]ed)\s+(?:memory|memories|text|version|facts?|summary)\b.*|(?:the\s+)?(?:merged\s+|compressed\s+|updated\s+)?(?:summary|memory|result|answer|output)|以下.*|.*(?:合并后|压缩后|更新后|总结后).*|(?:记忆|摘要|总结|结果|答案|输出))\s*[:：]$/iu;
/** A closing line of chatter after the answer ("Hope this helps!", "Let me know if you need anything else!"). */
const CHATTER_LINE =
  /^(?:hope (?:this|that|it) helps|let me know\b|feel free\b|is there anything else|anything else\b|if you (?:need|have|want)\b|happy to help|glad to help|希望(?:这|对你|对您)|如有(?:需要|其他|任何)|如果(?:你|您)还有|还有什么)[^\n]{0,150}$/iu;
/** Quotes that may wrap a whole answer: opening → closing. */
const WRAPPING_QUOTES: Readonly<Record<string, string>> = { '"': '"', "'": "'", '“': '”', '「': '」', '『': '』' };

function isAnswerLabel(line: string): boolean {
  return line.length <= 80 && !line.includes('\n') && ANSWER_LABEL_LINE.test(line.trim());
}

/**
 * Clean a model's free-text answer. Returns "" when nothing usable is left.
 * Handled, in this order:
 * - `<think>…</think>` reasoning blocks (and, when the opening tag was in the
 *   prompt, everything up to a lone `</think>`) are dropped; an answer cut
 *   off inside its reasoning gives "";
 * - a fenced code block that is the whole answer is unwrapped; a label line
 *   before it ("Here you go:") and one line of chatter after it ("Hope this
 *   helps!") may be around it. A fence inside other text is the memory's own
 *   ("My deploy steps:\n```…```\nRun it on Fridays.") and is kept as it is;
 * - a first line that is only a label introducing the answer ("Here is the
 *   merged memory:", "以下是合并后的记忆：") is dropped when the answer follows
 *   on the next lines; a heading of the memory's own ("Favourite foods:",
 *   "项目更新：") is kept;
 * - with `inputs` (what the model was given), a last paragraph of obvious
 *   chatter after a blank line ("Let me know if you need anything else!") is
 *   dropped when the inputs do not hold it, and a fence with the model's
 *   explanation around it is unwrapped; without inputs, both are kept;
 * - a label in front of the answer on the same line ("Merged memory:",
 *   "合并后的记忆：") is dropped, and so are quotes wrapping the whole answer
 *   when they are a matching pair with no such quote inside ("\"Dune\" is
 *   better than \"Foundation\"" keeps its quotes).
 * Not handled: prose before the answer on the same line ("Sure! Merged
 * memory: …"); it cannot be told from the memory's own text without a model.
 */
export function cleanModelText(text: string, inputs?: readonly string[]): string {
  let known: Set<string> | undefined;
  const knownTerms = () => (known ??= termsOf(inputs ?? []));
  let cleaned = text.replace(/<think>[\s\S]*?<\/think>/giu, '');
  const reasoningEnd = cleaned.toLowerCase().lastIndexOf('</think>');
  if (reasoningEnd >= 0) cleaned = cleaned.slice(reasoningEnd + '</think>'.length);
  cleaned = cleaned.trim();
  if (/^<think>/iu.test(cleaned)) return ''; // cut off while still reasoning
  const fence = /```[\w-]*[^\S\n]*\n([\s\S]*?)\n?```/u.exec(cleaned);
  if (fence) {
    const before = cleaned.slice(0, fence.index).trim();
    const after = cleaned.slice(fence.index + fence[0].length).trim();
    const aside = (part: string) => part === '' || isAnswerLabel(part) || CHATTER_LINE.test(part) || (inputs !== undefined && !fromInputs(part, knownTerms()));
    // Text around the fence that the inputs do not hold is the model's (an explanation): the fence is the answer.
    if (aside(before) && aside(after)) cleaned = (fence[1] ?? '').trim();
  }
  const labelLine = /^([^\n]{0,80}[:：])[^\S\n]*\n\s*(\S[\s\S]*)$/u.exec(cleaned);
  if (labelLine && isAnswerLabel(labelLine[1] ?? '')) cleaned = (labelLine[2] ?? '').trim();
  // A last paragraph of chatter goes only when the inputs do not hold it: "Feel free to skip standup on
  // Fridays." may be the memory's own words.
  const lastParagraph = cleaned.search(/\n[^\S\n]*\n[^\n]*$/u);
  if (inputs !== undefined && lastParagraph > 0) {
    const paragraph = cleaned.slice(lastParagraph).trim();
    if (CHATTER_LINE.test(paragraph) && !fromInputs(paragraph, knownTerms())) cleaned = cleaned.slice(0, lastParagraph).trim();
  }
  cleaned = cleaned.replace(/^(merged|compressed|summary|memory|result|answer|output)( memory| text)?\s*[:：]\s*/i, '');
  cleaned = cleaned.replace(/^(?:合并后的|压缩后的|更新后的)?(?:记忆|摘要|总结|结果|答案|输出)\s*[:：]\s*/u, '');
  return unwrapQuotes(cleaned);
}

/** The terms of all the inputs a model was given. */
function termsOf(inputs: readonly string[]): Set<string> {
  return new Set(inputs.flatMap((input) => tokenize(input)));
}

/** Whether most of a text's terms are among the inputs' (the memory's own words, not the model's). */
function fromInputs(text: string, known: ReadonlySet<string>): boolean {
  const terms = tokenize(text);
  if (terms.length === 0) return true;
  return terms.filter((term) => known.has(term)).length / terms.length >= 0.5;
}

/** The text without quotes that wrap all of it, when they are a matching pair with no such quote inside. */
function unwrapQuotes(text: string): string {
  const closing = WRAPPING_QUOTES[text[0] ?? ''];
  if (closing === undefined || text.length < 2 || !text.endsWith(closing)) return text;
  const inner = text.slice(1, -1);
  if (inner.includes(text[0] as string) || inner.includes(closing)) return text;
  return inner.trim();
}

// A model declining the task, as its answer opens: "I'm sorry, but I can't help with that", "I cannot assist with
// this request", "As an AI…", "抱歉，我无法…". Only at the start, and only the assistant's phrasing: "I can't
// answer calls before 9am" or "我无法完成全程马拉松" are memories.
const REFUSAL = new RegExp(
  '^(?:' +
    [
      "(?:i am|i['’]m) sorry\\b",
      'sorry,',
      'i apologi[sz]e\\b',
      'apologies\\b',
      "i['’]m afraid\\b",
      "unfortunately,? i(?: (?:can(?:no|['’])?t|am unable|won['’]t|am not able)|['’]m (?:unable|not able))\\b",
      "i (?:can(?:no|['’])?t|won['’]t) do (?:that|this)\\b",
      "i(?: can(?:no|['’])?t| am (?:unable|not able) to|['’]m (?:unable|not able) to) (?:merge|combine|compress|summari[sz]e|rewrite)\\b",
      "i(?: (?:can(?:no|['’])?t|won['’]t)| am (?:unable|not able) to|['’]m (?:unable|not able) to) (?:help|assist|comply)(?: you)?(?: with (?:that|this|the|your)\\b|[.!]|$)",
      'as an ai\\b',
      'as a (?:large )?language model\\b',
      '(?:很抱歉|非常抱歉|抱歉)(?=我(?:不能|无法|無法))',
      '(?:很抱歉|非常抱歉|抱歉|对不起|對不起)[，,。！!]',
      '我(?:无法|無法|不能)(?:帮助你|幫助你|协助你|協助你|完成这个请求|完成這個請求|处理这个请求|處理這個請求)',
      '作为(?:一个)?(?:ai|人工智能|语言模型)',
    ].join('|') +
    ')',
  'iu',
);

/** Share of an answer's terms that must come from its inputs; below it, the answer is about something else. */
const MIN_SHARED_TERMS = 0.15;
/** Terms an answer needs before it is judged by the share of them it has in common with its inputs. */
const MIN_JUDGED_TERMS = 5;
/** An answer that asks a question back ("Sure! What would you like to talk about?"), when nothing it was given did. */
const ENDS_ASKING = /[?？]\s*$/u;

/**
 * Why a model's cleaned answer to a text task (merge, compress, summary) is
 * not the memory it was asked for, or undefined when it may be used:
 * - a refusal ("I'm sorry, but I can't help with that.", "抱歉，我无法…")
 *   that its inputs do not say themselves ("I can't help with the move" may be a memory);
 * - a question back ("What would you like to talk about?") when no input asks one;
 * - text sharing no term with its inputs ("Done!", "好的！"), or, from 5 terms on, under 15% of them.
 *   A short paraphrase that shares none ("Follows a plant-based diet." for "I am vegetarian")
 *   falls back too: the deterministic text is safer than a reply that may not be the memory.
 *   `judgeWords: false` skips this for formats of their own (compressions to tag, trace, archive).
 */
export function unusableModelText(text: string, inputs: readonly string[], options: { judgeWords?: boolean } = {}): string | undefined {
  // A memory may itself say "Unfortunately I am not able to run this season": an answer restating it is no refusal.
  const saidInInputs = () => inputs.some((input) => splitSentences(input).some((sentence) => REFUSAL.test(sentence.trim())));
  if (REFUSAL.test(text.trim()) && !saidInInputs()) return 'the model declined the task';
  if (ENDS_ASKING.test(text) && !inputs.some((input) => /[?？]/u.test(input))) return 'the model asked a question back instead of answering';
  if (options.judgeWords === false) return undefined;
  const terms = new Set(tokenize(text));
  const known = termsOf(inputs);
  let shared = 0;
  for (const term of terms) if (known.has(term)) shared++;
  // No word of the inputs at all ("Done!", "OK.", "好的！", a reply about something else): never the memory.
  if (shared === 0 && known.size > 0) return 'the model answer shares no words with its input';
  if (terms.size >= MIN_JUDGED_TERMS && shared / terms.size < MIN_SHARED_TERMS) return 'the model answer shares almost no words with its input';
  return undefined;
}
