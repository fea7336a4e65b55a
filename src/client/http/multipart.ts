/** A field of a multipart form: text, or a file with its name. */
export type FormPart = { name: string; value: string } | { name: string; file: Blob; filename: string };

/**
 * A `multipart/form-data` body (RFC 7578) as one Blob made of the files' own Blobs, so its exact size is
 * known up front, nothing is copied into memory (a Blob from `fs.openAsBlob` is read as it is sent),
 * and each retry can read it again from the start.
 */
export function multipartBody(parts: FormPart[]): { blob: Blob; contentType: string } {
  const boundary = `----kbs-client-${randomHex(12)}`;
  const pieces: (string | Blob)[] = [];
  for (const part of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${escapeQuoted(part.name)}"`;
    if ('file' in part) {
      head += `; filename="${escapeQuoted(part.filename)}"\r\nContent-Type: ${part.file.type || 'application/octet-stream'}`;
      pieces.push(`${head}\r\n\r\n`, part.file, '\r\n');
    } else {
      pieces.push(`${head}\r\n\r\n${part.value}\r\n`);
    }
  }
  pieces.push(`--${boundary}--\r\n`);
  return { blob: new Blob(pieces), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** The escaping browsers apply to field and file names (WHATWG HTML, multipart/form-data encoding). */
function escapeQuoted(text: string): string {
  return text.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

function randomHex(bytes: number): string {
  const values = new Uint8Array(bytes);
  if (globalThis.crypto?.getRandomValues) globalThis.crypto.getRandomValues(values);
  else for (let i = 0; i < bytes; i++) values[i] = Math.floor(Math.random() * 256);
  return Array.from(values, (b) => b.toString(16).padStart(2, '0')).join('');
}
