import { z } from 'zod';
import { AccessModelSchema } from './listings';
import { PageQuerySchema } from './pagination';

export const CREDENTIAL_STATUSES = ['active', 'expired', 'low_balance'] as const;
export const CredentialStatusSchema = z.enum(CREDENTIAL_STATUSES).meta({ id: 'CredentialStatus' });
export type CredentialStatus = z.infer<typeof CredentialStatusSchema>;

export const CredentialSchema = z
  .object({
    listingId: z.string(),
    listingTitle: z.string(),
    holderWallet: z.string().meta({ description: 'The wallet holding the credential (the caller).' }),
    accessModel: AccessModelSchema,
    status: CredentialStatusSchema,
    expiresAt: z
      .string()
      .nullable()
      .meta({ description: 'End of a subscription (ISO 8601); null for the other access models.' }),
    balance: z
      .number()
      .nullable()
      .meta({ description: 'Prepaid balance in SOL of a per_query credential; null for the others.' }),
    pdaAddress: z.string().nullable().meta({ description: 'Address of the on-chain access record.' }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Credential' });
export type Credential = z.infer<typeof CredentialSchema>;

export const CredentialListQuerySchema = PageQuerySchema.extend({
  // Spec §4: GET /credentials lists the caller's *active* credentials; the filter asks for the others.
  status: CredentialStatusSchema.default('active').meta({
    description: 'Only credentials with this status (default `active`).',
  }),
});
export type CredentialListQuery = z.infer<typeof CredentialListQuerySchema>;

export const CredentialVerificationSchema = z
  .object({
    listingId: z.string(),
    valid: z.boolean().meta({ description: 'True exactly when the status is `active`.' }),
    status: z.enum([...CREDENTIAL_STATUSES, 'not_found']),
    expiresAt: z.string().optional().meta({ description: 'End of a subscription (ISO 8601).' }),
    pdaAddress: z.string().optional().meta({ description: 'Address of the on-chain access record.' }),
    onChainVerified: z
      .boolean()
      .meta({ description: 'True only when an RPC lookup of the record on chain succeeded.' }),
  })
  .meta({ id: 'CredentialVerification' });
export type CredentialVerification = z.infer<typeof CredentialVerificationSchema>;

/** The studio's test-buyer view: every local credential, with who granted it. */
export const StudioCredentialSchema = CredentialSchema.extend({
  testGrant: z.boolean().meta({ description: "Granted free by the listing's creator, for testing." }),
});
export type StudioCredential = z.infer<typeof StudioCredentialSchema>;

const listingId = z.string().min(1).max(100);
const wallet = z.string().min(1).max(100);

export const GrantCredentialSchema = z.object({
  listingId,
  wallet,
  expiresAt: z.iso
    .datetime({ offset: true, error: 'expected an ISO 8601 date-time, e.g. 2030-01-31T00:00:00Z' })
    .optional()
    .meta({ description: 'Subscription only: the end of access, past (expired) or future.' }),
  balance: z
    .number()
    .finite()
    .min(0)
    .optional()
    .meta({ description: 'Per-query only: the balance in SOL (default: ten queries).' }),
});
export type GrantCredentialInput = z.infer<typeof GrantCredentialSchema>;

export const PurchaseCredentialSchema = z.object({
  listingId,
  wallet,
  periods: z.number().int().min(1).max(100).optional(),
  deposit: z.number().finite().positive().optional().meta({ description: 'Per-query deposit in SOL.' }),
});

export const RevokeCredentialSchema = z.object({ listingId, wallet });

export const EarningsSchema = z
  .object({
    listingId: z.string(),
    earned: z.number().meta({ description: 'SOL earned: paid purchases plus per-query debits.' }),
    withdrawn: z.number(),
    withdrawable: z.number(),
  })
  .meta({ id: 'Earnings' });
export type EarningsView = z.infer<typeof EarningsSchema>;

export const WithdrawalSchema = z.object({
  listingId: z.string(),
  amount: z.number().meta({ description: 'SOL paid out (0 when nothing was withdrawable).' }),
  signature: z.string().nullable(),
});
export type Withdrawal = z.infer<typeof WithdrawalSchema>;
