import {
  IconChartBar,
  IconCloudUpload,
  IconCoin,
  IconDatabase,
  IconFileImport,
  IconKey,
  IconListSearch,
  IconSettings,
  IconTestPipe,
  IconUserCheck,
  IconWallet,
  type Icon,
} from '@tabler/icons-react';
import { useEffect, useRef } from 'react';
import { announce } from './lib/announce';
import { DEFAULT_SECTION, SECTIONS, sectionHref, type Section } from './lib/sections';

export interface SectionInfo {
  label: string;
  icon: Icon;
}

export const SECTION_INFO: Record<Section, SectionInfo> = {
  listings: { label: 'Listings', icon: IconDatabase },
  ingest: { label: 'Ingest', icon: IconFileImport },
  inspect: { label: 'Inspect', icon: IconListSearch },
  playground: { label: 'Playground', icon: IconTestPipe },
  evaluation: { label: 'Evaluation', icon: IconChartBar },
  pricing: { label: 'Pricing', icon: IconCoin },
  wallet: { label: 'Wallet', icon: IconWallet },
  buyers: { label: 'Test buyers', icon: IconUserCheck },
  publish: { label: 'Publish', icon: IconCloudUpload },
  keys: { label: 'API keys', icon: IconKey },
  settings: { label: 'Settings', icon: IconSettings },
};

/**
 * The address to put in place of `hash` when it names no section (`#/bogus`, an old bookmark), so
 * that the address names the view shown: Listings, at `#/listings`. Null when it needs no change: a
 * section's address, or none at all (`''`, `#/`), which opens Listings too.
 */
export function addressInPlaceOf(hash: string): string | null {
  const name = hash.replace(/^#\/?/, '').split(/[/?]/)[0] ?? '';
  if (name === '' || (SECTIONS as readonly string[]).includes(name)) return null;
  return sectionHref(DEFAULT_SECTION);
}

/**
 * Keeps the address naming the view shown: an unknown section's address is replaced in place (no
 * history entry, so Back does not return to it), as the page opens and on every later change.
 */
export function useKnownSectionAddress(): void {
  useEffect(() => {
    const correct = () => {
      const replacement = addressInPlaceOf(window.location.hash);
      if (replacement !== null) window.history.replaceState(window.history.state, '', replacement);
    };
    correct();
    window.addEventListener('hashchange', correct);
    return () => window.removeEventListener('hashchange', correct);
  }, []);
}

/** The window's title names the open view ("Pricing · KB Studio"), as a tab list and history show it. */
export const documentTitle = (section: Section): string => `${SECTION_INFO[section].label} · KB Studio`;

/**
 * Keeps `document.title` naming the open view, and says the view's name when another is opened (the
 * focus stays on the sidebar link, so nothing else tells a screen reader the page changed).
 */
export function useSectionTitle(section: Section): void {
  const first = useRef(true);
  useEffect(() => {
    document.title = documentTitle(section);
    if (first.current) {
      first.current = false;
      return;
    }
    announce(`${SECTION_INFO[section].label} page`);
  }, [section]);
}
