import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { InvalidInput } from '../../../core/errors';
import { newId } from '../../../core/ids';
import { precheckUploadFiles } from '../../../core/ingest/precheck';
import { parseOrThrow } from '../../../core/validation';
import { UploadConfigSchema, UploadSchema, type UploadConfig } from '../../../shared/uploads';
import type { ServerDeps } from '../../deps';
import { receiveMultipart } from '../../multipart';
import { camelToSnakeKeys, type defineRoutes } from '../../route';
import { clientGone, writeGate } from '../../writeGate';

const UploadEnvelope = z.object({ data: UploadSchema }).meta({ id: 'UploadEnvelope' });
const GB = 1024 ** 3;
const CONFIG_KEYS = Object.keys(UploadConfigSchema.shape);

/**
 * A misspelt key (`embeding_model`) would otherwise be dropped and its default used without a word: the
 * config's keys are its schema's, in snake_case or camelCase.
 */
function refuseUnknownConfigKeys(rawConfig: unknown): void {
  if (!rawConfig || typeof rawConfig !== 'object' || Array.isArray(rawConfig)) return;
  // Each key as the schema will read it (camelToSnakeKeys), named in the message as it was sent.
  const asRead = (key: string) => Object.keys(camelToSnakeKeys({ [key]: true }) as object)[0] ?? key;
  const unknown = Object.keys(rawConfig).filter((key) => !CONFIG_KEYS.includes(asRead(key)));
  if (unknown.length === 0) return;
  const named = unknown.map((key) => JSON.stringify(key)).join(', ');
  throw new InvalidInput(
    `config: unknown key${unknown.length > 1 ? 's' : ''} ${named}; the accepted keys are ${CONFIG_KEYS.join(', ')} (camelCase also accepted, e.g. embeddingModel).`,
    { unknownKeys: unknown, acceptedKeys: CONFIG_KEYS },
  );
}

/** The `config` part as an upload takes it: JSON, only the schema's keys, each valid (400 otherwise). */
function parseConfig(text: string | undefined): UploadConfig {
  let rawConfig: unknown = {};
  if (text !== undefined) {
    try {
      rawConfig = JSON.parse(text);
    } catch {
      throw new InvalidInput(
        'config: not valid JSON; send a JSON-encoded object such as {"chunking":"recursive"}.',
      );
    }
  }
  refuseUnknownConfigKeys(rawConfig);
  return parseOrThrow(UploadConfigSchema, camelToSnakeKeys(rawConfig), 'config', 'config.');
}

export function uploadRoutes(route: ReturnType<typeof defineRoutes>, { services }: ServerDeps): void {
  const waitToWrite = writeGate(services);
  route({
    method: 'post',
    path: '/upload',
    summary: 'Bulk upload of knowledge-base files',
    description:
      'Multipart form: one or more `files` parts (ZIP archives of PDF, DOCX, HTML, Markdown, JSON, CSV files and JSONL pre-built embeddings; a single supported file also works) and an optional `config` part (JSON string; without it, recursive chunking and the listing’s embedding model, or the offline model for a new draft listing). Accepted with 202; processing runs in the background, all or nothing: follow it with GET /v1/upload/{id}. An archive containing an unsupported file type is refused at once with 415 naming each type and entry; unsafe paths, symlinks, encrypted entries, duplicate names (inside an archive, or across the upload’s files: an entry is stored under its path inside its archive), oversized files (zipped or sent by themselves), zip bombs and archives with no file to ingest are refused at once too. A failed upload’s progress ends on the stage `failed` (a completed one’s on `done`). Send `config` before the files: a config refused with 400, 403 or 404 (an unknown or another wallet’s listing) is then answered as soon as it arrives, without the archives being received, and the connection is closed.',
    tags: ['Uploads'],
    formBody: z.object({
      files: z
        .string()
        .meta({ format: 'binary', description: 'A ZIP archive (repeatable), at most 10 GB each.' }),
      config: z.string().optional().meta({
        description:
          'JSON-encoded UploadConfig, e.g. {"chunking":"recursive","embedding_model":"text-embedding-3-small"}. Optional: without it, every key takes its default. Unknown keys are refused with 400. Put it before the `files` parts to have a refused config answered before the archives are sent.',
      }),
    }),
    response: { status: 202, description: 'Accepted; processing in the background.', schema: UploadEnvelope },
    errors: [403, 404, 413, 415, 422],
    handler: async ({ req }) => {
      const wallet = req.principal!.wallet;
      const dir = join(services.dataDir, 'tmp', newId('upl', 12));
      let early: UploadConfig | undefined;
      const form = await receiveMultipart(
        req,
        dir,
        {
          fileField: 'files',
          textFields: ['config'],
          // A config sent before the files is checked (listing and owner included) before they are received.
          onField: (field, value) => {
            if (field !== 'config') return;
            const config = parseConfig(value);
            services.uploads.checkConfig(config, wallet);
            early = config;
          },
        },
        {
          maxFileBytes: 10 * GB,
          fileLimitName: 'per bulk archive', // Spec §8.
          maxFiles: 100,
          maxFieldBytes: 64 * 1024,
        },
      );
      try {
        const config = early ?? parseConfig(form.fields.config);
        await waitToWrite();
        if (clientGone(req)) {
          // Hung up while it waited: nothing is accepted, and its received files go.
          await rm(dir, { recursive: true, force: true });
          return undefined;
        }
        const upload = await services.uploads.accept({
          wallet,
          config,
          files: form.files.map((f) => ({ path: f.path, name: f.name })),
          dir,
          precheck: precheckUploadFiles,
        });
        return { data: upload };
      } catch (err) {
        // A refused upload keeps nothing: its received archives would otherwise pile up under tmp/.
        await rm(dir, { recursive: true, force: true });
        throw err;
      }
    },
  });

  route({
    method: 'get',
    path: '/upload/:id',
    summary: 'Progress and per-file results of an upload',
    tags: ['Uploads'],
    // No length cap: an id that names no upload is 404, however long (the URL is bounded at 16 KB).
    params: z.object({ id: z.string().min(1) }),
    response: { status: 200, description: 'The upload.', schema: UploadEnvelope },
    errors: [404],
    handler: ({ req, params }) => ({ data: services.uploads.get(params.id, req.principal!.wallet) }),
  });
}
