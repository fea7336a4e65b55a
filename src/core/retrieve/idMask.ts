/**
 * Which entries of `ids` (ascending chunk ids) are among `allowedIds` (ascending too): 1 at each such
 * position. Both lists are ascending, so one merge walk.
 */
export function idMask(ids: ArrayLike<number>, allowedIds: readonly number[]): Uint8Array {
  const mask = new Uint8Array(ids.length);
  let i = 0;
  for (const id of allowedIds) {
    while (i < ids.length && ids[i]! < id) i++;
    if (i === ids.length) break;
    if (ids[i] === id) mask[i] = 1;
  }
  return mask;
}
