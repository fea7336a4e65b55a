import { DomainError } from '../../errors';
import type { ErrorCode } from '../../../shared/errors';
import { maskRpcUrl, redactUrlSecrets, RPC_URL_MASK } from '../../../shared/maskUrl';

/**
 * The RPC node could not be reached, timed out or answered with a server error. The shared code
 * list has no 503-type ledger code yet, so this is `internal_error` (500) with a message that
 * names the URL and what to check.
 */
export class SolanaRpcUnavailable extends DomainError {
  constructor(
    readonly rpcUrl: string,
    operation: string,
    cause: string,
  ) {
    super(
      'ledger_unavailable',
      `Solana RPC ${maskRpcUrl(rpcUrl)} is unavailable (${operation}: ${redactRpcUrl(cause, rpcUrl)}). ${rpcHint(rpcUrl)}`,
      { rpcUrl: maskRpcUrl(rpcUrl), operation },
    );
  }
}

/**
 * A message from the RPC library or the node, which may quote the URL it was sent to: these errors reach
 * buyers of /v1 (a purchase's 503) and the logs, so the URL's key is taken out (`rpcUrl` keeps it whole).
 */
const redactRpcUrl = (text: string, rpcUrl: string) => redactUrlSecrets(text, rpcUrl, RPC_URL_MASK);

/** Where the network is chosen: the studio's Wallet page, or the setting behind it. */
const CHOOSE_NETWORK =
  'or choose another network (studio: Wallet → Network; CLI: `kbstudio settings set solana.rpcUrl <url>` or SOLANA_RPC_URL)';

/** What to do about an RPC that does not answer: a local one is most likely not started. */
function rpcHint(rpcUrl: string): string {
  let host = '';
  try {
    host = new URL(rpcUrl).hostname;
  } catch {
    // Not a URL: the generic advice.
  }
  return ['localhost', '127.0.0.1', '[::1]', '::1'].includes(host)
    ? `Nothing answers there: start a local validator (\`solana-test-validator\`), ${CHOOSE_NETWORK}.`
    : `Check the connection to it, ${CHOOSE_NETWORK}.`;
}

/** The RPC node answered, but with a JSON-RPC error that is not a transaction failure. */
export class SolanaRpcError extends DomainError {
  constructor(
    readonly rpcUrl: string,
    operation: string,
    message: string,
  ) {
    super(
      'internal_error',
      `Solana RPC ${maskRpcUrl(rpcUrl)} refused ${operation}: ${redactRpcUrl(message, rpcUrl)}`,
      { rpcUrl: maskRpcUrl(rpcUrl), operation },
    );
  }
}

/** A program error as the IDL (or Anchor's framework codes) names it. */
export interface ProgramErrorInfo {
  code: number;
  name: string;
  message: string;
}

/** The cluster rejected a transaction: preflight simulation failed, or it failed after landing. */
export class TransactionRejected extends DomainError {
  constructor(
    code: ErrorCode,
    message: string,
    readonly programError: ProgramErrorInfo | undefined,
    readonly logs: string[],
    readonly signature?: string,
  ) {
    super(code, message, { programError, logs, ...(signature ? { signature } : {}) });
  }
}

/** A transaction was sent but did not reach the wanted commitment before its blockhash expired. */
export class TransactionNotConfirmed extends DomainError {
  constructor(
    readonly signature: string,
    reason: string,
  ) {
    super('internal_error', `Transaction ${signature} was not confirmed: ${reason}.`, { signature });
  }
}

/** Account bytes that do not decode as the IDL says: wrong owner, discriminator, or too short. */
export class InvalidAccountData extends DomainError {
  constructor(
    readonly address: string,
    reason: string,
  ) {
    super('internal_error', `Account ${address}: ${reason}`, { address });
  }
}
