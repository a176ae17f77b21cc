// Compile-time checks of the SDK's method types (type-checked by `npm run check`, never run): inputs and
// results come from the OpenAPI document, and a wrong call does not compile.
import type { Kairos, WebhookEvent } from '../src/index.js';

export async function typeChecks(k: Kairos, event: WebhookEvent): Promise<void> {
  // Operations with a body and query parameters take the query in the options, typed.
  await k.calendars.addIcsFeed({ url: 'https://example.com/a.ics' }, { query: { principal_id: 'p' } });
  // @ts-expect-error: not a query parameter of addIcsFeed
  await k.calendars.addIcsFeed({ url: 'https://example.com/a.ics' }, { query: { nope: 1 } });
  // @ts-expect-error: getBooking takes the booking's id
  await k.bookings.get();
  // @ts-expect-error: listAvailableSlots requires from and to
  await k.availability.slots({ principal_id: 'p' });
  // @ts-expect-error: customer_name is required
  await k.bookings.create({ start_time: '2054-06-10T09:00:00Z', customer_email: 'ada@example.com' });
  const { booking } = await k.bookings.create({
    start_time: '2054-06-10T09:00:00Z',
    customer_email: 'ada@example.com',
    customer_name: 'Ada Lovelace',
  });
  booking.status satisfies 'pending_payment' | 'confirmed' | 'cancelled' | 'expired';
  // A list is awaited for a page and iterated for its items.
  const page = await k.bookings.list({ limit: 100 });
  page.pagination.next_cursor satisfies string | null;
  for await (const item of k.bookings.list()) item.start_time satisfies string;
  // 204: nothing.
  (await k.webhooks.delete('wh_1')) satisfies undefined;
  // A webhook event narrows by its type.
  if (event.type === 'booking.updated') event.data.previous.start_time satisfies string;
  // Test mode: the environment of a key and of the caller; the test clock moves by seconds or to an instant.
  (await k.me()).environment satisfies 'live' | 'test';
  (await k.apiKeys.create({ name: 'ci', environment: 'test' })).api_key.environment satisfies 'live' | 'test';
  (await k.testClock.get()).test_clock.offset_seconds satisfies number;
  (await k.testClock.advance({ seconds: 3600 })).test_clock.now satisfies string;
  await k.testClock.advance({ to: '2054-06-10T09:00:00Z' });
  // @ts-expect-error: exactly one of seconds and to
  await k.testClock.advance({ seconds: 3600, to: '2054-06-10T09:00:00Z' });
  // @ts-expect-error: one of them is required
  await k.testClock.advance({});
}
