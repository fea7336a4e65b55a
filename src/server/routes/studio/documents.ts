import { z } from 'zod';
import { MATCH_COUNT_LIMIT, SqliteDocumentRepository } from '../../../db/repositories/documents';
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

  route({
    method: 'get',
    path: '/listings/:id/documents',
    summary: "The documents of a listing's knowledge base, by source: what a list names each one by",
    description:
      '`data`: every document, ordered by source, as `{ id, source, format, chunkCount, documentCount }` ' +
      '(`documentCount`: the items of a JSON array file, else 1). The whole record (metadata, ' +
      '`contentHash`, `bytes`, `sourceKept`, dates) is `GET /studio/documents/:id`, read for one document ' +
      'at a time (docs/studio.md, "Many documents").',
    tags,
    params: IdParams,
    response: ok,
    errors: [404],
    handler: ({ params }) => {
      services.listings.get(params.id, 'studio');
      return { data: documents.list(params.id) };
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
    summary: 'One document, whole: with its metadata and whether its original file was kept',
    description:
      '`sourceKept`: whether the original file is in the source store, so the document can be re-ingested.',
    tags,
    params: IdParams,
    response: ok,
    errors: [404],
    handler: ({ params }) => {
      const document = documents.get(params.id);
      return { data: { ...document, sourceKept: services.sources.has(document.contentHash) } };
    },
  });

  route({
    method: 'get',
    path: '/documents/:id/chunks',
    summary: "A document's chunks in order, optionally those matching words (full text), paginated",
    description:
      '`pagination.totalRelation` says what `total` is: `eq`, exact (every chunk of the document, or ' +
      `every match); \`gte\`, a lower bound: matches of \`q\` are counted up to ${MATCH_COUNT_LIMIT.toLocaleString('en-US')} ` +
      '(or to the end of the page asked for, when further), and more match. `hasMore` is true while a ' +
      'further page holds chunks.',
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
          hasMore: page.totalRelation === 'gte' || query.offset + page.items.length < page.total,
          totalRelation: page.totalRelation,
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
