import { splitSentences } from '../compression.js';
import { ENGLISH_STOPWORDS } from '../text/stopwords.js';
import { hasCjk } from '../text/tokenize.js';

// "Please remember that …", "Remember: …", "请记住：…", "记住…" are instructions about the fact, not part of it.
const REMEMBER_PREFIX = /^(?:(?:please\s+)?(?:remember|note|keep in mind)(?:\s+that)?\s*[:,]?\s*|请?(?:记住|记下|记一下)\s*[:：,，]?\s*)/iu;
const FIRST_PERSON = /\b(?:i|i'm|i've|i'd|i'll|im|my|mine|me|we|we're|our|ours)\b/iu;
const FIRST_PERSON_CJK = /[我咱]/u;
const QUESTION_START =
  /^(?:who|what|when|where|why|how|which|whose|do|does|did|is|are|am|was|were|can|could|would|will|should|shall|may|have|has)\b/iu;
const REQUEST_START = /^(?:please|pls|can you|could you|would you|let's|let us|tell me|show me|help me|give me|write|make|请|帮我|麻烦|能不能|可以帮)/iu;
const CJK_QUESTION_END = /[吗呢么嘛]$/u;
// A greeting or thanks in front of a statement ("Hi, I'm Tom") is dropped; a sentence that is only one is not a fact.
const GREETING =
  /^(?:hi|hello|hey|thanks|thank you|thx|ok|okay|sure|great|cool|nice|good (?:morning|afternoon|evening|night)|bye|你好|您好|谢谢|好的|嗯|哈哈|早上好|晚安)(?:[\s,.!，。！~]+|$)/iu;
const FILLER = /^(?:i (?:see|agree|know|understand|appreciate it|think so|guess so|don't know|do not know)|me too|got it|我(?:知道了|明白了|懂了|也是))$/iu;
// "I'm vegan", "I am Tom", "I'm 28": a statement about oneself in two or three words, when its last word carries meaning.
const SHORT_SELF_STATEMENT = /^(?:i['’]?m|i am|my)\s+([\p{L}\p{N}'’-]+)$/iu;
// Replies and exclamations of that form that say nothing lasting ("I'm fine", "My bad").
const SMALL_TALK_WORDS = new Set(
  'fine ok okay good great sure sorry glad kidding joking back done ready bad pleasure god goodness gosh'.split(' '),
);

/**
 * The deterministic background monitor, used when no model is set or it
 * failed: the user's own first-person statements of fact, as they said them
 * ("I live in Lyon", "I'm vegan", "我养了一只猫"). Questions, requests and small talk are
 * left out; nothing is ever updated, boosted or deleted this way.
 */
export function extractFactsDeterministic(userText: string, limit: number): string[] {
  const facts: string[] = [];
  for (const raw of splitSentences(userText)) {
    const sentence = raw.trim().replace(GREETING, '').replace(REMEMBER_PREFIX, '').trim();
    if (!isFactualStatement(raw, sentence)) continue;
    if (!facts.includes(sentence)) facts.push(sentence);
    if (facts.length >= limit) break;
  }
  return facts;
}

function isFactualStatement(raw: string, sentence: string): boolean {
  if (/[?？]\s*$/u.test(raw)) return false;
  const bare = sentence.replace(/[.!。！…~]+$/u, '').trim();
  if (bare === '' || FILLER.test(bare)) return false;
  if (QUESTION_START.test(bare) || REQUEST_START.test(bare) || CJK_QUESTION_END.test(bare)) return false;
  if (hasCjk(bare)) return FIRST_PERSON_CJK.test(bare) && Array.from(bare).length >= 4;
  if (FIRST_PERSON.test(bare) && bare.split(/\s+/u).length >= 3) return true;
  const word = SHORT_SELF_STATEMENT.exec(bare)?.[1]?.toLowerCase();
  return word !== undefined && !ENGLISH_STOPWORDS.has(word) && !SMALL_TALK_WORDS.has(word);
}
