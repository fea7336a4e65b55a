import { OpenApiGeneratorV31, type OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';

export function openApiDocument(registry: OpenAPIRegistry, version: string) {
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description:
      'An API key (`kbs_` + 32 characters), scoped to one wallet. Create one with `kbstudio keys create`.',
  });
  registry.registerComponent('securitySchemes', 'walletSignature', {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description:
      '`Wallet <address>:<base58 ed25519 signature>:<timestampMs>` over `kbs-auth:v1:<METHOD>:<path with query>:<timestampMs>:<sha256 hex of body>`; ±5 minutes, each signature once.',
  });
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Knowledge Marketplace Retrieval API (KB Studio)',
      version,
      description:
        'The /v1 API as KB Studio implements it locally. Wire decisions the spec leaves open are in docs/api.md.',
    },
    servers: [{ url: '/' }],
    security: [{ bearerAuth: [] }, { walletSignature: [] }],
  });
}
