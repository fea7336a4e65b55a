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
import type { Section } from './lib/sections';

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
