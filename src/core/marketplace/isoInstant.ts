import { z } from 'zod';
import { InvalidInput } from '../errors';

/**
 * A calendar date (midnight UTC) or a date and time with its offset, each a real one: `Date.parse` alone
 * took `2027-02-30` for 2 March, `1` for the year 2001 and `12/31/2027` as it came.
 */
const IsoInstantSchema = z.union([z.iso.date(), z.iso.datetime({ offset: true })]);

/** `value` as an ISO 8601 instant (`toISOString`); an InvalidInput naming `field` when it is not one. */
export function isoInstant(value: string, field: string): string {
  if (!IsoInstantSchema.safeParse(value).success) {
    // A date and time without an offset is ISO 8601 too, but names no instant (whose midnight?).
    if (z.iso.datetime({ local: true }).safeParse(value).success) {
      throw new InvalidInput(
        `${field}: '${value}' has no offset, so it names no instant: add Z for UTC or the offset (${value}Z, ${value}+02:00), or give YYYY-MM-DD.`,
      );
    }
    throw new InvalidInput(
      `${field}: '${value}' is not an ISO 8601 date: give YYYY-MM-DD, or a date and time with its offset (2027-01-31T12:00:00Z).`,
    );
  }
  return new Date(value).toISOString();
}
