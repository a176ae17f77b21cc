// Writes the OpenAPI document (built without a database, src/openapi.ts) to the file named as the first
// argument, or to standard output: `npm run check:openapi` lints it with Redocly.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { openApiDocument } from '../src/openapi.js';

const out = process.argv[2];
const json = `${JSON.stringify(await openApiDocument(), null, 2)}\n`;
if (out) {
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, json);
} else {
  process.stdout.write(json);
}
