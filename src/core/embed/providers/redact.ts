/** What stands in for a secret removed from a message. */
export const REDACTED = '[redacted]';

/**
 * Runs of this many characters of the key are removed too: a provider may quote the key cut short
 * (`co-FULLSECRET…`) or by its prefix and suffix, and either half is most of a short key.
 */
export const MIN_KEY_RUN = 8;

/** A key shorter than this is not searched for as a whole (every `k-1` in a message is not it). */
const MIN_WHOLE_KEY = 4;

/**
 * `text` with the API key taken out, before it is quoted in an error that reaches creators, buyers and
 * logs: the key itself, any run of {@link MIN_KEY_RUN} or more of its characters (case aside), any
 * bearer token or `Authorization` header value, and the password of a URL. A provider that repeats the
 * key it was sent (`Incorrect API key provided: sk-…`) must not have it shown to a buyer.
 */
export function redactKey(text: string, apiKey: string): string {
  let out = text;
  const key = apiKey.trim();
  if (key.length >= MIN_WHOLE_KEY) out = out.split(key).join(REDACTED);
  if (key.length >= MIN_KEY_RUN) out = redactRuns(out, key);
  return out
    .replace(/\b(authorization["']?\s*[:=]\s*["']?)(?:bearer\s+)?[^\s"',;}]+/gi, `$1${REDACTED}`)
    .replace(/\b(bearer\s+)[^\s"',;}]+/gi, `$1${REDACTED}`)
    .replace(/(\/\/[^\s/@:]*:)[^\s/@]+@/g, `$1${REDACTED}@`);
}

/**
 * Every run of characters covered by some {@link MIN_KEY_RUN}-character slice of the key becomes one
 * `[redacted]`. This may take a little more than the key's own substring (two overlapping slices from
 * different places of the key), never less.
 */
function redactRuns(text: string, key: string): string {
  const slices = new Set<string>();
  const lowerKey = key.toLowerCase();
  for (let i = 0; i + MIN_KEY_RUN <= lowerKey.length; i++) slices.add(lowerKey.slice(i, i + MIN_KEY_RUN));
  const lower = text.toLowerCase();
  // Lower-casing can change a string's length (rare letters); then compare the text as it is.
  const haystack = lower.length === text.length ? lower : text;
  const covered = new Uint8Array(text.length);
  let any = false;
  for (let i = 0; i + MIN_KEY_RUN <= haystack.length; i++) {
    if (slices.has(haystack.slice(i, i + MIN_KEY_RUN))) {
      covered.fill(1, i, i + MIN_KEY_RUN);
      any = true;
    }
  }
  if (!any) return text;
  let out = '';
  for (let i = 0; i < text.length;) {
    if (!covered[i]) {
      out += text[i++];
      continue;
    }
    while (i < text.length && covered[i]) i++;
    out += REDACTED;
  }
  return out;
}
