import { Button, Card, Grid, List, Stack, Text, ThemeIcon } from '@mantine/core';
import { useLocalStorage } from '@mantine/hooks';
import { IconCloudUpload } from '@tabler/icons-react';
import { useQuery } from '@tanstack/react-query';
import { CardTitle } from '../../components/CardTitle';
import { useEffect, useRef, useState } from 'react';
import type { PushJob } from '../../../../shared/push';
import { NoListingState } from '../../components/NoListingState';
import { PageHeader } from '../../components/PageHeader';
import { ErrorState } from '../../components/QueryStates';
import { counted } from '../../lib/format';
import { afterJobShown, lostNoticeShown, type LostJob } from '../../lib/lostJob';
import { queryKeys } from '../../lib/queryClient';
import { useStudioApi } from '../../lib/studioContext';
import { useJobRun } from '../../lib/useJobRun';
import { ListingPicker, usePickerListings } from '../ingest/ListingPicker';
import { useListingChoice } from '../ingest/useListingChoice';
import { useServerLaunch } from '../../lib/useServerLaunch';
import { followPush, listPushJobs, listTargets, PUSH_JOBS, startPush } from './publishApi';
import { PushPanel } from './PushPanel';
import { resumeNote, resumeTargetOf } from './pushView';
import { TARGETS_KEY, TargetCard } from './TargetCard';

