/**
 * Why a push stopped as a whole. Not a DomainError: the codes describe the remote service
 * (`remote_unreachable`, ...), not this API, so they stay out of the wire error table.
 */
export class PushFailed extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'PushFailed';
  }
}
