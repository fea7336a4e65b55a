/** Whether `target` is a page of the studio itself (same scheme, host and port as `origin`). */
export function isSameOrigin(target: string, origin: string): boolean {
  try {
    return new URL(target).origin === origin;
  } catch {
    return false;
  }
}

/** Only http(s) links leave the app, in the system browser; file:, javascript:, custom schemes never do. */
export function isExternalWebUrl(target: string): boolean {
  try {
    const { protocol } = new URL(target);
    return protocol === 'https:' || protocol === 'http:';
  } catch {
    return false;
  }
}

/** The one permission the studio page asks for: writing to the clipboard (copy buttons). */
export function isAllowedPermission(permission: string): boolean {
  return permission === 'clipboard-sanitized-write';
}
