import { Badge, Card, List, Stack, Text, ThemeIcon, Title } from '@mantine/core';
import { IconClockHour4 } from '@tabler/icons-react';
import { PageHeader } from '../../components/PageHeader';
import { SECTION_INFO } from '../../navigation';
import type { Section } from '../../lib/sections';

type UpcomingSection = Extract<Section, 'ingest' | 'playground' | 'marketplace'>;

const PLANS: Record<UpcomingSection, { summary: string; points: string[] }> = {
  ingest: {
    summary: "Add documents to a listing's knowledge base and watch them become searchable chunks.",
    points: [
      'Drop files, folders or ZIP archives: PDF, DOCX, Markdown, HTML, CSV, JSON and plain text.',
      'Choose how text is chunked (recursive, fixed, sentence or heading-aware) and the embedding model.',
      'Follow progress per file, with a clear reason for every file that is refused.',
      'Inspect the resulting documents and chunks with their source metadata.',
    ],
  },
  playground: {
    summary: 'Ask a listing questions the way a buyer would, before anyone pays for it.',
    points: [
      'Run a query against a knowledge base and see the ranked chunks with their scores.',
      'Tune top-k, the minimum score and metadata filters, and see the request as code.',
      'Run an evaluation set and read nDCG and recall for the current chunking.',
    ],
  },
  marketplace: {
    summary: 'See your listings the way buyers see them, and take them to the hosted marketplace.',
    points: [
      'Browse published listings with search, price and rating filters.',
      'Grant test buyers local credentials for each access model.',
      'Push a listing and its knowledge base to the hosted service.',
    ],
  },
};

/** A page that is not built yet says so, and what it will do; it offers no buttons that do nothing. */
export function UpcomingPage({ section }: { section: UpcomingSection }) {
  const info = SECTION_INFO[section];
  const plan = PLANS[section];
  const Icon = info.icon;
  return (
    <>
      <PageHeader title={info.label} description={plan.summary} />
      <Card withBorder padding="xl" maw={760}>
        <Stack gap="md">
          <ThemeIcon size={44} radius="md" variant="light">
            <Icon size={24} stroke={1.6} />
          </ThemeIcon>
          <div>
            <Badge variant="light" color="gray" leftSection={<IconClockHour4 size={12} />} mb="xs">
              Coming in a later release
            </Badge>
            <Title order={3} fz="lg">
              {info.label} is not part of this version of the studio yet
            </Title>
          </div>
          <Text size="sm" c="dimmed">
            When it arrives, this page will let you:
          </Text>
          <List size="sm" spacing={6}>
            {plan.points.map((point) => (
              <List.Item key={point}>{point}</List.Item>
            ))}
          </List>
        </Stack>
      </Card>
    </>
  );
}
