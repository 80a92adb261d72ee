import { splitSentences } from '../compression.js';
import { ENGLISH_STOPWORDS } from '../text/stopwords.js';
import { hasCjk } from '../text/tokenize.js';

// "Please remember that …", "Can you remember that …?", "Remember this: …", "Note this down: …", "请记住：…",
// "帮我记一下：…" are instructions about the fact, not part of it. "Don't forget …" and "记得…" are that only
// before a statement ("Don't forget that my son…", "记得我对花生过敏"); before something to do ("Don't forget
// to call me", "记得提醒我吃药") they are a reminder, kept whole (see `statementOf`).
const REMEMBER_PREFIX =
  /^(?:(?:please\s+|(?:can|could|would|will)\s+you\s+(?:please\s+)?)?(?:remember|note|keep in mind|don['’]t forget)(?:\s+(?:that|this(?: down)?|these|for next time))?\s*[:,]?\s*|(?:请|帮我|麻烦你?|你)?(?:记住|记下|记一下|记得)\s*[:：,，]?\s*)/iu;
/** A prefix that is a question only in its form: "Can you remember that I'm vegan?" asks to keep the statement. */
const ASKING_PREFIX = /^(?:can|could|would|will)\s+you\b/iu;
/** A prefix that may introduce something to do rather than a statement. */
const REMINDING_PREFIX = /don['’]t forget|记得/iu;
/** After such a prefix, a statement: one about oneself as its subject (after an optional time word), in English or Chinese. */
const STATEMENT_START =
  /^(?:i|i['’]m|i['’]ve|i['’]d|i['’]ll|we|we['’]re)\b|^(?:(?:今天|明天|后天|昨天|每天|最近|以后|今年|明年|去年|下周.|上周.|周.|星期.)[，,]?\s*)?[我咱](?!的|要的|们的)/iu;
/** Right after the prefix, words that make it no prefix: "Remember me as…", "Don't forget to…". */
const NOT_A_STATEMENT = /^(?:me|to)\b/iu;
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

// Where one statement about oneself joins another: ", and I …", "; I …", "，而且我…", "；我…". Only "and" or a
// semicolon before "I" or "我": "If I have time, I will go" and "I'd go, but I'm busy" are one statement each,
// and "I was born in 1990, and my brother in 1993" is not two about oneself.
const JOINED_STATEMENT = /(?:,\s+and\s+|;\s+)(?=(?:i|i'm|i’m|i've|i'd|i'll)\b)|[，,]\s*(?:而且|并且)(?=我)|[；;]\s*(?=我)/iu;
/** Quotes: a sentence that quotes someone is never cut (the quote may hold the "and I"). */
const QUOTE = /["“”「」『』]/u;
/** Words that point back into the sentence ("and I love it", "and I've been for years"): such a part says nothing alone. */
const POINTS_BACK = /\b(?:it|its|them|they|that|there|this|those|these|the|one|so|too|either|been|he|him|his|she|her|hers|back|two|three|both)\b|[它那这他她]/iu;
/** The speaker as a subject (English): "I", "I'm", "I've", "I'd", "I'll". */
const SPEAKER = /\bi(?:['’](?:m|ve|d|ll))?\b/iu;

/**
 * The deterministic background monitor, used when no model is set or it
 * failed: the user's own first-person statements of fact, as they said them
 * ("I live in Lyon", "I'm vegan", "我养了一只猫"). Two statements joined in one
 * sentence ("I am vegetarian, and I am planning a trip to Kyoto") are two
 * facts, so each is found by what it is about. Questions, requests and small
 * talk are left out; nothing is ever updated, boosted or deleted this way.
 */
export function extractFactsDeterministic(userText: string, limit: number): string[] {
  const facts: string[] = [];
  for (const whole of splitSentences(userText)) {
    const parts = standalone(joinedStatements(whole), whole);
    const statements = parts.map(statementOf);
    // Cut only when every part is a statement about oneself on its own ("I tried, and I failed" stays whole).
    const taken = statements.every((statement) => statement !== undefined) ? statements : parts.length > 1 ? [statementOf(whole)] : statements;
    for (const sentence of taken) {
      if (sentence === undefined) continue;
      if (!facts.includes(sentence)) facts.push(sentence);
      if (facts.length >= limit) return facts;
    }
  }
  return facts;
}

/** The parts when each says something alone; else the whole sentence. */
function standalone(parts: string[], whole: string): string[] {
  if (parts.length === 1) return parts;
  const alone = parts.every((part, index) => {
    if (index > 0 && POINTS_BACK.test(part)) return false;
    // Each part says something of the speaker: "My parents, my wife, and I are flying…" is one statement.
    // Whether each part is a statement at all (three words, or "I'm vegan") is `statementOf`'s to say.
    return hasCjk(part) ? FIRST_PERSON_CJK.test(part) : SPEAKER.test(part);
  });
  return alone ? parts : [whole];
}

/** The fact a sentence states, greeting and "remember that" left out; undefined when it is none. */
function statementOf(raw: string): string | undefined {
  const greeted = raw.trim().replace(GREETING, '').trim();
  const prefix = REMEMBER_PREFIX.exec(greeted)?.[0];
  let sentence = greeted;
  if (prefix) {
    const rest = greeted.slice(prefix.length).trim();
    // "Don't forget that …" brings a statement; "Don't forget …" and "记得…" only when one follows.
    const reminder = NOT_A_STATEMENT.test(rest) || (REMINDING_PREFIX.test(prefix) && !/\bthat\b/iu.test(prefix) && !STATEMENT_START.test(rest));
    if (!reminder) sentence = rest;
  }
  // "Can you remember that I'm vegan?" asks only to keep the statement it carries; any other question is none.
  const asked =
    prefix !== undefined && sentence !== greeted && ASKING_PREFIX.test(prefix) && (/\bthat\b|[:：]/iu.test(prefix) || STATEMENT_START.test(sentence));
  if (asked) sentence = sentence.replace(/[?？]+$/u, '');
  return isFactualStatement(asked ? sentence : raw, sentence) ? sentence : undefined;
}

/** A sentence cut where one first-person statement joins another; each part ends as the sentence did, and starts with a capital. */
function joinedStatements(sentence: string): string[] {
  if (QUOTE.test(sentence)) return [sentence];
  const parts = sentence.split(new RegExp(JOINED_STATEMENT.source, 'giu'));
  if (parts.length === 1) return [sentence];
  const end = /[。！]$/u.test(sentence) ? '。' : /[.!]$/u.test(sentence) ? '.' : '';
  return parts.map((part, index) => {
    const text = part.trim();
    const capital = text.charAt(0).toUpperCase() + text.slice(1);
    return index === parts.length - 1 || end === '' ? capital : `${capital}${end}`;
  });
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
