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
import { consoleModule } from './console/module.js';
import { mailModule } from './mail/module.js';
import { mcpModule } from './mcp/module.js';
import { networkModule } from './network/module.js';
import { outOfOfficeModule } from './out-of-office/module.js';
import { pagesModule } from './pages/module.js';
import { paymentsModule } from './payments/module.js';
import {
  type Composed,
  catalogueOf,
  compose,
  type EventCatalogue,
  type ModuleDefinition,
  type Platform,
} from './module.js';
import { principalsModule } from './principals/module.js';
import { proposalsModule } from './proposals/module.js';
import { testClockModule } from './test-clock/module.js';
import { webhooksModule } from './webhooks/module.js';

export const MODULES = [
  principalsModule,
  apiKeysModule,
  accountsModule,
  testClockModule,
  webhooksModule,
  calendarsModule,
  availabilityModule,
  mailModule,
  bookingLinksModule,
  paymentsModule,
  bookingsModule,
  outOfOfficeModule,
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

export type { BuiltModule } from './module.js';

export interface Composition extends Composed {
  apis: ModuleApis;
}

/** The webhook events every module declares (docs/api.md#events), in module order. */
export function eventCatalogue(modules: readonly AnyModule[] = MODULES): EventCatalogue {
  return catalogueOf(modules);
}

/**
 * Builds every module once, in order (src/modules/module.ts, `compose`); `extra` modules come last
 * (tests add contributions this way).
 */
export function composeModules(platform: Platform, extra: readonly AnyModule[] = []): Composition {
  const composed = compose(platform, [...(MODULES as readonly AnyModule[]), ...extra]);
  return { ...composed, apis: composed.apis as ModuleApis };
}
