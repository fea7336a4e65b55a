import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { describeFileSystem, fileSystemLabel, mountOf } from '../../bench/fileSystem';

// The format of proc(5), with a mount point holding an escaped space.
const MOUNTINFO = [
  '22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard',
  '23 22 0:21 / /tmp rw,nosuid shared:2 - tmpfs tmpfs rw,size=1024k',
  '24 22 7:0 / /mnt/ext4j rw,relatime shared:3 - ext4 /dev/loop0 rw',
  '25 22 7:1 / /mnt/my\\040disk rw,relatime shared:4 - btrfs /dev/loop1 rw',
  '',
].join('\n');

describe('mountOf', () => {
  it('takes the longest mount point that holds the path', () => {
    expect(mountOf('/tmp/kbs-bench-1', MOUNTINFO)).toEqual({ point: '/tmp', type: 'tmpfs', source: 'tmpfs' });
    expect(mountOf('/mnt/ext4j/tmp', MOUNTINFO)?.source).toBe('/dev/loop0');
    expect(mountOf('/work/main', MOUNTINFO)?.type).toBe('ext4');
  });

  it('does not take a mount point that only shares a prefix of the name', () => {
    expect(mountOf('/tmpfiles/x', MOUNTINFO)?.point).toBe('/');
    expect(mountOf('/mnt/ext4jx', MOUNTINFO)?.point).toBe('/');
  });

  it('reads escaped mount points', () => {
    expect(mountOf('/mnt/my disk/data', MOUNTINFO)?.type).toBe('btrfs');
  });
});

describe.runIf(process.platform === 'linux')('describeFileSystem', () => {
  it("names the temporary folder's file system", () => {
    const info = describeFileSystem(tmpdir());
    expect(info.type).not.toBe('unknown');
    expect(info.journal === null || typeof info.journal === 'boolean').toBe(true);
    expect(fileSystemLabel(info)).toContain(` at ${info.path}`);
  });
});
