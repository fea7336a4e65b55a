import {
  Alert,
  Button,
  Card,
  Grid,
  Group,
  Input,
  NumberInput,
  SegmentedControl,
  Stack,
  TagsInput,
  Text,
  TextInput,
} from '@mantine/core';
import { IconDeviceFloppy } from '@tabler/icons-react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { AccessModel, Listing } from '../../../../shared/listings';
import { NoListingState } from '../../components/NoListingState';
import { PageHeader } from '../../components/PageHeader';
import { SolAmountInput } from '../../components/SolAmountInput';
import { ErrorState, LoadingState } from '../../components/QueryStates';
import { ACCESS_MODEL_LABELS } from '../../lib/format';
import { focusFirstInvalid } from '../../lib/focus';
import { useLeaveGuard } from '../../lib/leaveGuard';
import { queryKeys } from '../../lib/queryClient';
import { errorMessage, fieldErrorsOf } from '../../lib/studioApi';
import { marketplaceApi, marketplaceKeys } from '../../lib/wallet/marketplaceApi';
import { ListingPicker, usePickerListings } from '../ingest/ListingPicker';
import { useListingChoice } from '../ingest/useListingChoice';
import { ACCESS_MODEL_HELP, PRICE_LABELS } from '../listings/listingForm';
import { TERMS_FIXED_NOTE, termsFixedFields, withoutFieldNames } from '../listings/termsRefusal';
import { ListingPreview } from './ListingPreview';
import {
  lamportsLabel,
  parsePricing,
  previewOf,
  pricingChanged,
  pricingErrorFields,
  pricingValuesOf,
  termsChanged,
  type PricingFormValues,
} from './pricingForm';

const ACCESS_OPTIONS = (Object.keys(ACCESS_MODEL_LABELS) as AccessModel[]).map((value) => ({
  value,
  label: ACCESS_MODEL_LABELS[value],
}));

export function PricingPage() {
  const [listingId] = useListingChoice();
  const listings = usePickerListings();
  // The editor restarts from each saved version; the page remembers which one was just saved.
  const [savedVersion, setSavedVersion] = useState<string | null>(null);
  const publicBody = useQuery({
    queryKey: marketplaceKeys.publicListing(listingId),
    queryFn: () => marketplaceApi.publicListing(listingId!),
    enabled: listingId !== null,
  });
  return (
    <>
      <PageHeader
        title="Pricing"
        description="How buyers pay for a listing, how fast they may query it, and how it is found. The preview is the listing exactly as the marketplace API returns it."
        actions={<ListingPicker />}
      />
      {listings.isSuccess && listings.data.data.length === 0 ? (
        <NoListingState what="Pricing sets how buyers pay for a listing." />
      ) : listingId === null || publicBody.isPending ? (
        <LoadingState label="Loading the listing…" />
      ) : publicBody.isError ? (
        <ErrorState
          title="Could not load the listing"
          error={publicBody.error}
          onRetry={() => void publicBody.refetch()}
        />
      ) : (
        // Keyed by the listing and its last update, so the form restarts from what was saved.
        <PricingEditor
          key={`${publicBody.data.id}:${publicBody.data.updatedAt}`}
          listing={publicBody.data}
          justSaved={savedVersion === `${publicBody.data.id}:${publicBody.data.updatedAt}`}
          onSaved={(saved) => setSavedVersion(`${saved.id}:${saved.updatedAt}`)}
        />
      )}
    </>
  );
}

