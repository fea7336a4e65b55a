import {
  Alert,
  Button,
  Group,
  Input,
  Modal,
  NumberInput,
  SegmentedControl,
  Select,
  SimpleGrid,
  Stack,
  TagsInput,
  Text,
  Textarea,
  TextInput,
} from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { AccessModel, Listing, UpdateListingInput } from '../../../../shared/listings';
import { ACCESS_MODEL_LABELS, counted } from '../../lib/format';
import { queryKeys } from '../../lib/queryClient';
import { errorMessage, fieldErrorsOf, type CreateListingBody } from '../../lib/studioApi';
import { useStudioApi } from '../../lib/studioContext';
import {
  ACCESS_MODEL_HELP,
  changedFields,
  DEFAULT_EMBEDDING_MODEL,
  embeddingModelError,
  embeddingModelOptions,
  EMPTY_LISTING_FORM,
  PRICE_LABELS,
  toCreateListingBody,
  toListingFormValues,
  type ListingFormValues,
} from './listingForm';

const FORM_FIELDS = new Set([
  'title',
  'description',
  'domain',
  'tags',
  'accessModel',
  'price',
  'subscriptionDays',
  'embeddingModel',
]);
const ACCESS_OPTIONS = (Object.keys(ACCESS_MODEL_LABELS) as AccessModel[]).map((value) => ({
  value,
  label: ACCESS_MODEL_LABELS[value],
}));

type SaveRequest = { create: CreateListingBody } | { update: UpdateListingInput };

interface ListingFormProps {
  onClose: () => void;
  onCreated?: (listing: Listing) => void;
  listing?: Listing;
}

/**
 * Creates a draft, or with `listing` edits that listing: the same form, prefilled, sending only what
 * changed. The modal stays mounted while closed (keep `listing` set while it closes), so Mantine
 * returns the focus to the button that opened it; its form is mounted afresh at each opening.
 */
export function NewListingModal({
  opened,
  onClose,
  onCreated,
  listing,
}: ListingFormProps & { opened: boolean }) {
  return (
    <Modal
      opened={opened}
      onClose={onClose}
      title={listing ? `Edit ${listing.title}` : 'New listing'}
      size="lg"
      centered
    >
      <ListingForm key={listing?.id ?? 'new'} listing={listing} onClose={onClose} onCreated={onCreated} />
    </Modal>
  );
}

