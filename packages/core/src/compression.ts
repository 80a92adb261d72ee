import { keywords } from './text/keywords.js';
import { ENGLISH_STOPWORDS } from './text/stopwords.js';
import { statementTerms, isCoveredBy } from './text/statement-terms.js';
import { hasCjk } from './text/tokenize.js';
import type { MemoryLevel } from './types.js';

/**
 * Deterministic text for each compressed level, used when no language model
 * is configured or the model fails. Seed 004's examples:
 *   full    "I am Zhang San, an AI engineer working in Beijing"
 *   summary "I am Zhang San, an AI engineer…"
 *   tag     "#Zhang #San #engineer #Beijing"
 *   trace   "Faded memory about: Zhang, engineer"
 *   archive "[archived] #Zhang #engineer"
 * The full text of every earlier level stays in the version history.
 */
export function compressDeterministic(content: string, to: MemoryLevel): string {
  const chinese = hasCjk(content);
  switch (to) {
    case 'full':
      return content;
    case 'summary':
      return summarize(content);
    case 'tag': {
      const words = keywords(content, 4);
      return words.length > 0 ? words.map((word) => `#${word}`).join(' ') : chinese ? '#记忆' : '#memory';
    }
    case 'trace': {
      const words = keywords(content, 2);
      if (chinese) return words.length > 0 ? `曾有关于${words.join('、')}的记忆` : '曾有相关记忆';
      return words.length > 0 ? `Faded memory about: ${words.join(', ')}` : 'Faded memory';
    }
    case 'archive': {
      const words = keywords(content, 2).map((word) => `#${word}`).join(' ');
      const label = chinese ? '[已归档]' : '[archived]';
      return words ? `${label} ${words}` : label;
    }
  }
}

/**
 * Merge new content into an old memory without a model: the new statement
 * leads, and sentences of the old one about other things are kept after it
 * ("I live in Paris. I have a dog." + "I live in Lyon now." →
 * "I live in Lyon now. I have a dog."). `oldLevel` is the level of
 * `oldContent`: a compressed text (not `full`) is only a shadow of one, and
 * the new statement simply replaces it. A merge into a compressed memory
 * passes the text its compression hid, from the memory's history, as `full`.
 */
