import { PageHeader } from '../../components/PageHeader';

// Placeholder while the view is built in this change set; replaced before it lands.
export function PublishPage() {
  return <PageHeader title="Publish" description="Push a knowledge base to the hosted service." />;
}
