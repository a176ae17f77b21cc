import { hkdfSync } from 'node:crypto';

/** Keys derived from the one master secret (KAIROS_MASTER_KEY, or master.key in the data dir). */
export interface DerivedKeys {
  /** HMAC pepper for API key hashes. */
  apiKeyPepper: Buffer;
  /** HS256 key for session JWTs. */
  jwtKey: Buffer;
  /** AES-256-GCM key for secrets at rest (webhook secrets, OAuth tokens, CalDAV passwords). */
  encryptionKey: Buffer;
  /** HMAC key for signed links (host connect links, OAuth state). */
  linkKey: Buffer;
}

export function deriveKeys(masterKeyBase64: string): DerivedKeys {
  const ikm = Buffer.from(masterKeyBase64, 'base64');
  const derive = (info: string) =>
    Buffer.from(hkdfSync('sha256', ikm, Buffer.alloc(0), `kairos:${info}`, 32));
  return {
    apiKeyPepper: derive('api-key-pepper'),
    jwtKey: derive('session-jwt'),
    encryptionKey: derive('secrets-at-rest'),
    linkKey: derive('signed-links'),
  };
}
