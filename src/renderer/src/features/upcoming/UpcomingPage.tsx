import { Badge, Card, List, Stack, Text, ThemeIcon, Title } from '@mantine/core';
import { IconClockHour4 } from '@tabler/icons-react';
import { PageHeader } from '../../components/PageHeader';
import { SECTION_INFO } from '../../navigation';
import type { Section } from '../../lib/sections';

type UpcomingSection = Extract<Section, 'marketplace'>;

const PLANS: Record<UpcomingSection, { summary: string; points: string[] }> = {
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
