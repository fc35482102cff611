// @chatgate/client: a typed client for the ChatGate API and the webhook signature check.
export * from './client.js';
export { type ApiErrorCode, ChatGateError, type ErrorCode, isChatGateError, type Problem } from './errors.js';
export type { components, operations, paths, webhooks } from './openapi-types.js';
export { type VerifyOptions, verifyWebhookSignature } from './signature.js';
