import { describe, expect, it } from 'vitest';
import { contentSecurityPolicy, SAME_ORIGIN_ASSETS } from './csp.js';

describe('contentSecurityPolicy', () => {
  it('writes the directives in the order given', () => {
    expect(
      contentSecurityPolicy({ 'default-src': "'none'", ...SAME_ORIGIN_ASSETS, 'frame-ancestors': '*' }),
    ).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors *",
    );
  });
});
