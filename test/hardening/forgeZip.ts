import zlib from 'node:zlib';

export interface ZipEntrySpec {
  /** A string is written as UTF-8; bytes are written as they are (a name in another charset). */
  name: string | Buffer;
  data?: Buffer | string;
  /** 0 stored, 8 deflated (default), anything else an unsupported method. */
  method?: number;
  flags?: number;
  externalAttributes?: number;
  /** Overrides the uncompressed size written in both headers (to forge bombs). */
  declaredSize?: number;
  crc?: number;
  /** False leaves the UTF-8 flag (bit 11) unset, as Info-ZIP's zip does even for UTF-8 names. */
  utf8Flag?: boolean;
  /** Extra fields, each as [header id, data], in both headers. */
  extra?: [number, Buffer][];
}

/**
 * Hand-assembles a ZIP (local headers, data, central directory, end record; ZIP64 end records past
 * 65,534 entries) so tests can forge what writers refuse to produce: `..` paths, symlinks, encryption
 * flags, lying sizes, bad checksums.
 */
export function buildZip(specs: ZipEntrySpec[]): Buffer {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const spec of specs) {
    const name = Buffer.isBuffer(spec.name) ? spec.name : Buffer.from(spec.name, 'utf8');
    const extra = Buffer.concat(
      (spec.extra ?? []).map(([id, field]) => {
        const header = Buffer.alloc(4);
        header.writeUInt16LE(id, 0);
        header.writeUInt16LE(field.length, 2);
        return Buffer.concat([header, field]);
      }),
    );
    const data = Buffer.from(spec.data ?? '');
    const method = spec.method ?? 8;
    const body = method === 8 ? zlib.deflateRawSync(data) : data;
    const crc = spec.crc ?? zlib.crc32(data);
    const size = spec.declaredSize ?? data.length;
    const flags = (spec.flags ?? 0) | (spec.utf8Flag === false ? 0 : 0x800);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(0x21, 12);
    local.writeUInt32LE(crc >>> 0, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(extra.length, 28);
    parts.push(local, name, extra, body);
    const header = Buffer.alloc(46);
    header.writeUInt32LE(0x02014b50, 0);
    header.writeUInt16LE((3 << 8) | 20, 4);
    header.writeUInt16LE(20, 6);
    header.writeUInt16LE(flags, 8);
    header.writeUInt16LE(method, 10);
    header.writeUInt16LE(0x21, 14);
    header.writeUInt32LE(crc >>> 0, 16);
    header.writeUInt32LE(body.length, 20);
    header.writeUInt32LE(size, 24);
    header.writeUInt16LE(name.length, 28);
    header.writeUInt16LE(extra.length, 30);
    header.writeUInt32LE((spec.externalAttributes ?? 0o100644 << 16) >>> 0, 38);
    header.writeUInt32LE(offset, 42);
    central.push(header, name, extra);
    offset += local.length + name.length + extra.length + body.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  const count = Math.min(specs.length, 0xffff);
  end.writeUInt16LE(count, 8);
  end.writeUInt16LE(count, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  if (specs.length < 0xffff) return Buffer.concat([...parts, directory, end]);
  // More entries than 16 bits count: a ZIP64 end record and its locator carry the real numbers.
  const zip64End = Buffer.alloc(56);
  zip64End.writeUInt32LE(0x06064b50, 0);
  zip64End.writeBigUInt64LE(44n, 4);
  zip64End.writeUInt16LE(45, 12);
  zip64End.writeUInt16LE(45, 14);
  zip64End.writeBigUInt64LE(BigInt(specs.length), 24);
  zip64End.writeBigUInt64LE(BigInt(specs.length), 32);
  zip64End.writeBigUInt64LE(BigInt(directory.length), 40);
  zip64End.writeBigUInt64LE(BigInt(offset), 48);
  const locator = Buffer.alloc(20);
  locator.writeUInt32LE(0x07064b50, 0);
  locator.writeBigUInt64LE(BigInt(offset + directory.length), 8);
  locator.writeUInt32LE(1, 16);
  return Buffer.concat([...parts, directory, zip64End, locator, end]);
}
