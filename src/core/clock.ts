/** The one source of "now", injectable so tests can cross dates without sleeping. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
