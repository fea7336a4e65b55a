import { CANDIDATES_PER_SEARCH } from './hybrid';

/**
 * Weight of the latest query in a listing's widening rate (an exponential average over about its last
 * 20 queries): at 0.2, a run of three or four widenings among queries that mostly settle (30% widened on
 * 500k texts embedded by the offline model) put a listing on the full pool, and a query then cost the
 * full pool where it would mostly have settled for less.
 */
const LATEST_WEIGHT = 0.05;
/** Past this widening rate, a listing's hybrid queries ask for the full dense pool at once. */
const MOSTLY_WIDENED = 0.5;
/**
 * While they do, one query in this many tries the first pool again, to notice when that changes: rarely
 * enough that those tries (a dense search more) stay out of the 95th percentile.
 */
const PROBE_EVERY = 32;

/**
 * Per listing, which dense pool its hybrid queries ask for first (rankChunks' `firstDensePool`). The first
 * pool saves rescoring when it settles, and costs a second dense search when it does not: on real text
 * and its embeddings nearly every query settles (dbpedia-5k: all), but where the dense and full-text parts
 * disagree (the benchmark's synthetic vectors beside natural text), nearly every query widens. So each
 * listing's recent queries decide.
 */
export class DensePoolChoice {
  private readonly listings = new Map<string, { widened: number; sinceProbe: number }>();

  /** The first pool to ask for: undefined for rankChunks' default, or the full pool at once. */
  firstPool(listingId: string): number | undefined {
    const seen = this.listings.get(listingId);
    if (!seen || seen.widened <= MOSTLY_WIDENED) return undefined;
    if (++seen.sinceProbe < PROBE_EVERY) return CANDIDATES_PER_SEARCH;
    seen.sinceProbe = 0;
    return undefined;
  }

  /** What a query that asked for the first pool found: it settled there, or widened to the full pool. */
  record(listingId: string, widened: boolean): void {
    const seen = this.listings.get(listingId) ?? { widened: 0, sinceProbe: 0 };
    seen.widened += LATEST_WEIGHT * ((widened ? 1 : 0) - seen.widened);
    this.listings.set(listingId, seen);
  }
}
