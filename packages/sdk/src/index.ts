/**
 * @kairos/sdk: a typed client for the Kairos API (docs: packages/sdk/README.md).
 *
 *   const kairos = new Kairos({ apiKey: process.env.KAIROS_API_KEY, baseUrl: 'https://kairos.example.com' });
 *   const { booking } = await kairos.bookings.create({ start_time, customer_email, customer_name });
 */
import { KairosCore, type KairosOptions } from './client.js';
import type { Method, OperationId, RequestOptions, Result } from './types.js';

/** Resource → method → operationId: what each method calls. Inputs and results follow the operation. */
export const RESOURCES = {
  me: 'getMe',
  updateMe: 'updateMe',
  sessions: { create: 'createSession', deleteCurrent: 'deleteCurrentSession' },
  availability: { slots: 'listAvailableSlots', next: 'getNextAvailableSlot', mutual: 'listMutualSlots' },
  principals: { availability: 'listAvailabilityBlocks' },
  hosts: {
    create: 'createHost',
    list: 'listHosts',
    get: 'getHost',
    update: 'updateHost',
    delete: 'deleteHost',
    createConnectLink: 'createConnectLink',
  },
  schedules: { get: 'getSchedule', replace: 'replaceSchedule' },
  calendars: {
    list: 'listCalendars',
    get: 'getCalendar',
    update: 'updateCalendar',
    sync: 'syncCalendars',
    connectGoogle: 'connectGoogleCalendar',
    connectMicrosoft: 'connectMicrosoftCalendar',
    connectCaldav: 'connectCaldavCalendar',
    addIcsFeed: 'addIcsFeed',
    disconnect: 'disconnectCalendars',
  },
  bookingLinks: {
    create: 'createBookingLink',
    list: 'listBookingLinks',
    get: 'getBookingLink',
    update: 'updateBookingLink',
    delete: 'deleteBookingLink',
    waitlist: { list: 'listWaitlistEntries', remove: 'removeWaitlistEntry' },
  },
  bookings: {
    create: 'createBooking',
    list: 'listBookings',
    get: 'getBooking',
    update: 'updateBooking',
    reschedule: 'updateBooking',
    cancel: 'cancelBooking',
    noShow: 'markBookingNoShow',
  },
  bookingSeries: { get: 'getBookingSeries' },
  outOfOffice: { create: 'createOutOfOffice', list: 'listOutOfOffice', delete: 'deleteOutOfOffice' },
  public: {
    link: 'getPublicBookingLink',
    availability: 'listPublicSlots',
    book: 'createPublicBooking',
    joinWaitlist: 'joinWaitlist',
    claim: 'claimWaitlistOffer',
    booking: 'getPublicBooking',
    cancel: 'cancelPublicBooking',
    reschedule: 'reschedulePublicBooking',
  },
  webhooks: {
    create: 'createWebhook',
    list: 'listWebhooks',
    get: 'getWebhook',
    update: 'updateWebhook',
    delete: 'deleteWebhook',
    rotateSecret: 'rotateWebhookSecret',
    test: 'testWebhook',
    deliveries: 'listWebhookDeliveries',
    retryDelivery: 'retryWebhookDelivery',
  },
  events: { get: 'getEvent' },
  apiKeys: {
    create: 'createApiKey',
    list: 'listApiKeys',
    get: 'getApiKey',
    revoke: 'revokeApiKey',
    stats: 'getApiKeyStats',
  },
  consents: { grant: 'grantConsent', list: 'listConsents', get: 'getConsent', revoke: 'revokeConsent' },
  network: {
    list: 'listConnections',
    remove: 'removeConnection',
    invitations: {
      list: 'listInvitations',
      create: 'createInvitation',
      createMany: 'createInvitations',
      accept: 'acceptInvitation',
      decline: 'declineInvitation',
    },
  },
  proposals: {
    create: 'createProposal',
    list: 'listProposals',
    get: 'getProposal',
    byToken: 'getProposalByToken',
    thread: 'getThread',
    respond: 'respondToProposal',
    close: 'closeProposal',
    cancel: 'cancelProposal',
  },
  payments: { connectStripe: 'connectStripeAccount', stripeAccount: 'getStripeAccount' },
  testClock: { get: 'getTestClock', advance: 'advanceTestClock' },
} as const satisfies Table;

interface Table {
  [name: string]: OperationId | Table;
}

type Build<T> = { [M in keyof T]: T[M] extends OperationId ? Method<T[M]> : Build<T[M]> };

/**
 * How far `testClock.advance` moves the account's test clock (docs/api.md#test-clock): by `seconds`,
 * or `to` an instant — exactly one of them, as the server requires.
 */
export type TestClockAdvance = { seconds: number; to?: never } | { to: string; seconds?: never };

/** The test clock of a test key's account: read it, move it forward. */
export interface TestClock {
  /** GET /v1/test-clock (getTestClock): the clock's `now` and `offset_seconds`. */
  get: Method<'getTestClock'>;
  /** POST /v1/test-clock/advance (advanceTestClock): answers the clock as the move left it. */
  advance(input: TestClockAdvance, options?: RequestOptions): Promise<Result<'advanceTestClock'>>;
}

/** Every resource of the API, typed by the OpenAPI document. */
export type Resources = Omit<Build<typeof RESOURCES>, 'testClock'> & { testClock: TestClock };

/** The Kairos API client. */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the interface declares the methods the constructor builds from RESOURCES
export class Kairos extends KairosCore {
  constructor(options: KairosOptions = {}) {
    super(options);
    const build = (table: Table): Record<string, unknown> =>
      Object.fromEntries(
        Object.entries(table).map(([k, v]) => [k, typeof v === 'string' ? this.op(v) : build(v)]),
      );
    Object.assign(this, build(RESOURCES));
  }
}
export interface Kairos extends Resources {}

export type { KairosOptions } from './client.js';
export * from './errors.js';
export type { components, operations, paths, webhooks } from './openapi.js';
export type {
  Body,
  Item,
  Method,
  OperationId,
  PagePromise,
  Query,
  RequestOptions,
  Result,
  WebhookEvent,
} from './types.js';
export { verifyWebhook, WebhookVerificationError, type WebhookHeaders } from './webhooks.js';
