/**
 * Whether `fetch` can send a ReadableStream body over plain HTTP/1.1: yes in Node (undici), Deno and
 * Bun; browsers either cannot at all or (Chromium) only over HTTP/2, so they get a Blob instead.
 */
export function canStreamRequestBodies(): boolean {
  const runtime = globalThis as { process?: { versions?: { node?: unknown } }; Deno?: unknown };
  return typeof runtime.process?.versions?.node === 'string' || runtime.Deno !== undefined;
}
