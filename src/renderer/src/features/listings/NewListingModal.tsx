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
import { useEffect, useRef, useState, type FormEvent } from 'react';
import type { AccessModel, Listing, UpdateListingInput } from '../../../../shared/listings';
import { SolAmountInput } from '../../components/SolAmountInput';
import { ACCESS_MODEL_LABELS, counted } from '../../lib/format';
import { focusFirstInvalid } from '../../lib/focus';
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
import { TERMS_FIXED_NOTE, termsFixedFields, withoutFieldNames } from './termsRefusal';

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

/** What was typed into New listing and not created yet: closing the dialog keeps it for the next opening. */
interface ListingDraft {
  values: ListingFormValues;
  embeddingModel: string;
}

/**
 * Creates a draft, or with `listing` edits that listing: the same form, prefilled, sending only what
 * changed. The modal stays mounted while closed (keep `listing` set while it closes), so Mantine
 * returns the focus to the button that opened it; its form is mounted afresh at each opening. What
 * was typed into a new listing is kept here until it is created or the user starts over: Escape or a
 * click beside the dialog loses nothing. An edit starts again from the listing.
 */
export function NewListingModal({
  opened,
  onClose,
  onCreated,
  listing,
}: ListingFormProps & { opened: boolean }) {
  const [draft, setDraft] = useState<ListingDraft | null>(null);
  return (
    <Modal
      opened={opened}
      onClose={onClose}
      title={listing ? `Edit ${listing.title}` : 'New listing'}
      size="lg"
      centered
    >
      <ListingForm
        key={listing?.id ?? 'new'}
        listing={listing}
        onClose={onClose}
        onCreated={(created) => {
          setDraft(null);
          onCreated?.(created);
        }}
        draft={listing ? null : draft}
        onDraftChange={listing ? undefined : setDraft}
      />
    </Modal>
  );
}

function ListingForm({
  onClose,
  onCreated,
  listing,
  draft,
  onDraftChange,
}: ListingFormProps & {
  draft: ListingDraft | null;
  onDraftChange?: (draft: ListingDraft | null) => void;
}) {
  const api = useStudioApi();
  const queryClient = useQueryClient();
  const editing = listing !== undefined;
  const [values, setValues] = useState<ListingFormValues>(() =>
    listing ? toListingFormValues(listing) : (draft?.values ?? EMPTY_LISTING_FORM),
  );
  const [embeddingModel, setEmbeddingModel] = useState(
    listing?.embeddingModel ?? draft?.embeddingModel ?? DEFAULT_EMBEDDING_MODEL,
  );
  // Said once, when the dialog opens on what was typed before.
  const [restored] = useState(draft !== null);
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

  // A published listing's terms are fixed while anyone holds access: the 409 names the fields.
  const fixedFields = termsFixedFields(create.error);
  const serverErrors: Record<string, string> = {
    ...fieldErrorsOf(create.error),
    ...Object.fromEntries(fixedFields.map((field) => [field, TERMS_FIXED_NOTE])),
  };
  const errorFor = (field: keyof ListingFormValues) => localErrors[field] ?? serverErrors[field];
  const modelError = serverErrors.embeddingModel ?? embeddingModelError(create.error);
  // Server failures that no input can show (a wallet problem, a lost connection) go above the buttons.
  // The refusal of new terms is said there too, in the server's words (the fields are marked as well).
  const generalError =
    create.error &&
    modelError === undefined &&
    (fixedFields.length > 0 || !Object.keys(serverErrors).some((field) => FORM_FIELDS.has(field)))
      ? create.error
      : undefined;

  // The dialog scrolls: a refusal below the fold is brought into view, as the user looks for it there.
  const refusal = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (generalError !== undefined) refusal.current?.scrollIntoView({ block: 'nearest' });
  }, [generalError]);

  const set = <K extends keyof ListingFormValues>(field: K, value: ListingFormValues[K]) => {
    const next = { ...values, [field]: value };
    setValues(next);
    onDraftChange?.({ values: next, embeddingModel });
    setLocalErrors(({ [field]: _dropped, ...rest }) => rest);
  };

  function startOver() {
    setValues(EMPTY_LISTING_FORM);
    setEmbeddingModel(DEFAULT_EMBEDDING_MODEL);
    onDraftChange?.(null);
    setLocalErrors({});
    create.reset();
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    const result = toCreateListingBody(values);
    if (result.errors) {
      setLocalErrors(result.errors);
      create.reset();
      // Not left on Create draft: the first field to fix takes the focus, and says why.
      focusFirstInvalid(event.currentTarget as HTMLFormElement);
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
        <Text size="sm" c="dimmed" data-testid="listing-form-note">
          {listing
            ? listing.status === 'published'
              ? 'This listing is published. While anyone holds access to it (test buyers included), its access model, price and subscription days cannot change: revoke their credentials first, or create a new listing for the new terms. The title, description, domain and tags can change at any time.'
              : 'This draft is only visible in this studio until you publish it.'
            : 'A listing starts as a draft: only this studio sees it until you publish it. Its knowledge base is added afterwards.'}
        </Text>
        {!listing && restored && (
          <Text size="xs" c="dimmed" role="status">
            What you typed before is kept.{' '}
            <Button variant="subtle" size="compact-xs" onClick={startOver}>
              Start over
            </Button>
          </Text>
        )}
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
          <SolAmountInput
            label={PRICE_LABELS[values.accessModel]}
            required
            placeholder="0.0"
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
              // Not clamped on blur: 0 became 1 day without a word. The server's rule is shown instead.
              clampBehavior="none"
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
            onDraftChange?.({ values, embeddingModel: value });
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
            ref={refusal}
            color="red"
            variant="light"
            title={
              fixedFields.length > 0
                ? 'Not saved: the terms are fixed while anyone holds access'
                : editing
                  ? 'The listing was not saved'
                  : 'The listing was not created'
            }
            role="alert"
          >
            {fixedFields.length > 0
              ? withoutFieldNames(errorMessage(generalError))
              : errorMessage(generalError)}
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
