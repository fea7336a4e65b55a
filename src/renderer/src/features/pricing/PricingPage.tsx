import { PageHeader } from '../../components/PageHeader';

// Placeholder while the view is built in this change set; replaced before it lands.
export function PricingPage() {
  return <PageHeader title="Pricing" description="Access model, price and limits of a listing." />;
}
