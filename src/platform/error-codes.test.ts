import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getJson, type Json, startTestApp, type TestApp } from '../../test/helpers/app.js';
import { declaredCodes, statusesOf } from './errors.js';
import { inlineComponents } from './openapi.js';

// docs/api.md, Error codes: `code` is a closed set. Every declared code is listed by some operation of
// the document under a status it is declared with, and the table in docs/api.md lists exactly the set.
// (That every answer's `code` is one its operation lists is checked on every answer of every test:
// test/helpers/openapi-check.ts.)
let t: TestApp;
let documented: Map<string, Set<number>>;
beforeAll(async () => {
  t = await startTestApp();
  const doc = await getJson(`${t.url}/v1/openapi.json`);
  documented = new Map();
  for (const methods of Object.values(doc.paths as Record<string, Record<string, Json>>)) {
    for (const op of Object.values(methods)) {
      for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
        // A narrowed problem is a component, by reference.
        const schema = inlineComponents(
          response.content?.['application/problem+json']?.schema,
          doc.components.schemas,
        ) as Json;
        for (const part of schema?.allOf ?? []) {
          for (const code of (part.properties?.code?.enum ?? []) as string[]) {
            const statuses = documented.get(code) ?? new Set<number>();
            statuses.add(Number(status));
            documented.set(code, statuses);
          }
        }
      }
    }
  }
});
afterAll(() => t.close());

describe('error codes', () => {
  it('lists every declared code on some operation, only under statuses it is declared with', () => {
    const declared = [...declaredCodes().keys()].sort();
    expect([...documented.keys()].sort()).toEqual(declared);
    for (const [code, statuses] of documented) {
      for (const s of statuses) expect(statusesOf(code), `${code} under ${s}`).toContain(s);
    }
  });

  it('docs/api.md lists exactly the declared codes', () => {
    const api = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
    const section = api.slice(api.indexOf('### Error codes'), api.indexOf('## Rate limits'));
    const rows = [...section.matchAll(/^\| [^|]+ \| `([a-z_]+)` \| ([\d, ]+) \|/gm)];
    const listed = new Map<string, string>();
    for (const [, code, status] of rows) listed.set(code as string, (status as string).trim());
    expect([...listed.keys()].sort()).toEqual([...new Set(declaredCodes().keys())].sort());
    for (const [code, status] of listed) {
      const statuses = status.split(',').map((s) => Number(s.trim()));
      for (const s of statuses) expect(statusesOf(code), `${code} ${status}`).toContain(s);
    }
  });
});
