import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { generateWebhookSecret, signatureHeader } from '../../src/modules/webhooks/signing.js';
import { REPO } from '../helpers/process.js';

const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
const dir = join(REPO, '.test-data', `readme-${process.pid}`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('README', () => {
  it('starts with what Kairos is and then exactly the two commands', () => {
    const blocks = [...readme.matchAll(/```sh\n([^`]*)```/g)].map((m) => m[1]!.trim());
    expect(readme.startsWith('# Kairos\n\nKairos is')).toBe(true);
    expect(blocks.slice(0, 2)).toEqual(['npm ci && npm start', 'npm ci && npm test']);
  });

  it('shows a receiver verification that accepts real signatures and rejects forged ones', async () => {
    const code = /Verifying a delivery[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(code).toBeDefined();
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'receiver.ts');
    writeFileSync(file, code!);
    const { verifyKairosSignature } = (await import(pathToFileURL(file).href)) as {
      verifyKairosSignature: (raw: Buffer, header: string | undefined, secret: string) => boolean;
    };
    const secret = generateWebhookSecret();
    const body = JSON.stringify({
      id: 'evt_1',
      type: 'booking.created',
      created_at: '2026-06-10T14:00:00.000Z',
      data: {},
    });
    const header = signatureHeader(secret, body);
    expect(verifyKairosSignature(Buffer.from(body), header, secret)).toBe(true);
    expect(verifyKairosSignature(Buffer.from(`${body} `), header, secret)).toBe(false);
    expect(verifyKairosSignature(Buffer.from(body), header.slice(1), secret)).toBe(false);
    expect(verifyKairosSignature(Buffer.from(body), undefined, secret)).toBe(false);
    expect(verifyKairosSignature(Buffer.from(body), header, generateWebhookSecret())).toBe(false);
  });
});
