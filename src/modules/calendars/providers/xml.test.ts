import { describe, expect, it } from 'vitest';
import { ProviderError, parseRetryAfter } from './errors.js';
import { normalizedCopy } from '../../../lib/intervals.js';
import { chunk, splitWindow } from './types.js';
import { child, descendants, parseXml, XmlError } from './xml.js';

describe('parseXml', () => {
  it('resolves default and prefixed namespaces, CDATA and entities', () => {
    const root = parseXml(
      '<?xml version="1.0"?><!-- hi -->' +
        '<d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">' +
        '<d:response><d:href>/a%20b/</d:href><d:propstat><d:prop>' +
        '<c:calendar-data><![CDATA[BEGIN:VCALENDAR\r\n<x>]]></c:calendar-data>' +
        '<displayname xmlns="DAV:">Tom &amp; Jerry &#x263A; &#65;</displayname>' +
        '</d:prop></d:propstat></d:response></d:multistatus>',
    );
    expect(root).toMatchObject({ ns: 'DAV:', name: 'multistatus' });
    const data = descendants(root, 'urn:ietf:params:xml:ns:caldav', 'calendar-data')[0];
    expect(data?.text).toBe('BEGIN:VCALENDAR\r\n<x>');
    expect(descendants(root, 'DAV:', 'displayname')[0]?.text).toBe('Tom & Jerry \u263A A');
    const response = child(root, 'DAV:', 'response');
    expect(response && child(response, 'DAV:', 'href')?.text).toBe('/a%20b/');
  });

  it('rejects DOCTYPE, mismatched tags and undeclared prefixes', () => {
    expect(() => parseXml('<!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>')).toThrow(XmlError);
    expect(() => parseXml('<a><b></a></b>')).toThrow(XmlError);
    expect(() => parseXml('<p:a/>')).toThrow(XmlError);
    expect(() => parseXml('<a>')).toThrow(XmlError);
  });
});

describe('interval helpers and errors', () => {
  it('merges, splits and chunks', () => {
    expect(
      normalizedCopy([
        { start: 5, end: 7 },
        { start: 1, end: 3 },
        { start: 3, end: 4 },
        { start: 6, end: 9 },
        { start: 10, end: 10 },
      ]),
    ).toEqual([
      { start: 1, end: 4 },
      { start: 5, end: 9 },
    ]);
    expect(splitWindow({ start: 0, end: 25 }, 10)).toEqual([
      { start: 0, end: 10 },
      { start: 10, end: 20 },
      { start: 20, end: 25 },
    ]);
    expect(chunk([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
  });

  it('parses Retry-After as seconds or HTTP-date', () => {
    const now = Date.parse('2026-06-01T12:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Mon, 01 Jun 2026 12:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Mon, 01 Jun 2026 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
  });

  it('ProviderError carries code, status and retry hint', () => {
    const e = new ProviderError('rate_limited', 429, 'slow down', { retryAfterMs: 1000, reason: 'x' });
    expect(e).toBeInstanceOf(Error);
    expect(e).toMatchObject({ name: 'ProviderError', code: 'rate_limited', status: 429, retryAfterMs: 1000 });
  });
});
