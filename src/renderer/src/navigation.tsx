import {
  IconBuildingStore,
  IconChartBar,
  IconDatabase,
  IconFileImport,
  IconKey,
  IconListSearch,
  IconSettings,
  IconTestPipe,
  type Icon,
} from '@tabler/icons-react';
import type { Section } from './lib/sections';

export interface SectionInfo {
  label: string;
  icon: Icon;
  /** Shown as a "Soon" badge in the sidebar: the page only says what is coming. */
  upcoming?: boolean;
}

export const SECTION_INFO: Record<Section, SectionInfo> = {
  listings: { label: 'Listings', icon: IconDatabase },
  ingest: { label: 'Ingest', icon: IconFileImport },
  inspect: { label: 'Inspect', icon: IconListSearch },
  playground: { label: 'Playground', icon: IconTestPipe },
  evaluation: { label: 'Evaluation', icon: IconChartBar },
  marketplace: { label: 'Marketplace', icon: IconBuildingStore, upcoming: true },
  keys: { label: 'API keys', icon: IconKey },
  settings: { label: 'Settings', icon: IconSettings },
};
