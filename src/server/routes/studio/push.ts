import { z } from 'zod';
import { Conflict, InvalidInput } from '../../../core/errors';
import { PushJobs } from '../../../core/push/jobs';
import { BULK_PART_LIMITS } from '../../../core/push/plan';
import { pushListing } from '../../../core/push/push';
import { checkApiKey, normalizeBaseUrl } from '../../../core/push/targets';
import { pushTargetsOf } from '../../../core/push/wiring';
import { PushTargetInputSchema, PushTargetPatchSchema, StartPushSchema } from '../../../shared/push';
import type { ServerDeps } from '../../deps';
import { jobRoutes } from '../../jobEvents';
import type { defineRoutes } from '../../route';

const IdParams = z.object({ id: z.string().min(1).max(100) });

/**
 * Push to the hosted service (DESIGN §5): remembered targets (the key is never sent back, only
 * masked), and push jobs followed like ingestion jobs: a snapshot, server-sent events, cancel.
 */
export function pushRoutes(route: ReturnType<typeof defineRoutes>, { services }: ServerDeps): void {
  const targets = pushTargetsOf(services);
  const jobs = new PushJobs(services.pushJournal);
  const starting = new Set<string>();
  const tags = ['Studio'];

  route({
    method: 'get',
    path: '/push/targets',
    summary: 'Remembered push targets (keys masked)',
    tags,
    response: { status: 200, description: 'OK' },
    handler: () => ({ data: targets.list() }),
  });
  route({
    method: 'post',
    path: '/push/targets',
    summary: 'Remember a push target (a target with the same base URL is updated)',
    tags,
    body: PushTargetInputSchema,
    response: { status: 201, description: 'The target, key masked' },
    errors: [400],
    handler: ({ body }) => ({ data: targets.save(body) }),
  });
  route({
    method: 'patch',
    path: '/push/targets/:id',
    summary: "Change a push target's base URL, label or key",
    tags,
    params: IdParams,
    body: PushTargetPatchSchema,
    response: { status: 200, description: 'The target, key masked' },
    errors: [400, 404],
    handler: ({ params, body }) => ({ data: targets.update(params.id, body) }),
  });
  route({
    method: 'delete',
    path: '/push/targets/:id',
    summary: 'Forget a push target and its key',
    tags,
    params: IdParams,
    response: { status: 200, description: 'The forgotten target' },
    errors: [404],
    handler: ({ params }) => ({ data: targets.remove(params.id) }),
  });

  route({
    method: 'post',
    path: '/push',
    summary: "Push a listing's knowledge base to a hosted /v1 service (background job)",
    description:
      'Body: `listingId` and either `targetId` (a remembered target) or `baseUrl` + `apiKey` (with `remember: true`, remembered once the service has accepted the key). Answers 202 with the job; follow it with GET /studio/push/jobs/{id}/events.',
    tags,
    body: StartPushSchema,
    response: { status: 202, description: 'Accepted' },
    errors: [400, 404, 409],
    handler: async ({ res, body }) => {
      let baseUrl: string;
      let apiKey: string;
      let remember: (() => void) | undefined;
      if (body.targetId) {
        const target = targets.get(body.targetId);
        baseUrl = target.baseUrl;
        apiKey = body.apiKey ?? targets.apiKeyOf(target.id);
      } else {
        if (!body.apiKey) throw new InvalidInput('apiKey: give the API key of the hosted service.');
        baseUrl = normalizeBaseUrl(body.baseUrl!);
        apiKey = body.apiKey;
        if (body.remember) {
          // Saved once the service accepted the key: a refused key, a wrong address, an unknown or busy
          // listing must not replace a working key (never sent back, so it could not be restored).
          const key = checkApiKey(apiKey);
          const url = baseUrl;
          remember = () => void targets.save({ baseUrl: url, apiKey: key });
        }
      }
      const busy = jobs.list().find((j) => j.state === 'running' && j.listingId === body.listingId);
      if (busy || starting.has(body.listingId)) {
        throw new Conflict(
          `Listing '${body.listingId}' is already being pushed${busy ? ` (job ${busy.id})` : ''}; wait for it or cancel it.`,
        );
      }
      const partLimits = {
        maxBytes: body.maxPartBytes ?? BULK_PART_LIMITS.maxBytes,
        maxFiles: body.maxPartFiles ?? BULK_PART_LIMITS.maxFiles,
      };
      // Two pushes of one listing at once would each create a remote draft.
      starting.add(body.listingId);
      const job = await jobs
        .start((signal, onUpdate) =>
          pushListing(
            {
              listingId: body.listingId,
              baseUrl,
              apiKey,
              partLimits,
              signal,
              onUpdate,
              newRemoteListing: body.newListing,
              onKeyAccepted: remember,
            },
            services,
            targets,
          ),
        )
        .finally(() => starting.delete(body.listingId));
      res.status(202);
      return { data: job };
    },
  });

  route({
    method: 'get',
    path: '/push/jobs',
    summary: 'Push jobs of this launch and those a stop interrupted, newest first',
    description:
      'A push the studio was running when it stopped (killed, crashed, closed) is reported with state `interrupted`, its target and plan, until it is dismissed or another push of its listing completes.',
    tags,
    response: { status: 200, description: 'OK' },
    handler: () => ({ data: jobs.list() }),
  });
  jobRoutes(route, jobs, {
    path: '/push/jobs',
    noun: 'A push job',
    snapshot: 'parts, progress, and the per-file report',
    outcome: 'the report',
    cancelSummary: 'Cancel a push (parts the remote already accepted stay there)',
    dismissSummary: "Forget an interrupted push's report",
    tags,
    labelsOf: (job) => job.parts.map((part) => part.state),
  });
}
