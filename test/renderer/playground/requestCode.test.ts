import { describe, expect, it } from 'vitest';
import { curlOf } from '../../../src/renderer/src/features/playground/requestCode';

// Run by bash in test/e2e/playgroundCurl.test.ts.
describe('the playground request as curl, as text', () => {
  const request = { listingId: 'lst_1', query: "tenant's notice", topK: 3, mode: 'hybrid' as const };
  it('double-quotes the header so the shell expands the key, and single-quotes the body', () => {
    const curl = curlOf(request, 'http://127.0.0.1:4000/v1', false);
    expect(curl).toContain(`-H "Authorization: Bearer $KB_API_KEY"`);
    expect(curl).toContain(`-d '{"listingId":"lst_1","query":"tenant'\\''s notice","topK":3}'`);
    expect(curlOf(request, 'http://x/v1', false, 'kbs_"$x')).toContain(
      `-H "Authorization: Bearer kbs_\\"\\$x"`,
    );
  });
});