export function mergeDeterministic(oldContent: string, newContent: string, oldLevel: MemoryLevel, maxLength: number): string {
  const fresh = newContent.trim();
  const old = oldContent.trim();
  if (oldLevel !== 'full' || old === fresh) return fresh;
  // Negations and emoji count here ("I don't like coffee" is news to "I like coffee").
  const freshTerms = statementTerms(fresh);
  const oldTerms = statementTerms(old);
  if (isCoveredBy(oldTerms, freshTerms)) return fresh;
  if (isCoveredBy(freshTerms, oldTerms)) return old.length <= maxLength ? old : fresh;

  // An old sentence that speaks of the same things as the new text is
  // superseded by it; one about something else is kept after it.
  const aboutOtherThings = (text: string) => {
    const { terms } = statementTerms(text);
    if (terms.size === 0) return false;
    let shared = 0;
    for (const term of terms) if (freshTerms.terms.has(term)) shared++;
    return shared / terms.size < 0.3;
  };
  // A Chinese sentence superseded as a whole still keeps its clauses about other things, since a Chinese
  // clause reads on its own, its subject left out: "我叫张三，是一名AI工程师，目前在北京工作" + "我是AI工程师张三"
  // keeps "目前在北京工作". Not one that leans on a clause left out (LEANING_CLAUSE: "从2019年开始", "如果下雨"),
  // nor part of a list ("猫、狗和兔子" is one clause). An English clause ("working in Beijing") does not
  // read on its own: it goes with its sentence.
  const extra = splitSentences(old).flatMap((sentence) => {
    if (aboutOtherThings(sentence)) return [sentence];
    if (!hasCjk(sentence)) return [];
    const clauses = (sentence.match(MERGE_CLAUSE) ?? []).filter((clause) => !LEANING_CLAUSE.test(clause.trim()) && aboutOtherThings(clause));
    return clauses.length > 0 ? [clauses.join('').replace(CLAUSE_END, '')] : [];
  });
  let merged = fresh;
  for (const sentence of extra) {
    // A sentence end between the two, when the new text has none ("I do not eat meat. I am vegetarian").
    const ended = /[.!?。！？…]["'”’)\]」』》]*$/u.test(merged);
    const separator = hasCjk(sentence) && hasCjk(merged) ? (ended ? '' : '。') : ended ? ' ' : '. ';
    const next = `${merged}${separator}${sentence}`;
    if (next.length > maxLength) break;
    merged = next;
  }
  return merged;
}

/**
 * Split after sentence-ending punctuation (Latin and CJK), keeping it, and at
 * line breaks. A "." ends a sentence only before whitespace or the end of the
 * text, so "1.85", "bob@example.com" and "www.example.com" stay whole.
 */
export function splitSentences(text: string): string[] {
  return (text.match(SENTENCE) ?? []).map((sentence) => sentence.trim()).filter(Boolean);
}

// Characters that are not sentence ends (a "." followed by anything but whitespace, "." or the end), then the ends.
// A "." after a common abbreviation ("St. Louis", "Dr. Li", "Acme Inc. hired me", "e.g. tea") does not end one either.
const SENTENCE = /(?:[^.!?。！？\n]|\.(?![\s.]|$)|(?<=\b(?:Mr|Mrs|Ms|Dr|Prof|St|Mt|Jr|Sr|Inc|Ltd|Co|Corp|vs|etc|e\.g|i\.e|approx|Ave|Rd))\.(?=\s+\S))+[.!?。！？]*/gu;

// Clauses end at punctuation; a Latin ",", "." or ":" only before whitespace or the end ("1.85", "bob@example.com", "10:30").
const CLAUSE = /(?:[^,.;:!?，。；：！？、\n]|[,.:](?!\s|$))+[,.;:!?，。；：！？、\n]*/gu;

// The clauses a merge keeps apart: as CLAUSE, but the items of a list ("猫、狗和兔子") stay together.
const MERGE_CLAUSE = /(?:[^,.;:!?，。；：！？\n]|[,.:](?!\s|$))+[,.;:!?，。；：！？\n]*/gu;

// Clause punctuation left at the end of the clauses kept from a sentence.
const CLAUSE_END = /[\s,;:，；：、]+$/u;

/**
 * The first words of a Chinese clause that does not stand on its own: a condition, a cause, a concession,
 * a time or place it starts from ("从2019年开始", "如果下雨", "因为下雨"), or a clause going on from the one
 * before ("但是…", "也不喝酒", "所以…"). Kept without the clause it leans on, it would say something else.
 * A clause that starts with a time word ("目前在北京工作", "现在…", "当前…") does stand on its own. 从事, 就职 and
 * 就读 are verbs ("从事AI研究", "就职于腾讯"), and so is 当 unless the clause is "当时…" or ends as "当…时/的时候/
 * 以后/之后/后/以前/之前/前" ("当过兵", "当老师有一段时间了" stand on their own; "当我们结婚后" does not).
 */
const LEANING_CLAUSE =
  /^(?:自从|从(?!事)|如果|要是|假如|因为|由于|虽然|尽管|但|可是|不过|而|并且|也|还|就(?!职|读)|才|所以|因此|然后|或者|直到|当时|当(?=.*(?<!小)(?:时候?|以后|之后|后|以前|之前|前)[\s,;:!?.，；：、。！？]*$)|除了)/u;

function summarize(content: string): string {
  const text = content.trim();
  const characters = Array.from(text);
  if (characters.length <= 12) return text;
  const target = Math.min(160, Math.ceil(characters.length * 0.7));
  // Cut at the last clause boundary before the target, else at a word boundary.
  const clauses = text.match(CLAUSE) ?? [text];
  let summary = '';
  for (const clause of clauses) {
    if (Array.from(summary + clause).length > target) break;
    summary += clause;
  }
  // A first clause far shorter than the target ("Well, …") keeps too little.
  if (Array.from(summary).length < target / 2) {
    const head = characters.slice(0, target).join('');
    const space = head.lastIndexOf(' ');
    summary = space > target / 2 ? head.slice(0, space) : head;
    // Do not end on "for a" or "to the".
    const words = summary.split(' ');
    while (words.length > 1 && ENGLISH_STOPWORDS.has((words[words.length - 1] ?? '').toLowerCase())) words.pop();
    summary = words.join(' ');
  }
  summary = summary.replace(/[\s,.;:!?，。；：！？、]+$/u, '');
  return summary.length < text.length ? `${summary}…` : summary;
}
