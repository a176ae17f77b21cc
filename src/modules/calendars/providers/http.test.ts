import { describe, expect, it } from 'vitest';
import { ProviderError } from './errors.js';
import { answerError, codeForStatus, graphNextLink, nextPageTokenUrl, readPages } from './http.js';

describe('paging shared by Google and Graph', () => {
  it('readPages follows next URLs until there is none, and answers false when maxPages ran out first', async () => {
    const seen: string[] = [];
    const pages = ['https://api.test/p?n=1', 'https://api.test/p?n=2', undefined];
    const done = await readPages('https://api.test/p', 5, async (url) => {
      seen.push(url);
      return pages[seen.length - 1];
    });
    expect(done).toBe(true);
    expect(seen).toEqual(['https://api.test/p', 'https://api.test/p?n=1', 'https://api.test/p?n=2']);
    let calls = 0;
    const endless = await readPages('https://api.test/p', 3, async () => {
      calls++;
      return 'https://api.test/again';
    });
    expect(endless).toBe(false);
    expect(calls).toBe(3);
  });

  it("nextPageTokenUrl keeps the request's parameters and sets (or replaces) pageToken; none on the last page", () => {
    const first =
      'https://www.googleapis.com/calendar/v3/users/me/calendarList?maxResults=250&showHidden=false';
    const second = nextPageTokenUrl(first, { nextPageToken: 'a b' });
    expect(second).toBe(`${first}&pageToken=a+b`);
    expect(nextPageTokenUrl(second as string, { nextPageToken: 'c' })).toBe(`${first}&pageToken=c`);
    expect(nextPageTokenUrl(first, { items: [] })).toBeUndefined();
    expect(nextPageTokenUrl(first, undefined)).toBeUndefined();
  });

  it('graphNextLink resolves the link against the Graph base and refuses one to another origin or unreadable', () => {
    const base = 'https://graph.test/v1.0';
    expect(graphNextLink({ '@odata.nextLink': '/v1.0/me/calendars?$skip=2' }, base)).toBe(
      'https://graph.test/v1.0/me/calendars?$skip=2',
    );
    expect(graphNextLink({ '@odata.nextLink': 'https://evil.test/v1.0/me' }, base)).toBe('foreign');
    expect(graphNextLink({ '@odata.nextLink': 'http://[' }, base)).toBe('foreign');
    expect(graphNextLink({ value: [] }, base)).toBeUndefined();
  });
});

describe('error answers shared by Google and Graph', () => {
  it('maps 401, 429 (or a rate-limit reason), 5xx and other 4xx to the provider error codes', () => {
    expect(codeForStatus(401, false)).toBe('unauthorized');
    expect(codeForStatus(429, false)).toBe('rate_limited');
    expect(codeForStatus(403, true)).toBe('rate_limited');
    expect(codeForStatus(503, false)).toBe('unavailable');
    expect(codeForStatus(404, false)).toBe('bad_request');
  });

  it('answerError carries the status, the reason and Retry-After in milliseconds', () => {
    const res = new Response(null, { status: 429, headers: { 'retry-after': '7' } });
    const err = answerError(res, 0, { message: 'slow down', reason: 'TooManyRequests' });
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({
      code: 'rate_limited',
      status: 429,
      reason: 'TooManyRequests',
      retryAfterMs: 7000,
    });
    expect(err.message).toBe('slow down');
    const plain = answerError(new Response(null, { status: 400 }), 0, { message: 'no', reason: undefined });
    expect(plain.reason).toBeUndefined();
    expect(plain.retryAfterMs).toBeUndefined();
  });
});
