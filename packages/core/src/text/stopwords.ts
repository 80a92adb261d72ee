/** Common English function words; they carry little meaning for matching. */
export const ENGLISH_STOPWORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below ' +
    'between both but by can could did do does doing down during each few for from further had has have ' +
    'having he her here hers herself him himself his how i if in into is it its itself just me more most my ' +
    'myself no nor not now of off on once only or other our ours ourselves out over own same she should so ' +
    'some such than that the their theirs them themselves then there these they this those through to too ' +
    'under until up very was we were what when where which while who whom why will with would you your ' +
    'yours yourself yourselves im ive id youre youve dont doesnt didnt isnt wasnt arent werent cant couldnt ' +
    'wont wouldnt shouldnt thats theres its lets also yeah oh hey hi'
  ).split(' '),
);

/** Chinese function words left out of keyword lists (not out of search). */
export const CHINESE_STOPWORDS: ReadonlySet<string> = new Set(
  (
    '的 了 是 我 你 他 她 它 们 我们 你们 他们 在 和 与 也 就 都 而 及 着 或 一个 一名 一 个 这 那 这个 那个 有 没有 ' +
    '很 吗 呢 吧 啊 呀 把 被 让 给 对 从 到 向 为 以 之 其 所 于 上 下 中 叫 现在 目前 已经 还 又 再 才 会 能 要 想'
  ).split(' '),
);
