export const LAMPORTS_PER_SOL = 1_000_000_000;

/** Prices are stored as integer lamports so sums and comparisons are exact. */
export const solToLamports = (sol: number): number => Math.round(sol * LAMPORTS_PER_SOL);
export const lamportsToSol = (lamports: number): number => lamports / LAMPORTS_PER_SOL;