function PricingEditor({
  listing,
  justSaved,
  onSaved,
}: {
  listing: Listing;
  justSaved: boolean;
  onSaved: (saved: Listing) => void;
}) {
  const queryClient = useQueryClient();
  const [values, setValues] = useState<PricingFormValues>(() => pricingValuesOf(listing));
  const result = parsePricing(values);
  const changed = pricingChanged(listing, result.pricing);
  // Leaving for another section or listing, or closing the window, asks before dropping the changes.
  useLeaveGuard(changed, 'unsaved');
  const save = useMutation({
    mutationFn: () => marketplaceApi.savePricing(listing.id, result.pricing!),
    onSuccess: async (saved) => {
      onSaved(saved);
      queryClient.setQueryData(marketplaceKeys.publicListing(listing.id), saved);
      await queryClient.invalidateQueries({ queryKey: queryKeys.listings });
    },
  });
  // A published listing's terms are fixed while anyone holds access: the 409 names the fields, and
  // its sentence goes under the first of them, without the field names it starts with.
  const fixedFields = termsFixedFields(save.error);
  const serverErrors: Record<string, string> = {
    ...fieldErrorsOf(save.error),
    ...Object.fromEntries(
      fixedFields.map((field, i) => [
        field,
        i === 0 ? withoutFieldNames(errorMessage(save.error)) : TERMS_FIXED_NOTE,
      ]),
    ),
  };
  // The refusal is said as it comes, under each field it names (not only shown in red).
  const refusedProps = (field: string) => (fixedFields.includes(field) ? { role: 'alert' } : undefined);
  // Checked as the user types, with the server's own messages (the same schema validates the save).
  const errors: Record<string, string | undefined> = { ...serverErrors, ...result.errors };
  const set = <K extends keyof PricingFormValues>(key: K, value: PricingFormValues[K]) => {
    setValues((v) => ({ ...v, [key]: value }));
    // A refusal was of the values sent: once one changes it no longer applies (and the value may be
    // back to the saved one, with Save disabled and nothing left to refuse).
    if (save.error) save.reset();
  };

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (result.pricing) {
      save.mutate();
      return;
    }
    // Refused with the error in view: the focus goes to the first field the server would refuse.
    focusFirstInvalid(event.currentTarget);
  }

  return (
    <Grid gap="lg">
      <Grid.Col span={{ base: 12, md: 6 }}>
        <Card withBorder padding="lg" component="form" onSubmit={submit} noValidate aria-label="Pricing">
          <Stack gap="md">
            <div>
              <Input.Label id="access-model-label">Access model</Input.Label>
              <SegmentedControl
                aria-labelledby="access-model-label"
                fullWidth
                data={ACCESS_OPTIONS}
                value={values.accessModel}
                onChange={(v) => set('accessModel', v as AccessModel)}
              />
              <Text
                size="xs"
                c={errors.accessModel ? 'red' : 'dimmed'}
                mt={4}
                {...refusedProps('accessModel')}
              >
                {errors.accessModel ?? ACCESS_MODEL_HELP[values.accessModel]}
              </Text>
            </div>
            <Group grow align="flex-start">
              <SolAmountInput
                label={`${PRICE_LABELS[values.accessModel]} (SOL)`}
                description={lamportsLabel(values.price, errors.price)}
                // Kept as typed, never rewritten on blur: a value the schema refuses keeps its error
                // until the user fixes it, and the error line does not vanish on the way to Save.
                value={values.price}
                onChange={(v) => set('price', v)}
                error={errors.price}
                errorProps={refusedProps('price')}
                data-testid="price-input"
              />
              {values.accessModel === 'subscription' && (
                <NumberInput
                  label="Period (days)"
                  description="How long one payment gives access"
                  min={1}
                  max={3650}
                  clampBehavior="none"
                  // Decimals are typed (and pasted) as they are, for the schema to refuse with its
                  // message: without them, a pasted 1.5 became 15 or 1 without a word.
                  value={values.subscriptionDays}
                  onChange={(v) => set('subscriptionDays', v)}
                  error={errors.subscriptionDays}
                  errorProps={refusedProps('subscriptionDays')}
                />
              )}
            </Group>
            <NumberInput
              label="Retrieval rate limit"
              description="Queries per minute for each buyer; over it they get 429 with Retry-After"
              min={1}
              max={100_000}
              clampBehavior="none"
              suffix=" / minute"
              value={values.retrievalRateLimit}
              onChange={(v) => set('retrievalRateLimit', v)}
              error={errors.retrievalRateLimit}
            />
            <TextInput
              label="Domain"
              description="The field it covers; buyers filter listings by it"
              placeholder="e.g. law"
              value={values.domain}
              onChange={(e) => set('domain', e.currentTarget.value)}
              error={errors.domain}
            />
            <TagsInput
              label="Tags"
              description={
                values.tags.length >= 20
                  ? 'At most 20 tags: remove one to add another'
                  : 'Press Enter after each tag (at most 20); stored in lower case'
              }
              placeholder="Add a tag"
              value={values.tags}
              onChange={(tags) => set('tags', tags)}
              error={errors.tags}
              maxTags={20}
              clearable
            />
            {listing.status === 'published' && termsChanged(listing, values) && (
              <Alert color="yellow" variant="light">
                This listing is published. While anyone holds access to it (test buyers included), its access
                model, price and subscription days cannot change: revoke their credentials first, or create a
                new listing for the new terms. On a Solana cluster the program keeps the terms it was created
                with.
              </Alert>
            )}
            {save.error !== null && Object.keys(serverErrors).length === 0 && (
              <Alert color="red" variant="light" title="Not saved" role="alert">
                {errorMessage(save.error)}
              </Alert>
            )}
            {justSaved && !changed && (
              <Text size="sm" c="teal" role="status">
                Saved. The preview is what the marketplace returns now.
              </Text>
            )}
            <Group justify="flex-end" gap="sm" wrap="nowrap">
              {!result.pricing && (
                <Text size="xs" c="red" mr="auto" id="pricing-form-error">
                  Fix the field marked in red to save.
                </Text>
              )}
              <Button
                variant="default"
                disabled={!changed}
                onClick={() => {
                  setValues(pricingValuesOf(listing));
                  save.reset();
                }}
              >
                Reset
              </Button>
              <Button
                type="submit"
                leftSection={<IconDeviceFloppy size={16} />}
                loading={save.isPending}
                disabled={!changed}
                aria-describedby={result.pricing ? undefined : 'pricing-form-error'}
              >
                Save pricing
              </Button>
            </Group>
          </Stack>
        </Card>
      </Grid.Col>
      <Grid.Col span={{ base: 12, md: 6 }}>
        <ListingPreview
          listing={previewOf(listing, result.pricing)}
          unsaved={changed}
          errorFields={pricingErrorFields(result.errors)}
        />
      </Grid.Col>
    </Grid>
  );
}
