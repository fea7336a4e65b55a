import type { ApiPromise } from '../http/apiPromise';
import { envelopeData, jsonCall, resourcePath } from '../http/calls';
import type { RequestOptions, Transport } from '../http/request';
import { listCall, type PagePromise } from '../pagination';
import type { Credential, CredentialListParams, CredentialVerification } from '../types';

export class Credentials {
  constructor(private readonly transport: Transport) {}

  /** GET /credentials: the caller's active credentials (another `status` on request), newest first; await for a page or iterate for all. */
  list(params: CredentialListParams = {}, options?: RequestOptions): PagePromise<Credential> {
    return listCall<Credential>(this.transport, '/credentials', { ...params }, options);
  }

  /** GET /credentials/:listing_id: `valid` is true exactly when `status` is `active`. */
  verify(listingId: string, options?: RequestOptions): ApiPromise<CredentialVerification> {
    return jsonCall(
      this.transport,
      () => ({
        method: 'GET',
        path: resourcePath('/credentials', listingId, 'credentials.verify: listingId'),
      }),
      options,
      envelopeData<CredentialVerification>,
    );
  }
}
