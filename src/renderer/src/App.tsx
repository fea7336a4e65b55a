import { AppLayout } from './components/AppLayout';
import { ApiKeysPage } from './features/keys/ApiKeysPage';
import { ListingsPage } from './features/listings/ListingsPage';
import { SettingsPage } from './features/settings/SettingsPage';
import { UpcomingPage } from './features/upcoming/UpcomingPage';
import { useSection, type Section } from './lib/sections';

export function App() {
  const section = useSection();
  return (
    <AppLayout section={section}>
      <SectionPage section={section} />
    </AppLayout>
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
    case 'playground':
    case 'marketplace':
      return <UpcomingPage section={section} />;
  }
}
