/**
 * Best first: the higher score first, ties by id ascending (UTF-16 code unit order, as `<` compares), so every
 * store and every search ranks ties alike, whatever order it read them in. A sort comparator's result.
 */
export function scoreThenId(scoreA: number, idA: string, scoreB: number, idB: string): number {
  return scoreB - scoreA || (idA < idB ? -1 : idA > idB ? 1 : 0);
}

/** `scoreThenId` for scored memories (a store's `vectorSearch` hits, a search's results): `hits.sort(byScoreThenId)`. */
export function byScoreThenId(a: { score: number; memory: { id: string } }, b: { score: number; memory: { id: string } }): number {
  return scoreThenId(a.score, a.memory.id, b.score, b.memory.id);
}
