import { AppLayout } from './components/AppLayout';
import { LeaveGuardDialog } from './components/LeaveGuardDialog';
import { LiveAnnouncer } from './components/LiveAnnouncer';
import { IngestPage } from './features/ingest/IngestPage';
import { IngestDraftProvider } from './features/ingest/ingestDraft';
import { InspectPage } from './features/inspect/InspectPage';
import { EvaluationPage } from './features/evaluation/EvaluationPage';
import { ApiKeysPage } from './features/keys/ApiKeysPage';
import { ListingsPage } from './features/listings/ListingsPage';
import { PlaygroundPage } from './features/playground/PlaygroundPage';
import { SettingsPage } from './features/settings/SettingsPage';
import { PricingPage } from './features/pricing/PricingPage';
import { WalletPage } from './features/wallet/WalletPage';
import { TestBuyersPage } from './features/buyers/TestBuyersPage';
import { PublishPage } from './features/publish/PublishPage';
import { useSection, type Section } from './lib/sections';
import { useKnownSectionAddress, useSectionTitle } from './navigation';

export function App() {
  const section = useSection();
  useKnownSectionAddress();
  useSectionTitle(section);
  return (
    <IngestDraftProvider>
      <AppLayout section={section}>
        <SectionPage section={section} />
      </AppLayout>
      <LeaveGuardDialog />
      <LiveAnnouncer />
    </IngestDraftProvider>
  );
}

function SectionPage({ section }: { section: Section }) {
  switch (section) {
    case 'listings':
      return <ListingsPage />;
    case 'keys':
      return <ApiKeysPage />;
    case 'settings':
      return <SettingsPage />;
    case 'ingest':
      return <IngestPage />;
    case 'inspect':
      return <InspectPage />;
    case 'playground':
      return <PlaygroundPage />;
    case 'evaluation':
      return <EvaluationPage />;
    case 'pricing':
      return <PricingPage />;
    case 'wallet':
      return <WalletPage />;
    case 'buyers':
      return <TestBuyersPage />;
    case 'publish':
      return <PublishPage />;
  }
}
