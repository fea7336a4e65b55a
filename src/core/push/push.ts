import { createHash } from 'node:crypto';
import { openAsBlob } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  AccessError,
  ApiError,
  AuthenticationError,
  ConnectionError,
  KnowledgeClient,
  NotFoundError,
  RateLimitError,
  UserAbortError,
  type Fetch,
  type Upload,
  type UploadConfig,
} from '../../client';
import { retryAfterMs } from '../../client/errors';
import type { PushFileReport, PushPart, PushReport } from '../../shared/push';
import { InvalidInput } from '../errors';
import { newId } from '../ids';
import type { ExistingDocument } from '../ingest/store';
import type { Listing } from '../../shared/listings';
import { PushFailed } from './errors';
import { partEnded } from './jobJournal';
import { packPart } from './pack';
import { BULK_PART_LIMITS, planParts, type PartLimits, type PlannedPart } from './plan';
import { normalizeBaseUrl } from './targets';

/** What a push reads locally: the services of a data directory fit it as they are. */
export interface PushDeps {
  dataDir: string;
  listings: { get(id: string, viewer: 'studio'): Listing };
  knowledgeBase: { documents(listingId: string): ExistingDocument[] };
  sources: { pathOf(hash: string): string; has(hash: string): boolean };
}

/** Where a push remembers the remote listing of each local listing, per service. */
export interface RemoteListingMemory {
  remoteListing(baseUrl: string, listingId: string): string | undefined;
  /** The fingerprint (apiKeyFingerprint) of the key the remote listing was last pushed with, if known. */
  remoteListingKey(baseUrl: string, listingId: string): string | undefined;
  rememberRemoteListing(
    baseUrl: string,
    listingId: string,
    remoteId: string | undefined,
    keyFingerprint?: string,
  ): void;
}

/** Which API key a remote listing was pushed with, without keeping the key: 16 hex of its SHA-256. */
export function apiKeyFingerprint(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('hex').slice(0, 16);
}

export interface PushRequest {
  listingId: string;
  baseUrl: string;
  apiKey: string;
  /** Default: the spec's bulk threshold (500 MB, 1,000 files per part). */
  partLimits?: PartLimits;
  /** Sending attempts per part (default 4: the first and three retries). */
  maxAttempts?: number;
  /** Wait before retry number `retry` (0-based) when the remote did not say (default 1 s, 2 s, 4 s...). */
  backoffMs?: (retry: number) => number;
  /** Time between two looks at the remote's processing (default from 0.2 s growing to 2 s). */
  pollIntervalMs?: number;
  /** Longest pause while sending, and the wait for the remote's answer (default 60 s). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Called with the report as it changes (at most every 100 ms, and at every change of state). */
  onUpdate?: (report: PushReport) => void;
  /** Another fetch for the remote (tests). */
  fetch?: Fetch;
  /** Make a new draft listing on the remote, even if one is remembered for this listing there. */
  newRemoteListing?: boolean;
  /**
   * Called once the remote has accepted the API key (it answered the check before packing, or took a
   * part), at most once a push; never when the push stopped before that. Where a key is saved for later
   * pushes (`--remember`): a refused key, a wrong address or an unknown listing must not replace a
   * working one.
   */
  onKeyAccepted?: () => void;
  now?: () => Date;
}

/** The remote's own failures of an upload that a new attempt may get past. */
const TRANSIENT_REMOTE_CODES = new Set(['internal_error', 'embedding_provider_unavailable']);
/** The longest Retry-After a push waits for before giving up on a part. */
const MAX_RETRY_AFTER_MS = 5 * 60_000;
const UPDATE_EVERY_MS = 100;
/** The longest wait for the remote's answer to the push's first question (is it an API?). */
const PREFLIGHT_TIMEOUT_MS = 15_000;

/**
 * Pushes a listing's knowledge base to a `/v1` service: packs its kept sources into ZIP parts within
 * the bulk threshold, POSTs each to `/upload` with the chunking the documents were ingested with, and
 * follows it to the end. Sending again is safe: the remote reports files it already holds as
 * `unchanged`. Resolves with the report whatever happened to the parts; `report.error` says why a push
 * stopped early (authentication, unreachable host, cancellation).
 */
