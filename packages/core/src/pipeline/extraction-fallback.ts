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
// The words that ask, English and Chinese: REQUEST_START and REQUEST_AFTER_COMMA.
const ASKING_WORDS = "please|pls|can you|could you|would you|let's|let us|tell me|show me|help me|give me";
const GIVE_ME = '[给給]我(?:写|寫|讲|講|推荐|推薦|找|来|來|列|说|說|做|发|發|查|看|翻译|翻譯|解释|解釋|总结|總結|出|一)';
const YOU_CAN = '[你您](?:能|可以|可不可以|能不能|能否|帮|幫)';
const REQUEST_START = new RegExp(`^(?:${ASKING_WORDS}|write|make|请|請|帮我|幫我|${GIVE_ME}|麻烦|麻煩|能不能|能否|可以帮|可以幫|${YOU_CAN})`, 'iu');
// A request that opens a clause after a comma ("I'm vegetarian, can you suggest a recipe?"): the whole words of
// REQUEST_START that only ask, not "write", "make", 请 or 麻烦 ("I love to read, write and draw",
// "我在腾讯工作，请假的时候…", "我有两个孩子，麻烦事很多" go on).
const REQUEST_AFTER_COMMA = new RegExp(`^(?:(?:${ASKING_WORDS})(?![\\p{L}'’])|请你|請你|请帮|請幫|帮我|幫我|麻烦你|麻煩你|能不能|能否|可以帮|可以幫|${YOU_CAN}|${GIVE_ME})`, 'iu');
// What the assistant is asked for or asked about, said as a sentence about oneself (English, simplified and
// traditional Chinese): "I'd like you to…", "I was wondering…", "I have a question", "I want to ask…", "I need a
// recipe for…", "I would like a table for two", "我想订…", "我想问一下…", "我想要一份食谱". The user's own goals,
// needs, plans and preferences are facts and stay: "I want to learn Japanese", "I need glasses for reading",
// "I'd like to move to Berlin", "I would like my coffee black" (a standing preference: "my …", not "a …" the
// assistant writes or books), "我想学日语", "我要戒烟了", "我想要一份新工作"; so does what to call them
// ("I'd like you to call me Bob").
const ASSISTANT_WORK = 'recipe|suggestion|recommendation|idea|list|poem|story|joke|summary|translation|draft|e-?mail|letter|essay|example|explanation|answer|tip|advice|outline|template|table for (?:\\d+|two|three|four|five|six|seven|eight|ten|twelve)|reservation|booking|ticket|flight|taxi|cab';
const CJK_ASSISTANT_WORK = '食谱|食譜|菜谱|菜譜|菜单|菜單|建议|建議|推荐|推薦|清单|清單|列表|摘要|总结|總結|翻译|翻譯|邮件|郵件|信|诗|詩|故事|笑话|笑話|例子|答案|解释|解釋|模板|大纲|大綱|攻略|票';
const ASKED_OF_ASSISTANT = new RegExp(
  [
    String.raw`^i(?:['’]d|\s+would)?\s+(?:like|love|want|need)\s+you\s+to\b(?!\s+(?:call\s+me|remember|know|keep in mind)\b)`,
    String.raw`^i(?:\s+(?:was|am)\s+|['’]m\s+|\s+)wonder(?:ing)?\b`,
    String.raw`^i(?:\s+have|['’]ve)?(?:\s+got)?\s+(?:a|one|another|some|a few|a couple of|two|three)\s+(?:(?:quick|small|simple|little|short|follow-up)\s+)?questions?\b`,
    String.raw`^i(?:\s+(?:want|would like)|['’]d\s+like)\s+to\s+(?:ask|know)\b`,
    String.raw`^i(?:\s+(?:need|want|would like|would love)|['’]d\s+(?:like|love)|\s+am\s+looking\s+for|['’]m\s+looking\s+for)\s+(?:(?:a|an|some|the|another|your|a few|a couple of)\s+(?:[\p{L}-]+\s+){0,2}?)?(?:${ASSISTANT_WORK})s?\b`,
    String.raw`^我(?:想|要|想要|需要)(?:订|訂|预订|預訂|预定|預定|预约|預約)(?!婚)`,
    String.raw`^我(?:想|要|想要|需要)[一两兩几幾]?[份个個篇首张張些条條封][^，,。；;]{0,8}?(?:${CJK_ASSISTANT_WORK})`,
    String.raw`^我(?:想问|想問|想知道|有一?[个個]?(?:问题|問題))`,
  ].join('|'),
  'iu',
);
/** "I'm fine", "I'm doing well", "我挺好的", "我还行": how one is, as a reply, once any thanks or "you?" is taken off. */
const STATE_REPLY =
  /^(?:i['’]?m|i am)\s+(?:(?:doing|feeling)\s+)?(?:(?:very|really|pretty|quite|so|just|all|totally|perfectly)\s+)?(?:fine|good|great|ok|okay|well|alright|all right|not bad|not too bad|so-so|wonderful|excellent|awesome)$|^我(?:也|都)?(?:挺|很|还|還|蛮|蠻|非常|特别|特別|超|真)?(?:好|不错|不錯|行|可以|还好|還好|还行|還行|凑合|湊合)(?:的|啦|呀|啊|哦|呢)?$/iu;
/** Thanks and "and you?" after such a reply: "I'm good, thanks, and you", "我很好，谢谢，你呢". */
const COURTESY_END =
  /(?:[\s,;.!~，；。！、]*(?:(?:and|how about|what about)\s+)?(?:thanks(?: a lot| so much)?|thank you(?: so much| very much)?(?: for asking)?|thx|you|yourself|谢谢你?|谢谢您|謝謝你?|謝謝您|多谢|多謝|你呢|您呢))+$/iu;
/** "by the way" around a statement says nothing of it: "I'm a nurse by the way" is "I'm a nurse". */
const ASIDE = /^(?:by the way|btw)[\s,]+|[\s,]+(?:by the way|btw)(?=[.!~…]*$)/giu;
/**
 * Small talk, a request after a statement and "by the way" are read in sentences up to this long only: they
 * are short, and the patterns that find them at a sentence's end (thanks, "and you?", "by the way") take time
 * that grows with the square of a long run of spaces or words they fail on.
 */
const SHORT_SENTENCE = 300;
const CJK_QUESTION_END = /[吗呢么嘛]$/u;
// A greeting or thanks in front of a statement ("Hi, I'm Tom") is dropped; a sentence that is only one is not a fact.
const GREETING =
  /^(?:hi|hello|hey|thanks|thank you|thx|ok|okay|sure|great|cool|nice|good (?:morning|afternoon|evening|night)|bye|你好|您好|谢谢|謝謝|好的|嗯|哈哈|早上好|晚安)(?:[\s,.!，。！~]+|$)/iu;
const FILLER = /^(?:i (?:see|agree|know|understand|appreciate it|think so|guess so|don't know|do not know|am not sure)|i['’]m not sure|me too|got it|我(?:知道了|明白了|懂了|也是))$/iu;
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
 * facts, so each is found by what it is about. Questions, requests to the
 * assistant ("I'd like you to…", "I need a recipe for…", "我想订…", "I have a
 * question", "我想问一下…") and small talk ("I'm fine, thanks!", "我挺好的") are
 * left out; the user's own goals and needs ("I want to learn Japanese") are
 * kept, and so is a statement before a request ("I'm vegetarian, can you…?");
 * nothing is ever updated, boosted or deleted this way.
 */
export function extractFactsDeterministic(userText: string, limit: number): string[] {
  const facts: string[] = [];
  for (const sentence of splitSentences(userText)) {
    const whole = sentence.length <= SHORT_SENTENCE ? statementBeforeAsking(sentence) : sentence;
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

/**
 * A statement followed by a request or a question in the same sentence, without it: "I'm vegetarian, can you
 * suggest a recipe?" is "I'm vegetarian", "我是素食者，你能推荐一个食谱吗？" is "我是素食者". Cut at the first clause
 * that asks (a question only when the sentence ends with a question mark: "I live in Lyon, where I work" is one
 * statement), and only when what comes before it is a statement; else the sentence is unchanged.
 */
function statementBeforeAsking(sentence: string): string {
  const question = /[?？]\s*$/u.test(sentence);
  for (const comma of sentence.matchAll(/[,，;；]/gu)) {
    const rest = sentence.slice(comma.index + 1).trim();
    const asks = REQUEST_AFTER_COMMA.test(rest) || (question && (QUESTION_START.test(rest) || /^[你您]/u.test(rest) || CJK_QUESTION_END.test(rest.replace(/[?？]+$/u, ''))));
    if (!asks) continue;
    const head = sentence.slice(0, comma.index).trim();
    return statementOf(head) === undefined ? sentence : head;
  }
  return sentence;
}

/**
 * `text` without the greeting or thanks it opens with ("你好，我叫…" is "我叫…", "Sure, noted." is
 * "noted."), and '' when it is only small talk, each sentence a greeting, thanks, filler or a
 * how-are-you reply ("你好！", "Thanks!", "I'm fine, thanks", "好的。"): what a summary may quote.
 */
export function withoutSmallTalk(text: string): string {
  const sentences = splitSentences(text).map((sentence) => {
    let bare = sentence.trim();
    for (let before = ''; before !== bare; ) {
      before = bare;
      bare = bare.replace(GREETING, '').trim();
    }
    return isSmallTalk(bare.replace(/[.!。！…~]+$/u, '').trim()) ? '' : bare;
  });
  return sentences.filter(Boolean).join(' ');
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
  const trimmed = raw.trim().replace(GREETING, '');
  const greeted = (trimmed.length <= SHORT_SENTENCE ? trimmed.replace(ASIDE, '') : trimmed).trim();
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

/** A sentence, its closing .!。！…~ off, that is only filler or a how-are-you reply ("好的", "I'm fine, thanks"). */
function isSmallTalk(bare: string): boolean {
  return bare === '' || FILLER.test(bare) || (bare.length <= SHORT_SENTENCE && STATE_REPLY.test(bare.replace(COURTESY_END, '')));
}

function isFactualStatement(raw: string, sentence: string): boolean {
  if (/[?？]\s*$/u.test(raw)) return false;
  const bare = sentence.replace(/[.!。！…~]+$/u, '').trim();
  if (isSmallTalk(bare)) return false;
  if (QUESTION_START.test(bare) || REQUEST_START.test(bare) || ASKED_OF_ASSISTANT.test(bare) || CJK_QUESTION_END.test(bare)) return false;
  if (hasCjk(bare)) return FIRST_PERSON_CJK.test(bare) && Array.from(bare).length >= 4;
  if (FIRST_PERSON.test(bare) && bare.split(/\s+/u).length >= 3) return true;
  const word = SHORT_SELF_STATEMENT.exec(bare)?.[1]?.toLowerCase();
  return word !== undefined && !ENGLISH_STOPWORDS.has(word) && !SMALL_TALK_WORDS.has(word);
}
