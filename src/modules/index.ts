/**
 * The modules of Kairos, in dependency order, and the one composition step that builds them
 * (docs/architecture.md#modules). A module may need only modules listed before it.
 */
import { accountsModule } from './accounts/module.js';
import { apiKeysModule } from './api-keys/module.js';
import { availabilityModule } from './availability/module.js';
import { bookingLinksModule } from './booking-links/module.js';
import { bookingsModule } from './bookings/module.js';
import { calendarsModule } from './calendars/module.js';
import { mailModule } from './mail/module.js';
import { networkModule } from './network/module.js';
import { pagesModule } from './pages/module.js';
import { paymentsModule } from './payments/module.js';
import {
  type ExtensionPoint,
  type ExtensionPointTypes,
  Extensions,
  type ModuleDefinition,
  type ModuleParts,
  type Platform,
} from './module.js';
import { principalsModule } from './principals/module.js';
import { proposalsModule } from './proposals/module.js';
import { isEventType } from './webhooks/api.js';
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
  for (const def of [...(MODULES as readonly AnyModule[]), ...extra]) {
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
    const parts = def.create({ platform, needs, extensions });
    for (const type of parts.emits ?? []) {
      if (!isEventType(type)) throw new Error(`module ${def.name} emits ${type}, not a webhook event type`);
    }
    for (const point of Object.keys(parts.contributes ?? {}) as ExtensionPoint[]) {
      extensions.add(point, (parts.contributes?.[point] ?? []) as ExtensionPointTypes[typeof point][]);
    }
    apis[def.name] = parts.api;
    built.push({ name: def.name, parts });
  }
  extensions.seal();
  return { apis: apis as ModuleApis, built, extensions };
}