export function PublishPage() {
  const api = useStudioApi();
  const [listingId] = useListingChoice();
  const [targetId, setTargetId] = useLocalStorage<string | null>({
    key: 'kbstudio.pushTarget',
    defaultValue: null,
  });
  const {
    job,
    setJob,
    error: startError,
    lost,
    loseTrack,
    starting,
    cancelling,
    running,
    run,
    cancel,
    dismiss,
  } = useJobRun<PushJob>(PUSH_JOBS);
  // The push of another listing stays in memory but is not shown for this one.
  const shown = job?.listingId === listingId ? job : undefined;
  // The push this page lost track of: once the studio shows it again (interrupted, after a restart),
  // its report replaces "Lost track of the push", which would contradict it.
  const [lostPush, setLostPush] = useState<LostJob>();

  // Back on the page (or reloaded, or the studio started again with this page open): show the
  // listing's latest push, and follow it if it runs.
  const serverLaunch = useServerLaunch();
  useEffect(() => {
    if (!listingId) return;
    const controller = new AbortController();
    const show = (j: PushJob) => {
      if (controller.signal.aborted) return;
      setJob(j);
      setLostPush((lost) => afterJobShown(lost, j));
    };
    void listPushJobs()
      .then(async (jobs) => {
        const latest = jobs.find((j) => j.listingId === listingId);
        if (!latest) return;
        show(latest);
        if (latest.state !== 'running') return;
        try {
          show(await followPush(latest.id, show, controller.signal));
        } catch (err) {
          if (controller.signal.aborted) return;
          setLostPush({ id: latest.id, reported: false });
          loseTrack(err);
        }
      })
      .catch(() => undefined);
    return () => controller.abort();
  }, [listingId, setJob, loseTrack, serverLaunch]);
  // An interrupted push is resumed by pushing again to where it went: its target is chosen for that
  // (once per push shown, so that choosing another one afterwards is the creator's to do).
  const targets = useQuery({ queryKey: TARGETS_KEY, queryFn: listTargets });
  const resumeTarget = resumeTargetOf(shown, targets.data ?? []);
  const preselectedFor = useRef<string | undefined>(undefined);
  useEffect(() => {
    if (!shown || !resumeTarget || preselectedFor.current === shown.id) return;
    preselectedFor.current = shown.id;
    setTargetId(resumeTarget.id);
  }, [shown, resumeTarget, setTargetId]);
  const resumeAdvice = targets.isSuccess ? resumeNote(shown, targets.data, targetId) : undefined;

  const listing = useQuery({
    queryKey: [...queryKeys.listings, listingId],
    queryFn: () => api.listings.get(listingId!),
    enabled: Boolean(listingId),
  });

  const push = async (options: { newListing?: boolean } = {}) => {
    if (!listingId || !targetId) return;
    setJob(undefined);
    let startedId: string | undefined;
    const final = await run(async () => {
      const started = await startPush(listingId, targetId, options);
      startedId = started.id;
      return started;
    });
    // Started, then lost: the studio may report it interrupted once it answers again.
    if (!final && startedId !== undefined) setLostPush({ id: startedId, reported: false });
  };

  const empty = listing.data && listing.data.documentCount === 0;
  // Nothing to push before a listing exists: the page says so, rather than a disabled Push whose help
  // speaks of "this listing".
  const listings = usePickerListings();
  const noListing = listings.isSuccess && listings.data.data.length === 0;
  return (
    <>
      <PageHeader
        title="Publish"
        description="Push a knowledge base to the hosted service: its original files are packed into ZIP archives (split past the bulk threshold of 500 MB or 1,000 files), uploaded with the chunking they were ingested with, and followed until the service has processed them."
        actions={<ListingPicker />}
      />
      {noListing ? (
        <NoListingState what="A push uploads a listing’s knowledge base to the hosted service." />
      ) : (
        <Grid gap="lg">
          <Grid.Col span={{ base: 12, md: 5, xl: 4 }}>
            <Stack gap="md">
              <TargetCard targetId={targetId} onChange={setTargetId} disabled={running} />
              <Card withBorder radius="md" p="md">
                <Stack gap="sm">
                  <CardTitle size="sm" className="kb-break">
                    {listing.data ? listing.data.title : 'Knowledge base'}
                  </CardTitle>
                  {listing.data && (
                    <Text size="sm" c="dimmed">
                      {counted(listing.data.documentCount, 'document')} ·{' '}
                      {counted(listing.data.chunkCount, 'chunk')} · {listing.data.embeddingModel}
                    </Text>
                  )}
                  {empty && (
                    <Text size="sm" c="var(--mantine-color-yellow-light-color)">
                      This knowledge base is empty: ingest documents first.
                    </Text>
                  )}
                  <Button
                    leftSection={<IconCloudUpload size={16} />}
                    onClick={() => void push()}
                    loading={starting}
                    disabled={!listingId || !targetId || running || Boolean(empty)}
                  >
                    Push
                  </Button>
                  {resumeAdvice && (
                    <Text
                      size="xs"
                      c="var(--mantine-color-yellow-light-color)"
                      style={{ overflowWrap: 'anywhere' }}
                    >
                      {resumeAdvice}
                    </Text>
                  )}
                  {/* An upload's config carries chunking and model only (spec): nothing else travels. */}
                  <Text size="xs" c="dimmed">
                    The first push makes a draft on the service titled after this listing, sold one-time at 0
                    SOL: set its price, access model, description and domain there before publishing it.
                  </Text>
                </Stack>
              </Card>
            </Stack>
          </Grid.Col>
          <Grid.Col span={{ base: 12, md: 7, xl: 8 }}>
            <Stack gap="md">
              {startError !== undefined && (!lost || lostNoticeShown(lost, lostPush)) && (
                <ErrorState title={lost ? 'Lost track of the push' : 'Could not push'} error={startError} />
              )}
              {shown ? (
                <PushPanel
                  job={shown}
                  onCancel={cancel}
                  cancelling={cancelling}
                  onDismiss={() => void dismiss(shown)}
                  onPushToNewListing={running ? undefined : () => void push({ newListing: true })}
                />
              ) : (
                <HowItWorks />
              )}
            </Stack>
          </Grid.Col>
        </Grid>
      )}
    </>
  );
}

function HowItWorks() {
  return (
    <Card withBorder radius="md" p="lg">
      <Stack gap="sm">
        <ThemeIcon size={40} radius="xl" variant="light">
          <IconCloudUpload size={22} />
        </ThemeIcon>
        <CardTitle>What a push does</CardTitle>
        <List size="sm" spacing={6} c="dimmed">
          <List.Item>
            The first push creates a draft listing on the service; later pushes add to the same listing.
          </List.Item>
          <List.Item>
            Files the service already holds with the same content and chunking are reported unchanged, so
            pushing again is safe.
          </List.Item>
          <List.Item>
            A part that fails on the way (network, 5xx, rate limit) is sent again a few times; a refused API
            key stops the push at once.
          </List.Item>
          <List.Item>
            The report lists what the service accepted, left unchanged or rejected, file by file.
          </List.Item>
        </List>
      </Stack>
    </Card>
  );
}
