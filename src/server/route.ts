import { Router, type Request, type Response } from 'express';
import type { OpenAPIRegistry, RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { InvalidInput } from '../core/errors';
import { describeIssues } from '../core/validation';
import { ErrorBodySchema } from '../shared/errors';
import { clientGone, type WriteGate } from './writeGate';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface RouteInput<P, Q, B> {
  req: Request;
  res: Response;
  params: P;
  query: Q;
  body: B;
}

export interface RouteDefinition<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
> {
  method: Method;
  /** Express-style path relative to the router, e.g. `/listings/:id`. */
  path: string;
  summary: string;
  description?: string;
  tags: string[];
  params?: P;
  query?: Q;
  body?: B;
  /** A multipart/form-data body the handler reads itself (streamed); documented, not parsed here. */
  formBody?: z.ZodObject;
  /** Public endpoints skip the security requirement in the OpenAPI document. */
  public?: boolean;
  /**
   * false for a POST that writes nothing a request waits for (retrieval: its query log is written
   * later; a charged query waits in the retrieval service itself), so it is answered at once while an
   * ingestion's commit holds the write lock.
   */
  writes?: boolean;
  response: { status: number; description: string; schema?: z.ZodType; contentType?: string };
  /** Error statuses this endpoint can answer with, besides 401/429/500. */
  errors?: number[];
  /** Returns the JSON body to send, or undefined when it wrote the response itself. */
  handler: (input: RouteInput<z.output<P>, z.output<Q>, z.output<B>>) => unknown | Promise<unknown>;
}

/** A route as defineRoutes registered it: full Express-style path and its definition (schemas included). */
export interface DefinedRoute {
  method: Method;
  /** Prefix + path, e.g. `/v1/listings/:id`. */
  path: string;
  definition: RouteDefinition;
}

interface RouterRecord {
  prefix: string;
  routes: DefinedRoute[];
}

/** The routers defineRoutes has registered on, so a test can list every route of an app with its schemas. */
const definedRouters = new WeakMap<object, RouterRecord>();

/**
 * Registers a route on the Express router and in the OpenAPI registry from one definition, so the
 * schemas that validate a request are the ones the document shows, and no route goes undocumented.
 */
export function defineRoutes(
  router: Router,
  registry: OpenAPIRegistry | undefined,
  prefix: string,
  options: { writeGate?: WriteGate } = {},
) {
  const record = definedRouters.get(router) ?? { prefix, routes: [] };
  definedRouters.set(router, record);
  return function route<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType>(
    def: RouteDefinition<P, Q, B>,
  ): void {
    record.routes.push({ method: def.method, path: prefix + def.path, definition: def as RouteDefinition });
    router[def.method](def.path, async (req, res, next) => {
      try {
        // A body that could not be read (readJsonBody) matters only to a route that reads one.
        if (req.bodyError !== undefined && (def.body !== undefined || def.method !== 'get')) {
          throw req.bodyError;
        }
        const params = def.params ? parseInput(def.params, req.params, 'path') : {};
        const query = def.query
          ? parseInput(
              def.query,
              singleValued(def.query, camelKeys(refuseBracketed(def.query, req.query))),
              'query',
            )
          : {};
        // req.is is null without a body at all: the header may well have been sent.
        const json = def.body ? req.is('application/json') : true;
        if (json === null) {
          throw new InvalidInput(
            'body: the request has none; send a JSON object with "Content-Type: application/json".',
          );
        }
        if (!json) throw new InvalidInput('body: send a JSON body with "Content-Type: application/json".');
        const body = def.body
          ? parseInput(def.body, camelKeys(req.body, fieldsOf(def.body)), 'body')
          : undefined;
        // A write waits (validated first) while a commit this thread feeds holds the lock, rather than
        // failing busy. Multipart routes receive their files first and wait in their handlers.
        if (options.writeGate && def.method !== 'get' && def.writes !== false && !def.formBody) {
          await options.writeGate();
          if (clientGone(req)) return;
        }
        const result = await def.handler({ req, res, params, query, body } as RouteInput<
          z.output<P>,
          z.output<Q>,
          z.output<B>
        >);
        if (result !== undefined && !res.headersSent) res.status(def.response.status).json(result);
      } catch (err) {
        next(err);
      }
    });
    registry?.registerPath(toOpenApi(def, prefix));
  };
}

interface StackLayer {
  handle?: { stack?: StackLayer[] };
  route?: { path: unknown; methods: Record<string, boolean> };
}

export interface RouteTable {
  /** Every route registered through defineRoutes under the app. */
  defined: DefinedRoute[];
  /** Routes found on those same routers that did not go through defineRoutes (unvalidated, undocumented). */
  undeclared: { method: string; path: string }[];
}

/**
 * Walks an Express app's (or router's) middleware stack and lists the routes defined with defineRoutes,
 * plus any route added to one of their routers by hand. The property and access tests enumerate
 * endpoints from here, so a new route is covered without editing them.
 */
export function routeTable(appOrRouter: object): RouteTable {
  const table: RouteTable = { defined: [], undeclared: [] };
  const seen = new Set<object>();
  const visit = (handle: object) => {
    if (seen.has(handle)) return;
    seen.add(handle);
    const record = definedRouters.get(handle);
    if (record) table.defined.push(...record.routes);
    const stack = (handle as { stack?: StackLayer[] }).stack ?? [];
    for (const layer of stack) {
      if (layer.route && record) {
        // A route of several paths is middleware for them (the retrieval rate limit, v1/index.ts).
        for (const one of [layer.route.path].flat()) {
          const path = record.prefix + String(one);
          for (const [method, on] of Object.entries(layer.route.methods)) {
            if (on && !record.routes.some((r) => r.method === method && r.path === path)) {
              table.undeclared.push({ method, path });
            }
          }
        }
      }
      if (layer.handle && Array.isArray(layer.handle.stack)) visit(layer.handle);
    }
  };
  visit((appOrRouter as { router?: object }).router ?? appOrRouter);
  return table;
}

function parseInput<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  throw new InvalidInput(describeIssues(result.error.issues, where), {
    issues: result.error.issues.map((i) => ({ in: where, path: i.path.map(String), message: i.message })),
  });
}