function ListingForm({ onClose, onCreated, listing }: ListingFormProps) {
  const api = useStudioApi();
  const queryClient = useQueryClient();
  const editing = listing !== undefined;
  const [values, setValues] = useState<ListingFormValues>(() =>
    listing ? toListingFormValues(listing) : EMPTY_LISTING_FORM,
  );
  const [embeddingModel, setEmbeddingModel] = useState(listing?.embeddingModel ?? DEFAULT_EMBEDDING_MODEL);
  const [localErrors, setLocalErrors] = useState<Record<string, string>>({});
  const create = useMutation({
    mutationFn: (request: SaveRequest) =>
      'create' in request
        ? api.listings.create(request.create)
        : api.listings.update(listing!.id, request.update),
    onSuccess: async (saved) => {
      await queryClient.invalidateQueries({ queryKey: queryKeys.listings });
      onClose();
      if (!editing) onCreated?.(saved);
    },
  });
  // The server refuses a new model once chunks are embedded with the old one.
  const modelLocked = (listing?.chunkCount ?? 0) > 0;

  const serverErrors = fieldErrorsOf(create.error);
  const errorFor = (field: keyof ListingFormValues) => localErrors[field] ?? serverErrors[field];
  const modelError = serverErrors.embeddingModel ?? embeddingModelError(create.error);
  // Server failures that no input can show (a wallet problem, a lost connection) go above the buttons.
  const generalError =
    create.error &&
    modelError === undefined &&
    !Object.keys(serverErrors).some((field) => FORM_FIELDS.has(field))
      ? create.error
      : undefined;

  const set = <K extends keyof ListingFormValues>(field: K, value: ListingFormValues[K]) => {
    setValues((v) => ({ ...v, [field]: value }));
    setLocalErrors(({ [field]: _dropped, ...rest }) => rest);
  };

  function submit(event: FormEvent) {
    event.preventDefault();
    const result = toCreateListingBody(values);
    if (result.errors) {
      setLocalErrors(result.errors);
      create.reset();
      return;
    }
    setLocalErrors({});
    if (!listing) {
      create.mutate({ create: { ...result.body, embeddingModel } });
      return;
    }
    const patch = changedFields(listing, result.body);
    if (!modelLocked && embeddingModel !== listing.embeddingModel) patch.embeddingModel = embeddingModel;
    if (Object.keys(patch).length === 0) {
      onClose();
      return;
    }
    create.mutate({ update: patch });
  }

  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="md">
        <Text size="sm" c="dimmed">
          {listing
            ? listing.status === 'published'
              ? 'This listing is published: new terms apply to purchases made from now on.'
              : 'This draft is only visible in this studio until you publish it.'
            : 'A listing starts as a draft: only this studio sees it until you publish it. Its knowledge base is added afterwards.'}
        </Text>
        <TextInput
          label="Title"
          placeholder="e.g. EU case law digest"
          required
          data-autofocus
          value={values.title}
          onChange={(e) => set('title', e.currentTarget.value)}
          error={errorFor('title')}
        />
        <Textarea
          label="Description"
          placeholder="What buyers will find in this knowledge base"
          autosize
          minRows={3}
          maxRows={8}
          value={values.description}
          onChange={(e) => set('description', e.currentTarget.value)}
          error={errorFor('description')}
        />
        <SimpleGrid cols={2}>
          <TextInput
            label="Domain"
            placeholder="e.g. law"
            value={values.domain}
            onChange={(e) => set('domain', e.currentTarget.value)}
            error={errorFor('domain')}
          />
          <TagsInput
            label="Tags"
            placeholder="Type a tag, press Enter"
            value={values.tags}
            onChange={(tags) => set('tags', tags)}
            error={errorFor('tags')}
            clearable
          />
        </SimpleGrid>
        <Stack gap={6}>
          <Input.Label id="access-model-label">Access model</Input.Label>
          <SegmentedControl
            fullWidth
            aria-labelledby="access-model-label"
            data={ACCESS_OPTIONS}
            value={values.accessModel}
            onChange={(value) => set('accessModel', value as AccessModel)}
          />
          <Text size="xs" c={errorFor('accessModel') ? 'red' : 'dimmed'}>
            {errorFor('accessModel') ?? ACCESS_MODEL_HELP[values.accessModel]}
          </Text>
        </Stack>
        <SimpleGrid cols={2}>
          <NumberInput
            label={PRICE_LABELS[values.accessModel]}
            required
            min={0}
            decimalScale={9}
            step={0.1}
            allowNegative={false}
            placeholder="0.0"
            rightSection={
              <Text size="xs" c="dimmed" pr={6}>
                SOL
              </Text>
            }
            rightSectionWidth={44}
            value={values.price}
            onChange={(value) => set('price', value)}
            error={errorFor('price')}
          />
          {values.accessModel === 'subscription' && (
            <NumberInput
              label="Period length"
              required
              min={1}
              max={3650}
              allowDecimal={false}
              allowNegative={false}
              rightSection={
                <Text size="xs" c="dimmed" pr={6}>
                  days
                </Text>
              }
              rightSectionWidth={50}
              value={values.subscriptionDays}
              onChange={(value) => set('subscriptionDays', value)}
              error={errorFor('subscriptionDays')}
            />
          )}
        </SimpleGrid>
        <Select
          label="Embedding model"
          description={
            listing && modelLocked
              ? `Fixed: ${counted(listing.chunkCount, 'chunk')} ${listing.chunkCount === 1 ? 'is' : 'are'} already embedded with it. Create a new listing to use another model.`
              : 'Used when documents are ingested; it can change until the first chunks are embedded. Hosted models need their provider’s key (Settings).'
          }
          data={embeddingModelOptions(listing?.embeddingModel)}
          value={embeddingModel}
          onChange={(value) => {
            if (value === null) return;
            setEmbeddingModel(value);
            // A refusal of the old choice no longer applies to the new one.
            if (modelError !== undefined) create.reset();
          }}
          allowDeselect={false}
          readOnly={modelLocked}
          error={modelError}
          comboboxProps={{ withinPortal: true }}
        />
        {generalError !== undefined && (
          <Alert
            color="red"
            variant="light"
            title={editing ? 'The listing was not saved' : 'The listing was not created'}
            role="alert"
          >
            {errorMessage(generalError)}
          </Alert>
        )}
        <Group justify="flex-end" gap="sm" mt="xs">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button type="submit" loading={create.isPending}>
            {editing ? 'Save changes' : 'Create draft'}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
