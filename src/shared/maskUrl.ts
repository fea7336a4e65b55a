/** What stands in for a secret part of a URL. */
export const URL_MASK = '••••';

export interface UrlMaskOptions {
  /**
   * Also mask path segments that look like an access token: 16 or more of `[A-Za-z0-9_-]` holding a
   * digit. Solana RPC providers put the key in the path (`https://…alchemy.com/v2/<key>`,
   * `https://….quiknode.pro/<token>/`); an API's base URL has no such segment to hide.
   */
  pathTokens?: boolean;
}

/**
 * A URL as shown: the password of its userinfo and every query value (or nameless part) replaced by `••••`
 * (`https://user:••••@proxy.example.com/v1?token=••••`), the rest as typed. Split by hand rather than
 * by `URL`, which would percent-encode the mask and normalise what the user typed; the delimiters are
 * the URL parser's (the authority ends at the first `/`, `?` or `#`, the userinfo at its last `@`), so
 * what is masked is what a request would send as a password or a query.
 */
export function maskUrlCredentials(value: string, options: UrlMaskOptions = {}): string {
  const { scheme, userinfoName, password, hostAndPath, query, fragment } = splitUrl(value);
  if (scheme === undefined) return value;
  const userinfo =
    userinfoName === undefined
      ? ''
      : password === undefined
        ? `${userinfoName}@`
        : `${userinfoName}:${URL_MASK}@`;
  const path = options.pathTokens ? maskPathTokens(hostAndPath) : hostAndPath;
  const masked = query === undefined ? '' : `?${maskQueryValues(query)}`;
  return `${scheme}${userinfo}${path}${masked}${fragment}`;
}

/**
 * `text` with every secret part of `url` (its password, query values and, with `pathTokens`, its path
 * tokens) replaced by `••••`, wherever they appear: an RPC library's error may quote the URL it failed
 * to reach, and such a message reaches buyers of /v1 and the logs.
 */
export function redactUrlSecrets(text: string, url: string, options: UrlMaskOptions = {}): string {
  const secrets = urlSecrets(url, options)
    .filter((s) => s.length >= 4)
    .sort((a, b) => b.length - a.length);
  let out = text;
  for (const secret of secrets) {
    out = out.split(secret).join(URL_MASK);
    const encoded = encodeURIComponent(secret);
    if (encoded !== secret) out = out.split(encoded).join(URL_MASK);
  }
  return out;
}

function urlSecrets(value: string, options: UrlMaskOptions): string[] {
  const { scheme, password, hostAndPath, query } = splitUrl(value);
  if (scheme === undefined) return [];
  const secrets: string[] = [];
  if (password) secrets.push(password);
  for (const pair of query?.split('&') ?? []) {
    const eq = pair.indexOf('=');
    const secret = eq < 0 ? pair : pair.slice(eq + 1);
    if (secret) secrets.push(secret);
  }
  if (options.pathTokens) secrets.push(...hostAndPath.split('/').slice(1).filter(isPathToken));
  return secrets;
}

interface UrlParts {
  /** `https://`; undefined when the value does not start with a scheme (then nothing is masked). */
  scheme: string | undefined;
  userinfoName: string | undefined;
  password: string | undefined;
  /** The host (and port) followed by the path, as typed. */
  hostAndPath: string;
  query: string | undefined;
  /** `#…` or ''. */
  fragment: string;
}

function splitUrl(value: string): UrlParts {
  const hashAt = value.indexOf('#');
  const beforeHash = hashAt < 0 ? value : value.slice(0, hashAt);
  const fragment = hashAt < 0 ? '' : value.slice(hashAt);
  const queryAt = beforeHash.indexOf('?');
  const base = queryAt < 0 ? beforeHash : beforeHash.slice(0, queryAt);
  const query = queryAt < 0 ? undefined : beforeHash.slice(queryAt + 1);
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(base)?.[0];
  const none = { userinfoName: undefined, password: undefined, query, fragment };
  if (!scheme) return { scheme: undefined, hostAndPath: base, ...none };
  const rest = base.slice(scheme.length);
  const authorityEnd = rest.search(/[/\\]/);
  const authority = authorityEnd < 0 ? rest : rest.slice(0, authorityEnd);
  const at = authority.lastIndexOf('@');
  if (at < 0) return { scheme, hostAndPath: rest, ...none };
  const userinfo = authority.slice(0, at);
  const colon = userinfo.indexOf(':');
  return {
    scheme,
    userinfoName: colon < 0 ? userinfo : userinfo.slice(0, colon),
    password: colon < 0 ? undefined : userinfo.slice(colon + 1),
    hostAndPath: rest.slice(at + 1),
    query,
    fragment,
  };
}

const isPathToken = (segment: string) => /^[A-Za-z0-9_-]{16,}$/.test(segment) && /\d/.test(segment);

function maskPathTokens(hostAndPath: string): string {
  const [host, ...segments] = hostAndPath.split('/');
  return [host, ...segments.map((s) => (isPathToken(s) ? URL_MASK : s))].join('/');
}

function maskQueryValues(query: string): string {
  return query
    .split('&')
    .map((pair) => {
      // A part with no name (`?abcdef`) can be a token all the same.
      const eq = pair.indexOf('=');
      if (eq < 0) return pair === '' ? pair : URL_MASK;
      return eq === pair.length - 1 ? pair : `${pair.slice(0, eq)}=${URL_MASK}`;
    })
    .join('&');
}

/**
 * How a Solana RPC URL is masked wherever it is shown (settings, the Wallet page, RPC errors): RPC
 * providers take their key in the query (`?api-key=`) or the path (`/v2/<key>`).
 */
export const RPC_URL_MASK: UrlMaskOptions = { pathTokens: true };

/** A Solana RPC URL as shown: its key masked (`https://…alchemy.com/v2/••••`). */
export const maskRpcUrl = (rpcUrl: string): string => maskUrlCredentials(rpcUrl, RPC_URL_MASK);
