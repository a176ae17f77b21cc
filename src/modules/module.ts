/**
 * The module contract (docs/architecture.md#modules). A module is a definition: a name, the other
 * modules' public APIs it needs (narrowed with `Pick<>` in its `Needs` type), and a `create` that
 * builds its parts from the platform and those APIs. `src/modules/index.ts` lists the modules in
 * dependency order and `composeModules` folds over them once per process; the runtime
 * (src/runtime.ts) then registers what they contributed: routes, jobs, schedules, LISTEN channels,
 * credential kinds. What flows *up* — from a module to one built before it (busy time for
 * availability, access grants and calendar status for principals) — goes through the extension
 * points below, which the composition fills and then seals before anything runs.
 */
import type { TObject } from '@sinclair/typebox';
import type { Config } from '../config.js';
import type { Notifier } from '../db/notify.js';
import type { Db } from '../db/store.js';
import type { JobHandler, JobRunner, RegisterOptions } from '../jobs/runner.js';
import type { CredentialResolver, RevocationListener } from '../platform/auth.js';
import type { Clock } from '../platform/clock.js';
import type { DerivedKeys } from '../platform/keys.js';
import type { Metrics } from '../platform/metrics.js';
import type { TypedApp } from '../platform/routes.js';
import type { TestClocks } from '../platform/test-clocks.js';
import type { UsageRecorder } from '../platform/usage.js';

/** What every module may use: the platform of this process. Never another module's internals. */
export interface Platform {
  config: Config;
  db: Db;
  clock: Clock;
  keys: DerivedKeys;
  metrics: Metrics;
  usage: UsageRecorder;
  /** The job runner, for handlers that end their jobs in the statement of their last write. */
  jobs: Pick<JobRunner, 'finishingMany'>;
  /** Tells this process's credential cache about a revocation, before the revoking request answers. */
  revocations: RevocationListener;
  /** Each account's test clock (docs/api.md#test-clock); live mode never reads it. */
  testClocks: TestClocks;
  log: { error(obj: object, msg: string): void };
}

/**
 * The extension points: what later modules contribute to earlier ones, by name → item type. Empty here
 * (this contract imports no module): the module that reads a point registers it in its own api.ts by
 * declaration merging, e.g. availability's
 *   declare module '../module.js' { interface ExtensionPointTypes { busySources: BusySource } }
 * Today: apiKeys' `keyAccounts`, testClock's `timedWork`, availability's `busySources`, principals' `accessGrants` and
 * `calendarStatus`, payments' `stripeEvents`, mail's `mailRenderers`, pages' `proposalLinks`.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging from the modules' api.ts
export interface ExtensionPointTypes {}

export type ExtensionPoint = keyof ExtensionPointTypes;

/**
 * The contributions to every extension point of one composition. Modules receive it in `create` and
 * keep it; they read a point with `all(point)` when they serve a request or run a job, never while
 * modules are still being built (that throws: the list would be incomplete).
 */
export class Extensions {
  private readonly points = new Map<ExtensionPoint, unknown[]>();
  private sealed = false;

  /** Everything contributed to `point`, in module order. */
  all<P extends ExtensionPoint>(point: P): readonly ExtensionPointTypes[P][] {
    if (!this.sealed) throw new Error(`extension point ${point} read before every module was composed`);
    return (this.points.get(point) ?? []) as ExtensionPointTypes[P][];
  }

  /** @internal composition only */
  add<P extends ExtensionPoint>(point: P, items: readonly ExtensionPointTypes[P][]): void {
    if (this.sealed) throw new Error(`extension point ${point} is sealed`);
    const list = this.points.get(point);
    if (list) list.push(...items);
    else this.points.set(point, [...items]);
  }

  /** @internal composition only */
  seal(): void {
    this.sealed = true;
  }
}

/** A queue of background work the module handles (src/jobs/runner.ts). */
export interface JobContribution {
  queue: string;
  // biome-ignore lint/suspicious/noExplicitAny: each queue has its own payload type; the runner hands the payload through untouched
  handler: JobHandler<any>;
  options?: RegisterOptions;
}

