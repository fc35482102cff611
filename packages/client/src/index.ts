// @chatgate/client: typed clients for the ChatGate API (ChatGate with an API key, ChatGateOperator
// with the operator token), and the webhook side: constructEvent, the signature check and signer.
import type { ChatGate } from './client.js';
import type { operations, webhooks } from './openapi-types.js';
import type { ChatGateOperator } from './operator.js';

export * from './client.js';
export { type ApiErrorCode, ChatGateError, type ErrorCode, isChatGateError, type Problem } from './errors.js';
export { readEventStream, type StreamedEvent } from './event-stream.js';
export * from './events.js';
export type { components, operations, paths, webhooks } from './openapi-types.js';
export * from './operator.js';
export { type SignatureFailure, signWebhookPayload, type VerifyOptions, verifyWebhookSignature } from './signature.js';
export type { InboundFile, RequestOptions, TransportOptions } from './transport.js';
export type * from './types.js';

// Fails to compile when an operation of the document's paths (its operationId) has no method of
// that name on either client (test/client.test.ts checks the same at run time against a running
// server). The `webhooks` section's operations are the events, which WebhookEvent covers.
type EventOperations = {
  [K in keyof operations]: operations[K] extends webhooks[keyof webhooks]['post'] ? K : never;
}[keyof operations];
type MissingOperations = Exclude<keyof operations, keyof ChatGate | keyof ChatGateOperator | EventOperations>;
const everyOperationCovered: [MissingOperations] extends [never] ? true : MissingOperations = true;
void everyOperationCovered;
