import { z } from 'zod';

/** Shapes of the studio-only surface (/studio/*), shared by the server and the renderer. */

export const ApiKeySchema = z
  .object({
    id: z.string(),
    label: z.string(),
    prefix: z.string().meta({ description: 'The first characters of the key, to recognise it.' }),
    wallet: z.string(),
    createdAt: z.string(),
    lastUsedAt: z.string().nullable(),
    revokedAt: z.string().nullable(),
  })
  .meta({ id: 'ApiKey' });
export type ApiKey = z.infer<typeof ApiKeySchema>;

export const CreatedApiKeySchema = z.object({ id: z.string(), key: z.string(), wallet: z.string() });
export type CreatedApiKey = z.infer<typeof CreatedApiKeySchema>;

export const CreateApiKeySchema = z.object({
  wallet: z.string().optional(),
  label: z.string().trim().max(100).optional(),
});

export const WalletSchema = z
  .object({
    name: z.string(),
    address: z.string(),
    isDefault: z.boolean(),
    encryptedAtRest: z.boolean(),
    createdAt: z.string(),
  })
  .meta({ id: 'Wallet' });
export type Wallet = z.infer<typeof WalletSchema>;

export const CreateWalletSchema = z.object({ name: z.string().trim().min(1).max(64).optional() });

export const StudioInfoSchema = z.object({
  version: z.string(),
  dataDir: z.string(),
  apiBaseUrl: z.string(),
});
export type StudioInfo = z.infer<typeof StudioInfoSchema>;
