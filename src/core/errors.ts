import type { ErrorCode } from '../shared/errors';

/**
 * A failure of the domain, carrying its wire code. The server turns it into the error body in one
 * place (middleware/errors.ts); the CLI prints the same body with --json.
 */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class InvalidInput extends DomainError {
  constructor(message: string, details?: unknown) {
    super('invalid_request', message, details);
  }
}

export class Unauthorized extends DomainError {
  constructor(message = 'Authentication failed: send "Authorization: Bearer <API key>".') {
    super('unauthorized', message);
  }
}

export class Forbidden extends DomainError {
  constructor(message: string) {
    super('forbidden', message);
  }
}

export class NotFound extends DomainError {
  constructor(message: string) {
    super('not_found', message);
  }
}

export class ListingNotFound extends DomainError {
  constructor(readonly listingId: string) {
    super('listing_not_found', `Listing '${listingId}' was not found.`);
  }
}

export class Conflict extends DomainError {
  constructor(message: string) {
    super('conflict', message);
  }
}
