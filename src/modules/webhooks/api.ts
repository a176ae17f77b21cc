/** The webhooks module's public surface (docs/architecture.md#modules). */
export { type EmitEventInput, emitEvent } from './events.js';
export type { WebhookService as WebhooksApi } from './service.js';

/**
 * The payload (`data`) of each webhook event type, by type. Empty here: each module that emits events
 * adds its own with declaration merging, beside their TypeBox schemas in its `events.ts` (which its
 * definition declares as `events`), so `emitEvent` accepts exactly the declared payload of each type.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging in the emitting modules
export interface EventPayloads {}

/** A webhook event type some module declares. */
export type EventType = keyof EventPayloads & string;
