import { NavLink, Stack } from '@mantine/core';
import type { KeyboardEvent } from 'react';
import { SECTION_INFO } from '../navigation';
import { SECTIONS, sectionHref, type Section } from '../lib/sections';

const NEXT_KEYS: Record<string, (index: number, count: number) => number> = {
  ArrowDown: (i, n) => (i + 1) % n,
  ArrowUp: (i, n) => (i - 1 + n) % n,
  Home: () => 0,
  End: (_i, n) => n - 1,
};

/**
 * The section list. Each entry is a link (Tab and Enter work as everywhere); the arrow keys,
 * Home and End move between entries as in a desktop sidebar.
 */
export function SidebarNav({ active, onNavigate }: { active: Section; onNavigate: () => void }) {
  const onKeyDown = (event: KeyboardEvent<HTMLElement>) => {
    const next = NEXT_KEYS[event.key];
    if (!next) return;
    const links = [...event.currentTarget.querySelectorAll<HTMLAnchorElement>('a[data-section]')];
    const index = links.findIndex((link) => link === document.activeElement);
    if (index === -1) return;
    event.preventDefault();
    links[next(index, links.length)]?.focus();
  };

  return (
    <Stack component="nav" aria-label="Studio sections" gap={2} onKeyDown={onKeyDown}>
      {SECTIONS.map((section) => {
        const info = SECTION_INFO[section];
        const Icon = info.icon;
        const isActive = section === active;
        return (
          <NavLink
            key={section}
            component="a"
            href={sectionHref(section)}
            data-section={section}
            aria-current={isActive ? 'page' : undefined}
            active={isActive}
            label={info.label}
            leftSection={<Icon size={18} stroke={1.6} aria-hidden />}
            onClick={onNavigate}
            variant="light"
            style={{ borderRadius: 'var(--mantine-radius-md)' }}
          />
        );
      })}
    </Stack>
  );
}
