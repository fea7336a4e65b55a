import { PageHeader } from '../../components/PageHeader';

// Placeholder while the view is built in this change set; replaced before it lands.
export function WalletPage() {
  return <PageHeader title="Wallet" description="Your creator wallet." />;
}
