/**
 * The modules of Kairos, in dependency order, and the one composition step that builds them
 * (docs/architecture.md#modules). A module may need only modules listed before it.
 */
import type { TObject } from '@sinclair/typebox';
import { accountsModule } from './accounts/module.js';
import { apiKeysModule } from './api-keys/module.js';
import { availabilityModule } from './availability/module.js';
import { bookingLinksModule } from './booking-links/module.js';
import { bookingsModule } from './bookings/module.js';
import { calendarsModule } from './calendars/module.js';
import { consoleModule } from './console/module.js';
import { mailModule } from './mail/module.js';
import { mcpModule } from './mcp/module.js';
import { networkModule } from './network/module.js';
import { pagesModule } from './pages/module.js';
import { paymentsModule } from './payments/module.js';
import {
  type EventCatalogue,
  type ExtensionPoint,
  type ExtensionPointTypes,
  Extensions,
  type ModuleDefinition,
  type ModuleParts,
  type Platform,
} from './module.js';
import { principalsModule } from './principals/module.js';
import { proposalsModule } from './proposals/module.js';
import { webhooksModule } from './webhooks/module.js';

export const MODULES = [
  principalsModule,
  apiKeysModule,
  accountsModule,
  webhooksModule,
  calendarsModule,
  availabilityModule,
  mailModule,
  bookingLinksModule,
  paymentsModule,
  bookingsModule,
  networkModule,
  pagesModule,
  proposalsModule,
  consoleModule,
  mcpModule,
] as const;

type Listed = (typeof MODULES)[number];
// biome-ignore lint/suspicious/noExplicitAny: any module, whatever it needs (checked per module below)
export type AnyModule = ModuleDefinition<string, any, unknown>;
type ApiOf<M> = M extends ModuleDefinition<string, infer _N, infer A> ? A : never;
type NeedsOf<M> = M extends ModuleDefinition<string, infer N, unknown> ? N : never;

/** Every module's API, by module name. */
export type ModuleApis = { [M in Listed as M['name']]: ApiOf<M> };

// Compile-time: each module's `Needs` is met by the APIs of the modules it names.
type Met<M> = Pick<ModuleApis, keyof NeedsOf<M> & keyof ModuleApis> extends NeedsOf<M> ? true : false;
const everyNeedMet: false extends Met<Listed> ? never : true = true;
void everyNeedMet;

export interface BuiltModule {
  name: string;
  parts: ModuleParts<unknown>;
}

export interface Composition {
  apis: ModuleApis;
  built: readonly BuiltModule[];
  extensions: Extensions;
  events: EventCatalogue;
}

/** The webhook events every module declares (docs/api.md#events), in module order. */
export function eventCatalogue(modules: readonly AnyModule[] = MODULES): EventCatalogue {
  const catalogue = new Map<string, { module: string; payload: TObject }>();
  for (const def of modules) {
    for (const [type, payload] of Object.entries(def.events ?? {})) {
      const owner = catalogue.get(type);
      if (owner) throw new Error(`event ${type} is declared by both ${owner.module} and ${def.name}`);
      catalogue.set(type, { module: def.name, payload });
    }
  }
  return catalogue;
}

/**
 * Builds every module once, in order: each receives the platform, the APIs it needs (checked to be
 * built already) and the extension points; its contributions are added to those points, which are
 * sealed at the end. `extra` modules come last (tests add contributions this way).
 */
export function composeModules(platform: Platform, extra: readonly AnyModule[] = []): Composition {
  const extensions = new Extensions();
  const apis: Record<string, unknown> = {};
  const built: BuiltModule[] = [];
  const all = [...(MODULES as readonly AnyModule[]), ...extra];
  const events = eventCatalogue(all);
  for (const def of all) {
    if (def.name in apis) throw new Error(`module ${def.name} is listed twice`);
    const needs: Record<string, unknown> = {};
    for (const name of def.needs) {
      if (!(name in apis)) {
        throw new Error(
          `module ${def.name} needs ${name}, which is not built before it (src/modules/index.ts lists modules in dependency order)`,
        );
      }
      needs[name] = apis[name];
    }
    const parts = def.create({ platform, needs, extensions, events });
    for (const point of Object.keys(parts.contributes ?? {}) as ExtensionPoint[]) {
      extensions.add(point, (parts.contributes?.[point] ?? []) as ExtensionPointTypes[typeof point][]);
    }
    apis[def.name] = parts.api;
    built.push({ name: def.name, parts });
  }
  extensions.seal();
  return { apis: apis as ModuleApis, built, extensions, events };
}
