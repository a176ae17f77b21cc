/** The webhooks module's public surface (docs/architecture.md#modules). */
export { EVENT_TYPES, type EventType, isEventType } from './events.js';
export { type EmitEventInput, emitEvent } from './events.js';
export type { WebhookService as WebhooksApi } from './service.js';
