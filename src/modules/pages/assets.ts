/**
 * The pages' assets (docs/design.md#pages): the `booking` client (src/web/booking/), bundled by
 * the platform's asset bundler (src/platform/assets.ts), named for the pages: one module script per
 * page, one stylesheet, the `/embed.js` classic script. `byPath` holds the hashed assets of every client
 * under src/web, which `/assets/<file>` serves. `prepareAssets()` starts the build early.
 */
import { type Asset, clientBundle, licenseNotices, webClients } from '../../platform/assets.js';

export type { Asset } from '../../platform/assets.js';

/** The client folder the pages serve. */
const CLIENT = 'booking';

/** The pages' scripts, by entry name. */
export type PageScript = 'book' | 'manage' | 'proposal' | 'claim' | 'invitation';

export interface Assets extends Record<PageScript, Asset> {
  css: Asset;
  /** `/embed.js`: the script a host page loads (one classic script, not hashed: its URL is the API). */
  embed: Asset;
  byPath: ReadonlyMap<string, Asset>;
}

const SCRIPTS: readonly PageScript[] = ['book', 'manage', 'proposal', 'claim', 'invitation'];

let building: Promise<Assets> | null = null;

/** The bundles, built once per process (a failed build is tried again on the next call). */
export function prepareAssets(): Promise<Assets> {
  if (!building) {
    building = collect();
    building.catch(() => {
      building = null;
    });
  }
  return building;
}

async function collect(): Promise<Assets> {
  const clients = webClients();
  const bundles = await Promise.all(clients.map((c) => clientBundle(c)));
  const own = bundles[clients.indexOf(CLIENT)];
  if (!own) throw new Error(`no client folder src/web/${CLIENT}`);
  const need = (a: Asset | undefined, name: string): Asset => {
    if (!a) throw new Error(`src/web/${CLIENT} has no ${name} bundle`);
    return a;
  };
  const scripts = Object.fromEntries(SCRIPTS.map((s) => [s, need(own.entries.get(s), s)])) as Record<
    PageScript,
    Asset
  >;
  const byPath = new Map<string, Asset>();
  for (const b of bundles) for (const [path, a] of b.byPath) byPath.set(path, a);
  return {
    ...scripts,
    css: need(own.entries.get('pages'), 'pages.css'),
    embed: need(own.classic.get('embed'), 'embed.classic.ts'),
    byPath,
  };
}

/** The license notices of what the bundles contain, served beside them (`/assets/licenses.txt`). */
export function licenses(): string {
  return licenseNotices(['preact', 'htm']);
}