/** Periodic work run by one process per tick (cleanups, reapers). */
export interface ScheduleContribution {
  name: string;
  everyMs: number;
  run(): Promise<unknown>;
}

/** What a module is made of once built. Everything but `api` is optional. */
export interface ModuleParts<Api> {
  /** The public API other modules may need (narrowed by them with Pick<>). */
  api: Api;
  /** Its routes; a plugin that closes over the module's own API only. */
  routes?: (app: TypedApp) => void;
  jobs?: readonly JobContribution[];
  schedules?: readonly ScheduleContribution[];
  /** LISTEN subscriptions to start once the process serves (cache invalidation across processes). */
  listen?: readonly ((notifier: Notifier) => Promise<void>)[];
  /** Credential kinds it owns (API keys, user sessions). */
  credentials?: readonly CredentialResolver[];
  /** Its contributions to extension points of other modules. */
  contributes?: { [P in ExtensionPoint]?: readonly ExtensionPointTypes[P][] };
  /** Releases what it holds outside the database (connection pools); run once the jobs have stopped. */
  close?: () => Promise<void>;
}

export interface ModuleInput<Needs> {
  platform: Platform;
  needs: Needs;
  extensions: Extensions;
  /** Every module's webhook events (the catalogue), by type: what a subscription may name. */
  events: EventCatalogue;
}

/**
 * The webhook events a module emits (docs/api.md#events), each with the TypeBox schema of its payload
 * (the envelope's `data`). The module owns them: it declares them on its definition, and types them for
 * `emitEvent` by adding them to the webhooks module's `EventPayloads` interface.
 */
export type EventSchemas = Readonly<Record<string, TObject>>;

/** Every module's event declarations, gathered by the composition; type → payload schema and owner. */
export type EventCatalogue = ReadonlyMap<string, { module: string; payload: TObject }>;

/**
 * A module. `Needs` maps module names to the part of their API this one uses; `needs` lists those
 * names so the composition can check that each was built before this one.
 */
export interface ModuleDefinition<Name extends string, Needs extends object, Api> {
  name: Name;
  needs: readonly (keyof Needs & string)[];
  /** The webhook events it emits, with their payload schemas. */
  events?: EventSchemas;
  create(input: ModuleInput<Needs>): ModuleParts<Api>;
}

/**
 * Declares a module: `defineModule<Needs>()({ name, needs, create })`. `Needs` is given first (the
 * narrow APIs it uses); name and API are inferred from the definition.
 */
export function defineModule<Needs extends object = Record<never, never>>() {
  return <Name extends string, Api>(
    definition: ModuleDefinition<Name, Needs, Api>,
  ): ModuleDefinition<Name, Needs, Api> => definition;
}

export interface BuiltModule {
  name: string;
  parts: ModuleParts<unknown>;
}

/** What a composition answers: each module's API by name, the modules as built, the points, the events. */
export interface Composed {
  apis: Record<string, unknown>;
  built: readonly BuiltModule[];
  extensions: Extensions;
  events: EventCatalogue;
}

// biome-ignore lint/suspicious/noExplicitAny: any module, whatever it needs (checked as it is composed)
type SomeModule = ModuleDefinition<string, any, unknown>;

/** The webhook events the given modules declare, by type, in module order. */
export function catalogueOf(modules: readonly SomeModule[]): EventCatalogue {
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
 * Builds the given modules once, in order: each receives the platform, the APIs it needs (checked to
 * be built already) and the extension points; its contributions are added to those points, which are
 * sealed at the end. The whole list is src/modules/index.ts's `MODULES`; the CLI composes only the
 * few its commands use (src/cli-runtime.ts), so it loads no more than those.
 */
export function compose(platform: Platform, modules: readonly SomeModule[]): Composed {
  const extensions = new Extensions();
  const apis: Record<string, unknown> = {};
  const built: BuiltModule[] = [];
  const events = catalogueOf(modules);
  for (const def of modules) {
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
  return { apis, built, extensions, events };
}
