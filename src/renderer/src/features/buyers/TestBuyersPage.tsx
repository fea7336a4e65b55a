import { PageHeader } from '../../components/PageHeader';

// Placeholder while the view is built in this change set; replaced before it lands.
export function TestBuyersPage() {
  return <PageHeader title="Test buyers" description="Try a listing the way a buyer would." />;
}