export async function pushListing(
  request: PushRequest,
  deps: PushDeps,
  memory: RemoteListingMemory,
): Promise<PushReport> {
  const now = request.now ?? (() => new Date());
  const baseUrl = normalizeBaseUrl(request.baseUrl);
  const listing = deps.listings.get(request.listingId, 'studio');
  const documents = deps.knowledgeBase.documents(listing.id);
  if (documents.length === 0) {
    throw new InvalidInput(`Listing '${listing.id}' has no documents to push: ingest some first.`);
  }
  const kept = new Set<string>();
  for (const doc of documents) if (deps.sources.has(doc.contentHash)) kept.add(doc.contentHash);
  const plan = planParts(
    documents,
    (doc) => (kept.has(doc.contentHash) ? deps.sources.pathOf(doc.contentHash) : undefined),
    request.partLimits ?? BULK_PART_LIMITS,
  );

  const report: PushReport = {
    listingId: listing.id,
    target: baseUrl,
    remoteListingId: request.newRemoteListing ? null : (memory.remoteListing(baseUrl, listing.id) ?? null),
    state: 'running',
    parts: plan.parts.map((part, i) => partReport(part, i + 1)),
    missing: plan.missing.map((m) => ({
      ...m,
      status: 'missing',
      chunks: 0,
      error: {
        code: 'source_missing',
        message: `${m.source}: its original file is not kept in this studio (ingested before sources were kept); ingest it again to push it.`,
      },
    })),
    totals: emptyTotals(),
    documentCount: documents.reduce((n, d) => n + d.documentCount, 0),
    remoteDocumentCount: null,
    remoteChunkCount: null,
    error: null,
    startedAt: now().toISOString(),
    finishedAt: null,
  };
  const notifier = new Notifier(report, request.onUpdate);
  const client = new KnowledgeClient({
    baseUrl,
    apiKey: request.apiKey,
    timeoutMs: request.timeoutMs ?? 60_000,
    fetch: request.fetch,
  });
  const keyFingerprint = apiKeyFingerprint(request.apiKey);
  // Pushed before with another key: a 404 for the remembered listing may mean "not this key's".
  const madeWithOtherKey = () => {
    const madeWith = memory.remoteListingKey(baseUrl, listing.id);
    return madeWith !== undefined && madeWith !== keyFingerprint;
  };
  const sender = new PartSender(request, client, listing, report, notifier, madeWithOtherKey, (remoteId) => {
    report.remoteListingId = remoteId ?? null;
    memory.rememberRemoteListing(baseUrl, listing.id, remoteId, remoteId ? keyFingerprint : undefined);
    // Reported (and so journalled) at once: a push stopped from here on names the listing it wrote to.
    notifier.update(true);
  });

  let keyAccepted = false;
  const acceptKey = () => {
    if (keyAccepted) return;
    keyAccepted = true;
    request.onKeyAccepted?.();
  };

  const workDir = join(deps.dataDir, 'tmp', newId('push', 12));
  await mkdir(workDir, { recursive: true });
  notifier.update(true);
  try {
    const answered = await checkRemoteApi(
      client,
      baseUrl,
      request.signal,
      Math.min(PREFLIGHT_TIMEOUT_MS, request.timeoutMs ?? Infinity),
    );
    if (answered) acceptKey();
    for (const [i, planned] of plan.parts.entries()) {
      const part = report.parts[i]!;
      const zip = join(workDir, `part-${part.index}.zip`);
      part.state = 'packing';
      notifier.update(true);
      part.archiveBytes = await packPart(
        planned,
        zip,
        (p) => {
          part.packing = p;
          notifier.update();
        },
        request.signal,
      );
      part.packing = { filesDone: part.fileCount, bytesDone: part.bytes };
      await sender.send(part, zip, `${slug(listing.title)}.zip`);
      await rm(zip, { force: true });
      notifier.update(true);
    }
    report.state = report.parts.some((p) => p.state === 'failed') ? 'failed' : 'completed';
  } catch (err) {
    const aborted = request.signal?.aborted || err instanceof UserAbortError;
    report.state = aborted ? 'cancelled' : 'failed';
    // A part the remote took and had not finished may be stored there: not "never taken".
    const inDoubt = report.parts.filter((p) => !partEnded(p) && sender.inDoubt(p));
    report.error = aborted
      ? {
          code: 'cancelled',
          message:
            'The push was cancelled; parts already accepted by the remote stay there.' +
            (inDoubt.length > 0 ? ` ${stillProcessing(inDoubt)}` : ''),
        }
      : err instanceof PushFailed
        ? { code: err.code, message: err.message }
        : { code: 'internal_error', message: `The push failed: ${(err as Error).message}` };
    for (const part of report.parts) {
      if (partEnded(part)) continue;
      if (inDoubt.includes(part)) {
        sender.unconfirmed(part, 'it was still processing it when the push stopped');
        continue;
      }
      part.state = 'failed';
      part.error = report.error;
      for (const f of part.files) {
        f.status = 'not_stored';
        f.error = {
          code: report.error.code,
          message: 'Not stored: the push stopped before the service took it.',
        };
      }
    }
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
  // The preflight could not tell (a 5xx, no answer in time), but the remote took a part with the key.
  if (report.parts.some((p) => p.uploadId !== null)) acceptKey();
  report.totals = totalsOf(report);
  report.finishedAt = now().toISOString();
  notifier.update(true);
  return report;
}

/** Sends one packed part, with retries, and follows the remote's processing of it. */
class PartSender {
  /** Parts with an upload the remote took (202) whose end (completed or failed) was not seen yet. */
  private readonly taken = new Set<number>();

  constructor(
    private readonly request: PushRequest,
    private readonly client: KnowledgeClient,
    private readonly listing: Listing,
    private readonly report: PushReport,
    private readonly notifier: Notifier,
    private readonly madeWithOtherKey: () => boolean,
    private readonly remember: (remoteId: string | undefined) => void,
  ) {}

  async send(part: PushPart, zip: string, fileName: string): Promise<void> {
    const maxAttempts = this.request.maxAttempts ?? 4;
    const signal = this.request.signal;
    for (;;) {
      part.attempts++;
      try {
        const upload = await this.attempt(part, zip, fileName);
        if (upload.status === 'failed' && TRANSIENT_REMOTE_CODES.has(upload.error?.code ?? '')) {
          throw new ApiError({ code: upload.error!.code, message: upload.error!.message, status: 500 });
        }
        this.finish(part, upload);
        return;
      } catch (err) {
        if (signal?.aborted || err instanceof UserAbortError) throw err;
        this.refuseAccess(err);
        if (err instanceof NotFoundError && err.code === 'listing_not_found' && this.report.remoteListingId) {
          // A draft is shown only to its own wallet (404, not 403): with another key than the last push's,
          // "not found" may mean "not this wallet's", and a new draft would orphan the real one.
          if (this.madeWithOtherKey()) {
            const id = this.report.remoteListingId;
            throw new PushFailed(
              'remote_listing_not_visible',
              `${this.report.target} does not show listing ${id} to this API key, and it was pushed there with another key: a draft is visible only to its own wallet. Push with a key of the wallet that owns ${id}; to make a new listing there instead, push with --new-listing (the studio's Publish view offers it after this error).`,
              403,
            );
          }
          // The remembered remote listing is gone (deleted there): the next attempt creates a new draft.
          this.remember(undefined);
          continue;
        }
        if (err instanceof ApiError && err.code === 'unsupported_embedding_model') {
          throw new PushFailed(
            err.code,
            `${this.report.target} refused the embedding model: ${err.message}`,
            400,
          );
        }
        const delay = this.retryDelay(err, part.attempts - 1);
        const message = describe(err);
        if (delay === undefined || part.attempts >= maxAttempts) {
          if (err instanceof ConnectionError) {
            throw new PushFailed(
              'remote_unreachable',
              `Cannot reach ${this.report.target} (${message}) after ${part.attempts} attempts. Check the address and your connection, then push again: parts already accepted are reported unchanged.`,
            );
          }
          this.fail(part, err instanceof ApiError ? err.code : 'internal_error', message);
          return;
        }
        part.error = {
          code: err instanceof ApiError ? err.code : 'internal_error',
          message: `Attempt ${part.attempts} failed (${message}); retrying in ${Math.ceil(delay / 1000)} s.`,
        };
        part.state = 'sending';
        this.notifier.update(true);
        await sleep(delay, signal);
      }
    }
  }

  private async attempt(part: PushPart, zip: string, fileName: string): Promise<Upload> {
    part.state = 'sending';
    part.remote = null;
    part.sending = { loaded: 0, total: part.archiveBytes ?? 0 };
    this.notifier.update(true);
    const signal = this.request.signal;
    const config: UploadConfig = {
      chunking: part.chunking.strategy as UploadConfig['chunking'],
      chunkSize: part.chunking.chunkSize,
      chunkOverlap: part.chunking.chunkOverlap,
      requiredColumns: part.chunking.requiredColumns,
      embeddingModel: this.listing.embeddingModel,
      listingId: this.report.remoteListingId ?? undefined,
    };
    const accepted = await this.client.uploads.create(
      { name: fileName, data: await openAsBlob(zip) },
      config,
      {
        // Retries are this loop's, so that every attempt shows in the report.
        maxRetries: 0,
        signal,
        onProgress: (p) => {
          part.sending = p;
          this.notifier.update();
        },
      },
    );
    part.uploadId = accepted.uploadId;
    this.taken.add(part.index);
    if (accepted.listingId !== this.report.remoteListingId) this.remember(accepted.listingId);
    part.state = 'processing';
    this.notifier.update(true);
    for (let upload = accepted, polls = 0; ; polls++) {
      part.remote = {
        stage: upload.progress.stage,
        filesDone: upload.progress.filesDone,
        filesTotal: upload.progress.filesTotal,
        chunks: upload.progress.chunks,
      };
      this.notifier.update();
      if (upload.status === 'completed' || upload.status === 'failed') {
        this.taken.delete(part.index);
        return upload;
      }
      // Quick parts are seen done quickly; long ones are looked at every 2 s at most.
      await sleep(this.request.pollIntervalMs ?? Math.min(200 * 1.5 ** polls, 2000), signal);
      // Polls count against the key's rate limit (100/minute): wait out a 429 rather than resend.
      upload = await this.client.uploads.get(accepted.uploadId, { signal, retryOn429: true });
    }
  }

  /** 401 and 403 stop the whole push: every other part would be refused the same way. */
  private refuseAccess(err: unknown): void {
    const target = this.report.target;
    if (err instanceof AuthenticationError) throw keyRefused(target, err);
    if (err instanceof AccessError) {
      const listing = this.report.remoteListingId ? ` to listing ${this.report.remoteListingId}` : '';
      throw new PushFailed(
        'forbidden',
        `${target} does not allow this API key to upload${listing} (${err.message}). Use a key of the wallet that owns the listing.`,
        403,
      );
    }
  }

  /** Network errors, 5xx, 408 and the remote's transient failures: backoff; 429: its Retry-After. */
  private retryDelay(err: unknown, retry: number): number | undefined {
    const backoff = this.request.backoffMs ?? ((n: number) => Math.min(1000 * 2 ** n, 30_000));
    if (err instanceof RateLimitError) {
      if (err.retryAfter === undefined) return backoff(retry);
      const ms = err.retryAfter * 1000;
      return ms <= MAX_RETRY_AFTER_MS ? ms : undefined;
    }
    if (err instanceof ConnectionError) return backoff(retry);
    if (err instanceof ApiError && err.status !== undefined && (err.status >= 500 || err.status === 408)) {
      const asked = err.headers ? retryAfterMs(err.headers) : undefined;
      return asked !== undefined && asked <= MAX_RETRY_AFTER_MS ? asked : backoff(retry);
    }
    return undefined;
  }

  private finish(part: PushPart, upload: Upload): void {
    const outcomes = new Map(upload.files.map((f) => [f.source, f]));
    if (upload.status === 'completed') {
      part.state = 'completed';
      part.error = null;
      this.report.remoteDocumentCount = upload.documentCount;
      this.report.remoteChunkCount = upload.chunkCount;
      for (const file of part.files) {
        const outcome = outcomes.get(file.source);
        if (!outcome) {
          file.status = 'not_stored';
          file.error = { code: 'not_reported', message: `The remote did not report ${file.source}.` };
          continue;
        }
        file.status = outcome.status === 'ingested' ? 'accepted' : outcome.status;
        file.chunks = outcome.status === 'rejected' ? 0 : outcome.chunks;
        if (outcome.error) file.error = outcome.error;
      }
      return;
    }
    // An upload is all or nothing: a refused file leaves the others of its part not stored.
    const reason = upload.error ?? { code: 'internal_error', message: 'The remote failed the upload.' };
    part.state = 'failed';
    part.error = reason;
    for (const file of part.files) {
      const outcome = outcomes.get(file.source);
      if (outcome?.status === 'rejected') {
        file.status = 'rejected';
        file.chunks = 0;
        file.error = outcome.error ?? reason;
      } else {
        file.status = 'not_stored';
        file.error = {
          code: reason.code,
          message: `Not stored: the remote refused the part (${reason.message})`,
        };
      }
    }
  }

  private fail(part: PushPart, code: string, message: string): void {
    if (this.inDoubt(part)) {
      this.unconfirmed(part, `its processing could not be followed to the end (${message})`);
      this.notifier.update(true);
      return;
    }
    part.state = 'failed';
    part.error = { code, message };
    for (const file of part.files) {
      file.status = 'not_stored';
      file.error = { code, message: `Not stored: ${message}` };
    }
    this.notifier.update(true);
  }

  /** Whether the remote took an upload of the part whose end was never seen: its files may be stored. */
  inDoubt(part: PushPart): boolean {
    return this.taken.has(part.index);
  }

  /**
   * Ends a part the remote took but was not seen to finish (`why` says what happened): its files may be
   * stored there or not, and the next push tells (what the remote holds comes back unchanged).
   */
  unconfirmed(part: PushPart, why: string): void {
    part.state = 'failed';
    part.error = {
      code: 'unconfirmed',
      message: `Sent: the service took this part (upload ${part.uploadId}), but ${why}, so whether it stored its files is not known. Push again to check: what it stored comes back unchanged.`,
    };
    for (const file of part.files) {
      file.status = 'unconfirmed';
      file.chunks = 0;
      file.error = {
        code: 'unconfirmed',
        message: `Sent; ${why.replace(/^it was/, 'the service was')} — push again to check.`,
      };
    }
  }
}

/** The cancelled push's word on the parts the remote was still processing. */
function stillProcessing(parts: PushPart[]): string {
  const which =
    parts.length === 1 ? `Part ${parts[0]!.index} was` : `Parts ${parts.map((p) => p.index).join(', ')} were`;
  return `${which} still being processed by the service, which may store ${parts.length === 1 ? 'it' : 'them'}: push again to check.`;
}

/** Passes the report on at most every 100 ms, except changes of state, which always go. */
class Notifier {
  private last = 0;

  constructor(
    private readonly report: PushReport,
    private readonly onUpdate: ((report: PushReport) => void) | undefined,
  ) {}

  update(force = false): void {
    if (!this.onUpdate) return;
    const t = Date.now();
    if (!force && t - this.last < UPDATE_EVERY_MS) return;
    this.last = t;
    this.report.totals = totalsOf(this.report);
    this.onUpdate(this.report);
  }
}

function partReport(part: PlannedPart, index: number): PushPart {
  return {
    index,
    state: 'waiting',
    fileCount: part.files.length,
    bytes: part.bytes,
    archiveBytes: null,
    chunking: part.chunking,
    packing: { filesDone: 0, bytesDone: 0 },
    sending: { loaded: 0, total: 0 },
    remote: null,
    attempts: 0,
    uploadId: null,
    error: null,
    files: part.files.map((f): PushFileReport => ({
      source: f.source,
      format: f.format,
      bytes: f.bytes,
      status: 'pending',
      chunks: 0,
    })),
  };
}

function emptyTotals(): PushReport['totals'] {
  return {
    files: 0,
    bytes: 0,
    accepted: 0,
    unchanged: 0,
    rejected: 0,
    not_stored: 0,
    unconfirmed: 0,
    missing: 0,
  };
}

function totalsOf(report: PushReport): PushReport['totals'] {
  const totals = emptyTotals();
  for (const file of [...report.parts.flatMap((p) => p.files), ...report.missing]) {
    totals.files++;
    totals.bytes += file.bytes;
    if (file.status !== 'pending') totals[file.status]++;
  }
  return totals;
}

/** The archive's name; a remote that creates a draft from it titles the draft after it. */
function slug(title: string): string {
  return (
    title
      .replace(/[^\p{L}\p{N} ._-]+/gu, '-')
      .trim()
      .slice(0, 100) || 'knowledge-base'
  );
}

/** The push stops: the remote refused the API key. */
function keyRefused(target: string, err: AuthenticationError): PushFailed {
  return new PushFailed(
    'unauthorized',
    // The remote's message ends a sentence of its own: without its full stop, not "…).)." here.
    `Authentication failed at ${target}: the API key was refused (${err.message.replace(/\.+$/, '')}). Check the key, or create one on that service.`,
    401,
  );
}

/**
 * Asks the remote for one listing before anything is packed: a base URL that is not a marketplace
 * API (a 404 page, HTML) used to have every part uploaded in full, API key included, only for each to
 * fail with the page as its error; a refused key now stops the push before the first part is packed.
 * Anything else (unreachable, a 5xx) is left to the parts' own retries.
 */
async function checkRemoteApi(
  client: KnowledgeClient,
  target: string,
  signal: AbortSignal | undefined,
  timeoutMs: number,
): Promise<boolean> {
  try {
    // Not the parts' 60 s: a host that does not answer is the parts' retries' to report.
    await client.listings.search({ limit: 1 }, { signal, maxRetries: 0, timeoutMs });
    return true;
  } catch (err) {
    if (signal?.aborted || err instanceof UserAbortError) throw err;
    if (err instanceof AuthenticationError) {
      if (notAnApiRefusal(target, err)) {
        throw notAnApi(
          target,
          err,
          ': the address has no version prefix such as /v1, and its 401 lacks the X-RateLimit-* headers every answer of the API carries',
        );
      }
      throw keyRefused(target, err);
    }
    if (
      err instanceof NotFoundError ||
      (err instanceof ApiError && (err.code === 'invalid_response' || err.status === 405))
    ) {
      throw notAnApi(target, err);
    }
    return false;
  }
}

/**
 * Whether a 401 came from something that is not a Knowledge Marketplace API, such as the studio API
 * (`…/studio` wants its launch's studio token, whatever the key). Both signs must agree, so that a key
 * the API refused is never reported as a wrong address: the base URL lacks the version prefix the
 * spec's base URLs carry (§1, `/v1`), and the answer lacks the rate-limit headers that every answer of
 * the API carries, refusals included (§8).
 */
function notAnApiRefusal(target: string, err: AuthenticationError): boolean {
  const versioned = /\/v\d+(\/|$)/.test(new URL(target).pathname);
  return !versioned && !err.headers?.has('x-ratelimit-limit');
}

function notAnApi(target: string, err: ApiError, why = ''): PushFailed {
  return new PushFailed(
    'not_a_marketplace_api',
    `${target} does not answer as a Knowledge Marketplace API (GET ${target}/listings: ${err.status ?? ''} ${err.code}${why}). Check the base URL: the API's paths start from it, e.g. https://api.example.com/v1.`,
    400,
  );
}

function describe(err: unknown): string {
  if (err instanceof ApiError) return err.status ? `${err.status} ${err.code}: ${err.message}` : err.message;
  return err instanceof Error ? err.message : String(err);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new UserAbortError(signal.reason));
    const onAbort = () => {
      clearTimeout(timer);
      reject(new UserAbortError(signal?.reason));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
