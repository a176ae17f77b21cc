import { describe, expect, it } from 'vitest';
import { clientBundle, clientEntries, webClients } from './assets.js';

describe('the asset bundler', () => {
  it('finds the client folders under src/web, shared code aside', () => {
    expect(webClients()).toContain('booking');
    expect(webClients()).not.toContain('shared');
  });

  it('bundles every client folder: each top-level script and stylesheet under a hashed /assets path, each classic script unhashed', async () => {
    for (const client of webClients()) {
      const { entries, classic } = clientEntries(client);
      const bundle = await clientBundle(client);
      expect([...bundle.entries.keys()].sort()).toEqual(Object.keys(entries).sort());
      for (const [name, a] of bundle.entries) {
        expect(a.path).toMatch(new RegExp(`^/assets/${name}-[A-Z0-9]+\\.(js|css)$`));
        expect(bundle.byPath.get(a.path)).toBe(a);
      }
      expect([...bundle.classic.values()].map((a) => a.path).sort()).toEqual(
        classic.map((f) => `/${f.replace('.classic.ts', '')}.js`).sort(),
      );
    }
  });

  it("bundles the booking client's pages, stylesheet and /embed.js (a classic script: no module syntax)", async () => {
    const booking = await clientBundle('booking');
    expect([...booking.entries.keys()].sort()).toEqual([
      'book',
      'claim',
      'invitation',
      'manage',
      'pages',
      'proposal',
    ]);
    expect(booking.entries.get('pages')?.type).toBe('text/css; charset=utf-8');
    const embed = booking.classic.get('embed');
    expect(embed?.path).toBe('/embed.js');
    expect(embed?.body.toString('utf8')).not.toMatch(/^\s*(import|export)\b/m);
  });
});
