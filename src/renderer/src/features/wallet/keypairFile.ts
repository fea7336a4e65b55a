import bs58 from 'bs58';

/**
 * A first check of a Solana CLI keypair file before it is sent, with the same wording as the server
 * (which checks again, and also that the two halves belong together). Undefined = looks right.
 */
export function checkKeypairText(text: string, fileName: string): string | undefined {
  const trimmed = text.trim();
  if (!trimmed) return `${fileName} is empty: choose the keypair file or paste its contents.`;
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    return `${fileName} is not JSON: expected the Solana CLI format, an array of 64 numbers.`;
  }
  if (!Array.isArray(value)) {
    return `${fileName} must be the Solana CLI format: a JSON array of 64 numbers 0..255, not ${typeof value === 'object' && value !== null ? 'an object' : typeof value}.`;
  }
  if (value.length !== 64) {
    return `${fileName} must be the Solana CLI format: a JSON array of 64 numbers 0..255; it has ${value.length}.`;
  }
  const bad = value.findIndex((b) => !Number.isInteger(b) || (b as number) < 0 || (b as number) > 255);
  if (bad !== -1) {
    return `${fileName} must be the Solana CLI format: a JSON array of 64 numbers 0..255; item ${bad + 1} is ${JSON.stringify(value[bad])}.`;
  }
  return undefined;
}

/**
 * The address a keypair file names (base58 of its public half, bytes 33..64), to show instead of its
 * contents; undefined when the text is not a keypair. The server checks the halves belong together.
 */
export function addressInKeypairText(text: string): string | undefined {
  if (checkKeypairText(text, 'keypair') !== undefined) return undefined;
  const bytes = JSON.parse(text.trim()) as number[];
  return bs58.encode(Uint8Array.from(bytes.slice(32)));
}
