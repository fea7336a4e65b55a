import { OpenApiGeneratorV31, type OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';

export function openApiDocument(registry: OpenAPIRegistry, version: string) {
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description:
      'An API key (`kbs_` + 32 characters), scoped to one wallet. Create one with `kbstudio keys create`.',
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
    security: [{ bearerAuth: [] }],
  });
}
