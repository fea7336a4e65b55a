import { AppShell, Burger, Group, Text, ThemeIcon } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { IconStack2 } from '@tabler/icons-react';
import type { ReactNode } from 'react';
import type { Section } from '../lib/sections';
import { SidebarNav } from './SidebarNav';
import { StudioStatus } from './StudioStatus';
import { ThemeToggle } from './ThemeToggle';

export function AppLayout({ section, children }: { section: Section; children: ReactNode }) {
  const [navOpened, nav] = useDisclosure(false);
  return (
    <AppShell
      header={{ height: 56 }}
      navbar={{ width: 236, breakpoint: 'sm', collapsed: { mobile: !navOpened } }}
      padding="xl"
    >
      {/* Past the header and the 11 sections in one Tab. Not an in-page anchor: the hash is the route. */}
      <a
        href="#kb-main"
        className="kb-skip-link"
        onClick={(event) => {
          event.preventDefault();
          document.getElementById('kb-main')?.focus();
        }}
      >
        Skip to content
      </a>
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Burger
              opened={navOpened}
              onClick={nav.toggle}
              hiddenFrom="sm"
              size="sm"
              aria-label="Toggle navigation"
            />
            <ThemeIcon
              size={32}
              radius="md"
              variant="gradient"
              gradient={{ from: 'indigo', to: 'cyan', deg: 135 }}
            >
              <IconStack2 size={19} stroke={1.8} aria-hidden />
            </ThemeIcon>
            <div>
              <Text fw={700} size="sm" lh={1.2}>
                KB Studio
              </Text>
              <Text c="dimmed" size="xs" lh={1.2}>
                Knowledge-base creator studio
              </Text>
            </div>
          </Group>
          <ThemeToggle />
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="sm">
        <AppShell.Section grow>
          <SidebarNav active={section} onNavigate={nav.close} />
        </AppShell.Section>
        <AppShell.Section>
          <StudioStatus />
        </AppShell.Section>
      </AppShell.Navbar>
      <AppShell.Main id="kb-main" tabIndex={-1} className="kb-main">
        {children}
      </AppShell.Main>
    </AppShell>
  );
}