/**
 * qs-style arrays and objects (`q[]=a`, `limit[x]=1`) of a parameter the route reads are a 400: the
 * simple parser keeps them as keys of their own, so the page was answered unfiltered without a word.
 */
function refuseBracketed(schema: z.ZodType, query: unknown): unknown {
  const known = fieldsOf(schema) ?? [];
  for (const key of Object.keys((query as Record<string, unknown> | undefined) ?? {})) {
    const base = /^([^[\]]+)\[/.exec(key)?.[1];
    if (base && known.includes(camelKeyOf(base))) {
      throw new InvalidInput(`${camelKeyOf(base)}: given as '${key}'; send it once, as ${base}=value.`);
    }
  }
  return query;
}

/**
 * The query as given, unless a parameter the route reads is given more than once (`?limit=1&limit=2`):
 * a 400 naming it (zod would only say "expected number, received NaN"). Unknown ones stay ignored.
 */
function singleValued(schema: z.ZodType, query: unknown): unknown {
  const known = fieldsOf(schema) ?? [];
  for (const key of known) {
    const value = (query as Record<string, unknown> | undefined)?.[key];
    if (Array.isArray(value)) {
      throw new InvalidInput(
        `${key}: given ${value.length} times (${value.map(String).join(', ')}); send it once.`,
      );
    }
  }
  return query;
}

/** The fields of an object schema (undefined for any other schema: then every key is read as sent). */
export const fieldsOf = (schema: z.ZodType): string[] | undefined =>
  schema instanceof z.ZodObject ? Object.keys(schema.shape) : undefined;

/**
 * The hosted service's wire casing is unpublished, so requests may also use snake_case names
 * (top_k, access_model, ...); the camelCase name wins when both are sent.
 */
const camelKeyOf = (key: string) => key.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
/** `min_score`, `top_k`: not `_x` or `__proto__`, which spell no camelCase field (it was `_Proto__`). */
const SNAKE_CASE = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$/;

export function camelKeys(value: unknown, fields?: readonly string[]): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const [key, v] of Object.entries(value)) {
    if (!SNAKE_CASE.test(key)) continue;
    const camel = camelKeyOf(key);
    // A key that spells no field stays as sent, so that a refusal names it as the caller wrote it
    // (`foo_bar`, not `fooBar`).
    if (fields && !fields.includes(camel)) continue;
    if (!(camel in out)) out[camel] = v;
    delete out[key];
  }
  return out;
}

