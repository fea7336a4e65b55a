import { createHmac, timingSafeEqual } from 'node:crypto';
import { parse as parseCookies, serialize as serializeCookie } from 'cookie';
import type { Request, Response } from 'express';

/** The query parameter of the link `kbstudio serve` prints and the desktop app opens. */
export const STUDIO_LINK_PARAM = 'token';

/** How long a browser stays signed in to the studio page without opening it (renewed on every visit). */
export const SESSION_MAX_AGE_S = 30 * 24 * 60 * 60;

/**
 * Who may read the studio token. Any local process (and, bound past loopback, anyone on the network)
 * can fetch the studio's page, so the page carries the token only for a browser that proved it was
 * given the studio's link: `/?token=<this launch's token>`, printed by `kbstudio serve` and opened by
 * the desktop app. That browser gets an HttpOnly, SameSite=Strict cookie with a MAC made with the data
 * directory's session key, so a reload, a bookmark of `/` and the page's own token renewal after a
 * restart (the key outlives a launch) keep working. The cookie is named for the port: browsers send a
 * host's cookies to all its ports, and two studios on one machine must not sign each other's pages.
 */
export class StudioSession {
  private readonly cookieValue: Buffer;
  private readonly token: Buffer;

  constructor(sessionKey: Buffer, token: string) {
    this.cookieValue = Buffer.from(
      createHmac('sha256', sessionKey).update('kbstudio studio page session v1').digest('base64url'),
    );
    this.token = Buffer.from(token, 'utf8');
  }

  /** Whether the request carries this studio's session cookie. */
  signedIn(req: Request): boolean {
    const cookies = parseCookies(req.headers.cookie ?? '');
    return sameSecret(cookies[cookieName(req)], this.cookieValue);
  }

  /** The link's token, when the request carries one (a repeated parameter counts as a wrong one). */
  linkToken(req: Request): string | undefined {
    const given = req.query[STUDIO_LINK_PARAM];
    if (given === undefined) return undefined;
    return typeof given === 'string' ? given : '';
  }

  /** Whether `given` is this launch's token. */
  tokenMatches(given: string): boolean {
    return sameSecret(given, this.token);
  }

  /** Sets (or renews) the session cookie on the response. */
  signIn(req: Request, res: Response): void {
    res.append(
      'Set-Cookie',
      serializeCookie(cookieName(req), this.cookieValue.toString(), {
        httpOnly: true,
        sameSite: 'strict',
        path: '/',
        maxAge: SESSION_MAX_AGE_S,
        secure: req.secure,
      }),
    );
  }
}

/** The link that signs a browser in to the studio served at `baseUrl` (no trailing slash). */
export function studioLink(baseUrl: string, token: string): string {
  return `${baseUrl}/?${new URLSearchParams({ [STUDIO_LINK_PARAM]: token }).toString()}`;
}

/** The page's address without the link's token, for the redirect that takes it out of the address bar. */
export function withoutLinkToken(originalUrl: string): string {
  const at = originalUrl.indexOf('?');
  const path = at === -1 ? originalUrl : originalUrl.slice(0, at);
  const query = new URLSearchParams(at === -1 ? '' : originalUrl.slice(at + 1));
  query.delete(STUDIO_LINK_PARAM);
  const rest = query.toString();
  // One leading slash: browsers read a Location of `//evil.example` (or `/\evil.example`) as another host.
  return `${path.replace(/^[/\\]+/, '/')}${rest ? `?${rest}` : ''}`;
}

/** The port the request came in on: a cookie per port keeps two studios on one host apart. */
function cookieName(req: Request): string {
  return `kbstudio_session_${req.socket.localPort ?? 0}`;
}

function sameSecret(given: string | undefined, expected: Buffer): boolean {
  if (given === undefined) return false;
  const bytes = Buffer.from(given, 'utf8');
  return bytes.length === expected.length && timingSafeEqual(bytes, expected);
}
