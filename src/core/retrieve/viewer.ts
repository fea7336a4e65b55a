/** Who runs a query: the studio itself (CLI, playground), or an API caller by key and wallet. */
export type RetrievalViewer = 'studio' | { wallet: string; keyId?: string };
