import { DomainError } from '../errors';

/** The embedding model cannot produce vectors: its package is missing or damaged, or its provider failed. */
export class EmbeddingModelUnavailable extends DomainError {
  constructor(
    readonly model: string,
    reason: string,
  ) {
    super('embedding_provider_unavailable', `The embedding model '${model}' is unavailable: ${reason}`);
  }
}

/** A model outside the spec's table (and the offline default); the message lists the supported ones. */
export class UnsupportedEmbeddingModel extends DomainError {
  constructor(model: string, supported: string[]) {
    super(
      'unsupported_embedding_model',
      `embedding_model: '${model}' is not supported. Supported models: ${supported.join(', ')}. Other models require contacting support.`,
    );
  }
}
