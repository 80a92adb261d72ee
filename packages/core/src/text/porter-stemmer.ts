/**
 * The Porter (1980) stemming algorithm for English, so "walking", "walked"
 * and "walks" meet in a keyword index. Written from the published
 * description; words of one or two letters are returned as they are.
 */
export function porterStem(input: string): string {
  if (input.length < 3 || !/^[a-z]+$/.test(input)) return input;
  if (input.length > MAX_CACHED_LENGTH) return stem(input);
  let stemmed = stems.get(input);
  if (stemmed === undefined) {
    stemmed = stem(input);
    if (stems.size >= MAX_CACHED_STEMS) stems.clear();
    stems.set(input, stemmed);
  }
  return stemmed;
}

/**
 * Stems already computed: the same few thousand words come back in every
 * text, and stemming one costs about a microsecond. Emptied when full;
 * numbers and other non-words never get here, so they cannot flood it.
 */
const stems = new Map<string, string>();
const MAX_CACHED_STEMS = 20_000;
const MAX_CACHED_LENGTH = 40;

/** The stem of a word of three or more letters a-z. */
function stem(input: string): string {
  let word = input;
  if (word.startsWith('y')) word = `Y${word.slice(1)}`;

  word = step1a(word);
  word = step1b(word);
  if (hasVowel(word.slice(0, -1)) && word.endsWith('y')) word = `${word.slice(0, -1)}i`;
  word = replaceSuffix(word, STEP2, 0);
  word = replaceSuffix(word, STEP3, 0);
  word = step4(word);
  word = step5(word);

  return word.replace(/Y/g, 'y');
}

const STEP2: ReadonlyArray<readonly [string, string]> = [
  ['ational', 'ate'], ['tional', 'tion'], ['enci', 'ence'], ['anci', 'ance'], ['izer', 'ize'],
  ['bli', 'ble'], ['alli', 'al'], ['entli', 'ent'], ['eli', 'e'], ['ousli', 'ous'],
  ['ization', 'ize'], ['ation', 'ate'], ['ator', 'ate'], ['alism', 'al'], ['iveness', 'ive'],
  ['fulness', 'ful'], ['ousness', 'ous'], ['aliti', 'al'], ['iviti', 'ive'], ['biliti', 'ble'],
  ['logi', 'log'],
];

const STEP3: ReadonlyArray<readonly [string, string]> = [
  ['icate', 'ic'], ['ative', ''], ['alize', 'al'], ['iciti', 'ic'], ['ical', 'ic'], ['ful', ''], ['ness', ''],
];

const STEP4 = [
  'al', 'ance', 'ence', 'er', 'ic', 'able', 'ible', 'ant', 'ement', 'ment', 'ent', 'ou',
  'ism', 'ate', 'iti', 'ous', 'ive', 'ize',
];

function isConsonant(word: string, index: number): boolean {
  const char = word[index];
  if (char === undefined) return false;
  if ('aeiou'.includes(char)) return false;
  if (char === 'y') return index === 0 ? true : !isConsonant(word, index - 1);
  return true;
}

/** m: the number of vowel-consonant sequences in the stem. */
function measure(stem: string): number {
  let count = 0;
  let index = 0;
  const length = stem.length;
  while (index < length && isConsonant(stem, index)) index++;
  while (index < length) {
    while (index < length && !isConsonant(stem, index)) index++;
    if (index >= length) break;
    while (index < length && isConsonant(stem, index)) index++;
    count++;
  }
  return count;
}

function hasVowel(stem: string): boolean {
  for (let index = 0; index < stem.length; index++) if (!isConsonant(stem, index)) return true;
  return false;
}

function endsWithDoubleConsonant(word: string): boolean {
  const length = word.length;
  return length >= 2 && word[length - 1] === word[length - 2] && isConsonant(word, length - 1);
}

/** consonant-vowel-consonant at the end, the last not w, x or y. */
function endsCvc(word: string): boolean {
  const length = word.length;
  if (length < 3) return false;
  const last = word[length - 1] ?? '';
  return (
    isConsonant(word, length - 3) &&
    !isConsonant(word, length - 2) &&
    isConsonant(word, length - 1) &&
    !'wxY'.includes(last) &&
    last !== 'y'
  );
}

function step1a(word: string): string {
  if (word.endsWith('sses')) return word.slice(0, -2);
  if (word.endsWith('ies')) return word.slice(0, -2);
  if (word.endsWith('ss')) return word;
  if (word.endsWith('s')) return word.slice(0, -1);
  return word;
}

function step1b(word: string): string {
  if (word.endsWith('eed')) {
    return measure(word.slice(0, -3)) > 0 ? word.slice(0, -1) : word;
  }
  for (const suffix of ['ed', 'ing']) {
    if (!word.endsWith(suffix)) continue;
    const stem = word.slice(0, -suffix.length);
    if (!hasVowel(stem)) return word;
    if (stem.endsWith('at') || stem.endsWith('bl') || stem.endsWith('iz')) return `${stem}e`;
    if (endsWithDoubleConsonant(stem) && !/[lsz]$/.test(stem)) return stem.slice(0, -1);
    if (measure(stem) === 1 && endsCvc(stem)) return `${stem}e`;
    return stem;
  }
  return word;
}

function replaceSuffix(word: string, rules: ReadonlyArray<readonly [string, string]>, minMeasure: number): string {
  for (const [suffix, replacement] of rules) {
    if (!word.endsWith(suffix)) continue;
    const stem = word.slice(0, -suffix.length);
    return measure(stem) > minMeasure ? stem + replacement : word;
  }
  return word;
}

function step4(word: string): string {
  // Longest suffix first, as the algorithm asks.
  const suffix = STEP4.filter((candidate) => word.endsWith(candidate)).sort((a, b) => b.length - a.length)[0];
  if (suffix) {
    const stem = word.slice(0, -suffix.length);
    if (measure(stem) > 1) return stem;
    return word;
  }
  if (word.endsWith('ion')) {
    const stem = word.slice(0, -3);
    if (measure(stem) > 1 && /[st]$/.test(stem)) return stem;
  }
  return word;
}

function step5(word: string): string {
  if (word.endsWith('e')) {
    const stem = word.slice(0, -1);
    const m = measure(stem);
    if (m > 1 || (m === 1 && !endsCvc(stem))) word = stem;
  }
  if (measure(word) > 1 && endsWithDoubleConsonant(word) && word.endsWith('l')) word = word.slice(0, -1);
  return word;
}