/**
 * The reverse, for the upload `config`, whose documented keys are snake_case. As everywhere in the API
 * (docs/api.md), the camelCase spelling wins when both are sent.
 */
export function camelToSnakeKeys(value: unknown): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const [key, v] of Object.entries(value)) {
    if (!/[A-Z]/.test(key)) continue;
    const snake = key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    out[snake] = v;
    delete out[key];
  }
  return out;
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request: the message names the field.',
  401: 'Authentication failed.',
  403: 'Access denied.',
  404: 'Not found.',
  408: 'The request did not arrive in time (`request_timeout`: its headers within 60 s, all of it within 300 s), refused before any route reads it.',
  409: 'Conflict.',
  413: 'Payload too large.',
  415: 'Unsupported file type.',
  422: 'Unprocessable content.',
  429: 'Rate limit exceeded; see Retry-After.',
  431: 'The request line and headers exceed 16 KB (`headers_too_large`), refused before any route reads them.',
  500: 'Internal error (with Retry-After when the database was busy storing another change).',
  503: 'A provider is unavailable.',
};

const RATE_HEADERS = z.object({
  'X-RateLimit-Limit': z.string().meta({ description: 'Requests allowed in the current window.' }),
  'X-RateLimit-Remaining': z.string().meta({ description: 'Requests left in the current window.' }),
  'X-RateLimit-Reset': z.string().meta({ description: 'Unix time (seconds) when the window resets.' }),
  'X-Request-Id': z.string(),
});

const retryAfter = z.string().meta({ description: 'Seconds to wait before sending the request again.' });

/**
 * Every response carries the X-RateLimit-* headers (spec §8), errors included; a 429 also Retry-After,
 * and so does a 500 refused because the database was busy (middleware/errors.ts).
 */
function headersFor(status: number): z.ZodObject {
  if (status === 429) return RATE_HEADERS.extend({ 'Retry-After': retryAfter });
  if (status === 500) return RATE_HEADERS.extend({ 'Retry-After': retryAfter.optional() });
  return RATE_HEADERS;
}

function toOpenApi(def: RouteDefinition, prefix: string): RouteConfig {
  // A JSON body past the server's limit (1 MB) is a 413 on every route that reads one; request lines
  // and headers over 16 KB are a 431 on any, a request that does not arrive in time a 408 (clientError.ts).
  const errorStatuses = [
    ...new Set([
      400,
      ...(def.public ? [] : [401]),
      408,
      ...(def.body ? [413] : []),
      429,
      431,
      500,
      ...(def.errors ?? []),
    ]),
  ];
  const responses: RouteConfig['responses'] = {
    [def.response.status]: {
      description: def.response.description,
      headers: RATE_HEADERS,
      ...(def.response.schema
        ? { content: { [def.response.contentType ?? 'application/json']: { schema: def.response.schema } } }
        : {}),
    },
  };
  for (const status of errorStatuses.sort()) {
    responses[status] = {
      description: ERROR_DESCRIPTIONS[status] ?? 'Error.',
      headers: headersFor(status),
      content: { 'application/json': { schema: ErrorBodySchema } },
    };
  }
  return {
    method: def.method,
    path: prefix + def.path.replace(/:([A-Za-z_]+)/g, '{$1}'),
    summary: def.summary,
    description: def.description,
    tags: def.tags,
    // Wallet signatures cover JSON bodies only (docs/api.md): a multipart route takes an API key.
    security: def.public
      ? []
      : def.formBody
        ? [{ bearerAuth: [] }]
        : [{ bearerAuth: [] }, { walletSignature: [] }],
    request: {
      ...(def.params ? { params: def.params as z.ZodObject } : {}),
      ...(def.query ? { query: def.query as z.ZodObject } : {}),
      ...(def.body
        ? { body: { required: true, content: { 'application/json': { schema: def.body } } } }
        : {}),
      ...(def.formBody
        ? { body: { required: true, content: { 'multipart/form-data': { schema: def.formBody } } } }
        : {}),
    },
    responses,
  };
}
