import { afterEach, describe, expect, it, vi } from 'vitest';
import { Deadline, untilAborted } from '../../../src/client/http/abort';

afterEach(() => {
  vi.useRealTimers();
});

describe('Deadline', () => {
  it('fires after its time unless re-armed, and never once cleared (a late re-arm starts no timer)', () => {
    vi.useFakeTimers();
    const expired = vi.fn();
    const deadline = new Deadline(1_000, expired);
    deadline.arm();
    vi.advanceTimersByTime(900);
    deadline.arm(); // progress
    vi.advanceTimersByTime(900);
    expect(expired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(200);
    expect(expired).toHaveBeenCalledOnce();
    expect(deadline.expired).toBe(true);

    const late = vi.fn();
    const done = new Deadline(1_000, late);
    done.arm();
    done.clear();
    // An upload body pulled after the request already failed re-arms: nothing may be left pending.
    done.arm();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(5_000);
    expect(late).not.toHaveBeenCalled();
  });

  it('waits out a time longer than one timer can hold in several, and never expires at Infinity', () => {
    vi.useFakeTimers();
    const expired = vi.fn();
    new Deadline(3e9, expired).arm();
    vi.advanceTimersByTime(2 ** 31);
    expect(expired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(3e9 - 2 ** 31 - 1);
    expect(expired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(expired).toHaveBeenCalledOnce();

    const never = new Deadline(Infinity, expired);
    never.arm();
    expect(vi.getTimerCount()).toBe(0);
    never.clear();
  });
});

describe('untilAborted', () => {
  it('settles as the work does, or at once with the reason when the signal aborts, before or during it', async () => {
    expect(await untilAborted(Promise.resolve('signed'), new AbortController().signal)).toBe('signed');
    const during = new AbortController();
    const pending = untilAborted(new Promise<never>(() => {}), during.signal);
    during.abort('stop');
    await expect(pending).rejects.toBe('stop');
    // The work refusing after the abort is no unhandled rejection (vitest would report one).
    let refuse!: (reason: unknown) => void;
    const refusal = new Promise<never>((_resolve, reject) => (refuse = reject));
    await expect(untilAborted(refusal, AbortSignal.abort('already'))).rejects.toBe('already');
    refuse(new Error('declined'));
    await new Promise((resolve) => setTimeout(resolve, 10));
  });
});
