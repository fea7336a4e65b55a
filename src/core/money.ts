export const LAMPORTS_PER_SOL = 1_000_000_000;

/** Prices are stored as integer lamports so sums and comparisons are exact. */
export const solToLamports = (sol: number): number => Math.round(sol * LAMPORTS_PER_SOL);
export const lamportsToSol = (lamports: number): number => lamports / LAMPORTS_PER_SOL;

/**
 * The most lamports not above `sol` SOL: a filter's bound (`maxPrice=0.0099999999999` must not admit a
 * price of 0.01). Rounded first, so a decimal the double cannot hold exactly (0.3) is not cut short.
 */
export const solToLamportsAtMost = (sol: number): number => {
  const lamports = solToLamports(sol);
  return lamports / LAMPORTS_PER_SOL > sol ? lamports - 1 : lamports;
};
