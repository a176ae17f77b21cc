/**
 * Rules a schema cannot say (across fields, or against stored data) are named in the operation's
 * description (docs/api.md#errors), from the `x-checks` of its request schemas; the keyword itself does
 * not reach the document.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getJson, type Json, startTestApp, type TestApp } from '../../test/helpers/app.js';

let t: TestApp;
let doc: Json;
beforeAll(async () => {
  t = await startTestApp();
  doc = await getJson(`${t.url}/v1/openapi.json`);
});
afterAll(() => t.close());

describe('cross-field rules in the document', () => {
  it('names them in the description of the operations that check them', () => {
    const description = (path: string, method: string): string => doc.paths[path][method].description ?? '';
    expect(description('/v1/api-keys', 'post')).toContain('Checked beyond the schema');
    expect(description('/v1/api-keys', 'post')).toContain('`scopes` must suit `key_type`');
    expect(description('/v1/availability/slots', 'get')).toContain('`to` is after `from`');
    expect(description('/v1/bookings', 'post')).toContain('`end_time` or `duration_minutes`, not both');
    expect(description('/v1/proposals', 'post')).toContain('`mode: poll` takes `participant_emails`');
    expect(description('/v1/principals/{id}/schedule', 'put')).toContain('override dates are distinct');
  });

  it('leaves no x-checks keyword in the document', () => {
    expect(JSON.stringify(doc)).not.toContain('x-checks');
  });
});
