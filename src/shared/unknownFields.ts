/**
 * The error of a z.strictObject for keys it does not have: a misspelt or unknown field would otherwise be
 * dropped and its default used without a word. Names the keys sent and the fields there are; `note` is
 * added after them (e.g. which other spelling is accepted).
 */
export const unknownFieldsError =
  (known: readonly string[], note = '') =>
  (issue: { code?: string; keys?: readonly string[] }): string | undefined =>
    issue.code === 'unrecognized_keys' && issue.keys
      ? `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `'${k}'`).join(', ')}; the fields are ${known.join(', ')}${note}`
      : undefined;
