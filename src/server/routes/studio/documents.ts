import { z } from 'zod';
import { SqliteDocumentRepository, type DocumentSummary } from '../../../db/repositories/documents';
import type { ServerDeps } from '../../deps';
import type { defineRoutes } from '../../route';
import { queryInteger } from '../../../shared/queryNumbers';

const IdParams = z.object({ id: z.string().min(1).max(100) });
const ChunkQuerySchema = z.object({
  q: z.string().max(500).optional(),
  limit: queryInteger((n) => n.min(1).max(200)).default(50),
  offset: queryInteger((n) => n.min(0)).default(0),
});

/** The Inspect view: a knowledge base's documents and their chunks; deleting a document. */
export function documentRoutes(route: ReturnType<typeof defineRoutes>, { services }: ServerDeps): void {
  const documents = new SqliteDocumentRepository(services.db);
  const tags = ['Studio'];
  const ok = { status: 200, description: 'OK' };
  /** `sourceKept`: whether the original file is in the source store, so the document can be re-ingested. */
  const withKeptSource = (docs: DocumentSummary[]) =>
    docs.map((d) => ({ ...d, sourceKept: services.sources.has(d.contentHash) }));

  route({
    method: 'get',
    path: '/listings/:id/documents',
    summary: "The documents of a listing's knowledge base",
    tags,
    params: IdParams,
    response: ok,
    errors: [404],
    handler: ({ params }) => {
      services.listings.get(params.id, 'studio');
      return { data: withKeptSource(documents.list(params.id)) };
    },
  });

  route({
    method: 'get',
    path: '/knowledge-bases',
    summary: 'The size of every knowledge base: documents, chunks and bytes of the original files',
    description: 'Listings whose knowledge base holds no document are left out.',
    tags,
    response: ok,
    handler: () => ({ data: documents.sizes() }),
  });

  route({
    method: 'get',
    path: '/documents/:id',
    summary: 'One document',
    tags,
    params: IdParams,
    response: ok,
    errors: [404],
    handler: ({ params }) => ({ data: withKeptSource([documents.get(params.id)])[0] }),
  });

  route({
    method: 'get',
    path: '/documents/:id/chunks',
    summary: "A document's chunks in order, optionally those matching words (full text), paginated",
    tags,
    params: IdParams,
    query: ChunkQuerySchema,
    response: ok,
    errors: [404],
    handler: ({ params, query }) => {
      const page = documents.chunks(params.id, query);
      return {
        data: page.items,
        pagination: {
          total: page.total,
          limit: query.limit,
          offset: query.offset,
          hasMore: query.offset + page.items.length < page.total,
        },
      };
    },
  });

  route({
    method: 'delete',
    path: '/documents/:id',
    summary: 'Delete a document with its chunks and vectors',
    tags,
    params: IdParams,
    response: ok,
    errors: [404],
    handler: async ({ params }) => {
      // Checked here first: a JSON file's item is refused with its file named, without a worker started.
      documents.get(params.id);
      // On a worker: a large document takes seconds to delete, during which this thread keeps serving.
      const deleted = documents.deleted(params.id, await services.knowledgeBase.deleteDocument(params.id));
      await services.pruneSources();
      return { data: deleted };
    },
  });
}
