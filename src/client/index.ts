export {
  KnowledgeClient,
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT_MS,
  type KnowledgeClientOptions,
} from './client';
export {
  AccessError,
  ApiError,
  AuthenticationError,
  ConnectionError,
  KnowledgeClientError,
  NotFoundError,
  RateLimitError,
  TimeoutError,
  UserAbortError,
  type ApiErrorInit,
} from './errors';
export { walletAuthMessage, type WalletSigner } from './auth';
export { ApiPromise } from './http/apiPromise';
export type { Fetch, RequestOptions } from './http/request';
export type { UploadProgress } from './http/uploadBody';
export type { RateLimitInfo, WithResponse } from './http/response';
export { Page, PagePromise } from './pagination';
export { RetrievalStream } from './stream';
export type { UploadOptions, WaitOptions } from './resources/uploads';
export type { Listings } from './resources/listings';
export type { Credentials } from './resources/credentials';
export type { Uploads } from './resources/uploads';
export type * from './types';
