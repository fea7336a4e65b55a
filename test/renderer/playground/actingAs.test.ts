import { describe, expect, it } from 'vitest';
import { AccessError, RateLimitError } from '../../../src/client';
import { describeFailure } from '../../../src/renderer/src/features/playground/actingAs';

describe('the playground’s failure card', () => {
  it('shows status, code and meaning as a buyer’s app gets them', () => {
    const denied = describeFailure(
      new AccessError({
        code: 'credential_expired',
        message: 'Access denied',
        status: 403,
        requestId: 'req_1',
      }),
    );
    expect(denied).toEqual({
      status: 403,
      code: 'credential_expired',
      message: 'Access denied',
      requestId: 'req_1',
      retryAfter: null,
      meaning: 'The subscription ended: the buyer must renew to query again.',
    });
    const limited = describeFailure(
      new RateLimitError({ code: 'rate_limited', message: 'Slow down', status: 429, retryAfter: 42 }),
    );
    expect(limited).toMatchObject({ status: 429, retryAfter: 42, code: 'rate_limited' });
    expect(describeFailure(new Error('network down'))).toMatchObject({
      status: null,
      code: null,
      message: 'network down',
    });
  });
});
