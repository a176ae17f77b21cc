/**
 * The MCP tools at work (docs/mcp.md): the catalogue (each REST tool's schemas derived from the
 * app's OpenAPI document once per app), the listing a credential sees, and a tool call: input
 * checks an agent gets wrong most (times without an offset), the in-process REST request, and the
 * answer — times shown with their offset in the principal's zone, checked against the tool's
 * `outputSchema` before it leaves, or an `isError` result with the problem and the next step.
 */
import type { Ajv2020 as AjvType, ValidateFunction } from 'ajv/dist/2020.js';
import Ajv2020Module from 'ajv/dist/2020.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DateTime } from 'luxon';
import type { Caller } from '../../platform/auth.js';
import type { Clock } from '../../platform/clock.js';
import { addKairosFormats, isTimeZone as isZone } from '../../platform/validation.js';
import type { AvailabilityApi, SlotsParams } from '../availability/api.js';
import { inputError, inZone, nextStep, offsetless, type ToolError, toolError } from './answers.js';
import { type DerivedOperation, deriveOperation, type JsonSchema, type OpenApiDocument } from './derive.js';
import {
  type CheckedQuery,
  type DirectRead,
  queryCompiler,
  queryProblem,
  rememberedCheck,
  thrownProblem,
} from './direct.js';
import { dispatch } from './dispatch.js';
import { compactInput, compactOutput } from './compact.js';
import { ToolResultMemo } from './memo.js';
import {
  type CheckConsentInput,
  CheckConsentInput as CheckConsentInputSchema,
  CheckConsentOutput,
  type CurrentTimeInput,
  CurrentTimeInput as CurrentTimeInputSchema,
  CurrentTimeOutput,
} from './schemas.js';
import { type RestTool, TOOLS, type ToolAnnotations, type ToolDefinition } from './tools.js';
import { ALWAYS, TOOLSET_OF } from './toolsets.js';

/**
 * Zone names already found valid (the check builds an Intl formatter: too dear per call); nothing
 * invalidates one, a process's zone database does not change while it runs.
 */
const validZones = new Set<string>();
function isTimeZone(zone: string): boolean {
  if (validZones.has(zone)) return true;
  if (!isZone(zone)) return false;
  if (validZones.size < 1000) validZones.add(zone);
  return true;
}

// ajv is CommonJS; under NodeNext its default export arrives as the module namespace.
type AjvCtor = new (opts: object) => AjvType;
const Ajv2020: AjvCtor =
  (Ajv2020Module as unknown as { default?: AjvCtor }).default ?? (Ajv2020Module as unknown as AjvCtor);

/** A tool as `tools/list` shows it: its schemas compacted (compact.ts). */
export interface ListedTool {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema: JsonSchema;
  annotations: ToolAnnotations;
}

/** A tool as found for a caller (`McpService.tool`), to call with `callTool`. */
export interface Tool {
  /** As the listing of every tool shows it, and as a listing narrowed to toolsets does. */
  readonly listed: ListedTool;
  readonly narrowed: ListedTool;
}

export interface ToolResult {
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

interface Entry {
  def: ToolDefinition;
  /** As the listing of every tool shows it (its output's top-level fields). */
  listed: ListedTool;
  /** As a listing narrowed to toolsets shows it (its output's fields two levels deep). */
  narrowed: ListedTool;
  op?: DerivedOperation;
  /** The check of an answer against the tool's full output schema (stricter than the listed one). */
  validate: ValidateFunction;
  /** The arguments a REST tool takes: its operation's parameters, `timezone` and `idempotency_key`. */
  fields: ReadonlySet<string>;
  /** A reading operation answered through its module's API (`readDirect` below), with its query check. */
  direct?: {
    read: DirectRead;
    query: (q: Record<string, string>) => CheckedQuery;
  };
}

/** The tool call's context: the app that answers it and the HTTP request it arrived in. */
export interface CallContext {
  app: FastifyInstance;
  request: FastifyRequest;
  caller: Caller;
  /** The tools the request's toolsets select (toolsets.ts); undefined: every tool. */
  toolsets?: ReadonlySet<string> | undefined;
}

function seesTool(caller: Caller, def: ToolDefinition, toolsets?: ReadonlySet<string>): boolean {
  if (toolsets && !toolsets.has(def.name)) return false;
  // The test clock's tools are a test key's only (docs/api.md#test-clock): a live caller never sees them.
  if (def.mode === 'test' && caller.livemode) return false;
  return def.audience === 'any' || caller.kind === 'secret' || caller.kind === 'session';
}

export class McpService {
  private readonly catalogues = new WeakMap<FastifyInstance, Map<string, Entry>>();
  // Structure and values, not string formats: the times in an answer are the ones isoInZone wrote.
  private readonly ajv = addKairosFormats(
    new Ajv2020({ strict: false, allErrors: true, validateFormats: false }),
  );

  /** Rendered answers of REST tools run as requests, by the route's answer text (memo.ts). */
  private readonly answers = new ToolResultMemo<ToolResult>();
  /**
   * Results of reads through a module's API, by the answer object the API gave (zone included).
   * Invalidation is the API's: it hands out the same object for a remembered answer until anything
   * it was computed from changes, then another object; an entry lives as long as the API's answer.
   */
  private readonly byAnswer = new WeakMap<object, ToolResult>();
  /** The operations read through a module's API. */
  private readonly reads = new Map<string, DirectRead>();

  constructor(
    private readonly clock: Clock,
    availability?: Pick<AvailabilityApi, 'slots'>,
  ) {
    if (availability) {
      // GET /v1/availability/slots: the route hands the service the checked query and sends its
      // answer as is, so the service's answer is the route's, here with zoned times. Its gate (access
      // 'availability', scope read) is `POST /mcp`'s own (routes.ts), so a caller admitted there is
      // admitted here.
      this.reads.set('listAvailableSlots', (caller, query) =>
        availability.slots(caller, query as SlotsParams, true),
      );
    }
  }

  /** Every tool with its schemas, derived once per app from its OpenAPI document. */
  catalogue(app: FastifyInstance): Map<string, Entry> {
    const known = this.catalogues.get(app);
    if (known) return known;
    const doc = (app as unknown as { swagger(): OpenApiDocument }).swagger();
    const entries = new Map<string, Entry>();
    for (const def of TOOLS) {
      if (!ALWAYS.has(def.name) && !TOOLSET_OF.has(def.name))
        throw new Error(`MCP tool ${def.name} is in no toolset (toolsets.ts)`);
      let inputSchema: JsonSchema;
      let outputSchema: JsonSchema;
      let op: DerivedOperation | undefined;
      if (def.kind === 'rest') {
        op = deriveOperation(doc, def);
        inputSchema = op.inputSchema;
        outputSchema = op.outputSchema;
      } else if (def.name === 'current_time') {
        inputSchema = CurrentTimeInputSchema as unknown as JsonSchema;
        outputSchema = CurrentTimeOutput as unknown as JsonSchema;
      } else {
        inputSchema = CheckConsentInputSchema as unknown as JsonSchema;
        outputSchema = CheckConsentOutput as unknown as JsonSchema;
      }
      // TypeBox schemas carry symbol keys; a JSON round trip leaves the plain JSON Schema.
      inputSchema = JSON.parse(JSON.stringify(inputSchema)) as JsonSchema;
      outputSchema = JSON.parse(JSON.stringify(outputSchema)) as JsonSchema;
      const read = def.kind === 'rest' ? this.reads.get(def.operationId) : undefined;
      const listed = {
        name: def.name,
        title: def.title,
        description: def.description,
        inputSchema: compactInput(inputSchema),
        annotations: { ...def.annotations },
      };
      entries.set(def.name, {
        def,
        op,
        fields: new Set(
          op ? [...op.pathParams, ...op.queryParams, ...op.bodyParams, 'timezone', 'idempotency_key'] : [],
        ),
        ...(read && op
          ? {
              direct: {
                read,
                query: rememberedCheck(
                  queryCompiler({
                    schema: op.querySchema,
                    httpPart: 'querystring',
                    method: op.method,
                    url: op.path,
                  }) as ((q: Record<string, unknown>) => boolean) & { errors?: unknown },
                ),
              },
            }
          : {}),
        validate: this.ajv.compile(outputSchema),
        listed: { ...listed, outputSchema: compactOutput(outputSchema, 1) },
        narrowed: { ...listed, outputSchema: compactOutput(outputSchema, 2) },
      });
    }
    this.catalogues.set(app, entries);
    return entries;
  }

  /** The tools this caller may call (a publishable key sees the public surface only). */
  list(app: FastifyInstance, caller: Caller, toolsets?: ReadonlySet<string>): ListedTool[] {
    return [...this.catalogue(app).values()]
      .filter((e) => seesTool(caller, e.def, toolsets))
      .map((e) => (toolsets ? e.narrowed : e.listed));
  }

  /** The tool `name` if this caller sees it (within its toolsets): the one look-up of a call. */
  tool(ctx: CallContext, name: string): Tool | undefined {
    const entry = this.catalogue(ctx.app).get(name);
    return entry && seesTool(ctx.caller, entry.def, ctx.toolsets) ? entry : undefined;
  }

  /** One `tools/call`. Never throws for anything the caller sent: that is an `isError` result. */
  call(ctx: CallContext, name: string, rawArgs: unknown): Promise<ToolResult> {
    return this.callTool(ctx, this.tool(ctx, name), name, rawArgs);
  }

  /** One `tools/call` of the tool `tool(ctx, name)` found (undefined: none this caller sees). */
  async callTool(
    ctx: CallContext,
    tool: Tool | undefined,
    name: string,
    rawArgs: unknown,
  ): Promise<ToolResult> {
    const entry = tool as Entry | undefined;
    if (!entry) {
      return toolError(
        {
          title: 'Unknown tool',
          status: 404,
          code: 'unknown_tool',
          detail: `There is no tool ${name} for this credential`,
        },
        'Call tools/list and use one of the tools it names.',
      );
    }
    if (
      rawArgs !== undefined &&
      (rawArgs === null || typeof rawArgs !== 'object' || Array.isArray(rawArgs))
    ) {
      return inputError({ arguments: 'must be an object' });
    }
    const args = { ...((rawArgs ?? {}) as Record<string, unknown>) };
    if (args.timezone !== undefined && (typeof args.timezone !== 'string' || !isTimeZone(args.timezone))) {
      return inputError({ timezone: 'must be an IANA time zone name, e.g. Europe/Paris' });
    }
    if (entry.def.kind === 'rest') return this.callRest(ctx, entry, entry.def, args);
    const unknown = Object.keys(args).filter(
      (k) => !(entry.listed.inputSchema.properties as Record<string, unknown>)?.[k],
    );
    if (unknown.length > 0)
      return inputError(Object.fromEntries(unknown.map((k) => [k, 'is not a field of this tool'])));
    const result =
      entry.def.name === 'current_time'
        ? this.currentTime(ctx.caller, args as CurrentTimeInput)
        : await this.checkConsent(ctx, args as CheckConsentInput);
    return this.checked(ctx, entry, result);
  }

  /** `result` if it is an error or within the tool's `outputSchema`; else a logged `isError` 500. */
  private checked(ctx: CallContext, entry: Entry, result: ToolResult): ToolResult {
    if (result.isError || result.structuredContent === undefined) return result;
    if (!entry.validate(result.structuredContent)) {
      ctx.request.log.error(
        { tool: entry.def.name, errors: entry.validate.errors },
        'MCP tool answer outside its outputSchema',
      );
      return toolError(
        {
          title: 'Internal error',
          status: 500,
          code: 'internal_error',
          detail: 'The answer did not match the tool’s output schema; it has been logged',
        },
        'Retry later.',
      );
    }
    return result;
  }

  private ok(structured: Record<string, unknown>): ToolResult {
    return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
  }

  /**
   * The caller's now: the server's clock, or for a test key its account's test clock (the gate sets
   * `caller.clock`; docs/api.md#test-clock), so an agent in test mode reasons on the time its
   * bookings are checked against. `livemode` says which.
   */
  private currentTime(caller: Caller, args: CurrentTimeInput): ToolResult {
    const zone = args.timezone ?? 'UTC';
    const clock = caller.livemode ? this.clock : caller.clock;
    const now = DateTime.fromMillis(clock.nowMs(), { zone });
    return this.ok({
      livemode: caller.livemode,
      now: now.toISO() as string,
      now_utc: now.toUTC().toISO() as string,
      timezone: zone,
      utc_offset: now.toFormat('ZZ'),
      local_date: now.toISODate() as string,
      weekday: now.setLocale('en').toFormat('cccc'),
    });
  }

  private async checkConsent(ctx: CallContext, args: CheckConsentInput): Promise<ToolResult> {
    if (typeof args.grantor_id !== 'string') return inputError({ grantor_id: 'is required' });
    const scope = args.scope ?? 'availability:read:freebusy';
    let cursor: string | undefined;
    for (let page = 0; page < 20; page++) {
      const query: Record<string, string> = { role: 'grantee', active_only: 'true', limit: '100' };
      if (args.principal_id) query.principal_id = args.principal_id;
      if (cursor) query.cursor = cursor;
      const res = await dispatch(ctx.app, ctx.request, { method: 'GET', url: '/v1/consents', query });
      if (res.status !== 200)
        return this.problem({ kind: 'rest', name: 'check_consent' } as RestTool, res.status, res.body);
      const body = res.body as {
        consents: { grantor_id: string; scopes: string[] }[];
        pagination: { next_cursor: string | null; has_more: boolean };
      };
      const found = body.consents.find((c) => c.grantor_id === args.grantor_id && c.scopes.includes(scope));
      if (found) {
        return this.ok({
          grantor_id: args.grantor_id,
          scope,
          granted: true,
          consent: inZone(found, 'UTC') as Record<string, unknown>,
          next: 'Go ahead.',
          timezone: 'UTC',
        });
      }
      if (!body.pagination.has_more || !body.pagination.next_cursor) break;
      cursor = body.pagination.next_cursor;
    }
    return this.ok({
      grantor_id: args.grantor_id,
      scope,
      granted: false,
      consent: null,
      next: `No active consent with ${scope}. A network connection also gives access (list_network). Otherwise the principal grants it with grant_consent using their own credentials; do not read or propose until then.`,
      timezone: 'UTC',
    });
  }

  private problem(tool: RestTool, status: number, body: unknown, next?: string): ToolError {
    const p = (body !== null && typeof body === 'object' ? body : { detail: String(body) }) as Record<
      string,
      unknown
    >;
    const { type: _type, instance: _instance, ...members } = p;
    return toolError({ ...members, status }, next ?? nextStep(tool, status, p));
  }

  /**
   * For a principal without a calendar, the next step when its booking links offer slots all the
   * same (a link's slots come from working hours and bookings): `get_link_slots` with their slugs.
   * Undefined when it has no active link, or its links cannot be read with this credential.
   */
  private async linkHint(ctx: CallContext, principal: string): Promise<string | undefined> {
    const slugs: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10 && slugs.length < 3; page++) {
      const query: Record<string, string> = { limit: '100', ...(cursor ? { cursor } : {}) };
      const res = await dispatch(ctx.app, ctx.request, { method: 'GET', url: '/v1/booking-links', query });
      if (res.status !== 200) return undefined;
      const body = res.body as {
        booking_links: { slug: string; host_ids: string[]; active: boolean }[];
        pagination: { next_cursor: string | null; has_more: boolean };
      };
      for (const l of body.booking_links) {
        if (l.active && l.host_ids.some((h) => h.toLowerCase() === principal.toLowerCase()))
          slugs.push(l.slug);
      }
      if (!body.pagination.has_more || !body.pagination.next_cursor) break;
      cursor = body.pagination.next_cursor;
    }
    if (slugs.length === 0) return undefined;
    const list = slugs
      .slice(0, 3)
      .map((x) => `\`${x}\``)
      .join(', ');
    return `This principal has no connected calendar, so get_available_slots cannot read their free time; but their booking link${slugs.length > 1 ? 's' : ''} ${list} offer${slugs.length > 1 ? '' : 's'} slots (from working hours and bookings): call get_link_slots with that slug and the same window, then book_on_link. To use get_available_slots, they connect a calendar.`;
  }

  private async callRest(
    ctx: CallContext,
    entry: Entry,
    tool: RestTool,
    args: Record<string, unknown>,
  ): Promise<ToolResult> {
    const op = entry.op as DerivedOperation;
    const errors: Record<string, string> = {};
    for (const k of Object.keys(args)) {
      if (!entry.fields.has(k) || (tool.fixed && k in tool.fixed)) errors[k] = 'is not a field of this tool';
    }
    Object.assign(errors, offsetless(args, op.instantFields));
    let url = op.path;
    for (const p of op.pathParams) {
      const v = args[p];
      if (v === undefined || v === null || v === '') errors[p] = 'is required';
      else url = url.replace(`{${p}}`, encodeURIComponent(String(v)));
    }
    const idempotencyKey = args.idempotency_key;
    if (idempotencyKey !== undefined && typeof idempotencyKey !== 'string')
      errors.idempotency_key = 'must be a string';
    if (Object.keys(errors).length > 0) return inputError(errors);

    const query: Record<string, string> = {};
    for (const q of op.queryParams) {
      const v = tool.fixed?.[q] ?? args[q];
      if (v === undefined || v === null) continue;
      query[q] = Array.isArray(v) ? v.join(',') : String(v);
    }
    let body: Record<string, unknown> | undefined;
    if (op.hasBody) {
      body = {};
      for (const b of op.bodyParams) {
        if (b === 'timezone' && op.queryParams.includes('timezone')) continue;
        const v = tool.fixed?.[b] ?? args[b];
        if (v !== undefined) body[b] = v;
      }
    }
    if (entry.direct) return this.readDirect(ctx, entry, entry.direct, tool, args, query);
    const asked = typeof args.timezone === 'string' ? args.timezone : '';
    const res = await dispatch(ctx.app, ctx.request, {
      method: op.method,
      url,
      query,
      ...(body !== undefined ? { body } : {}),
      ...(typeof idempotencyKey === 'string' ? { idempotencyKey } : {}),
    });
    if (res.status >= 300) return this.refused(ctx, tool, args, res.status, res.body);
    if (op.method === 'GET') return this.rendered(ctx, entry, tool, args, asked, res.text, res.body);
    return this.render(ctx, entry, op, args, res.body).then((r) => r.result);
  }

  /** The route's problem as a tool error, with the next step (for a host without a calendar: its links). */
  private async refused(
    ctx: CallContext,
    tool: RestTool,
    args: Record<string, unknown>,
    status: number,
    body: unknown,
  ): Promise<ToolResult> {
    const code = (body as { code?: unknown } | null)?.code;
    // A series' failing occurrences, shown in the zone asked for as a success would be.
    const conflicts = (body as { conflicts?: unknown } | null)?.conflicts;
    const shown =
      Array.isArray(conflicts) && typeof args.timezone === 'string'
        ? { ...(body as object), conflicts: inZone(conflicts, args.timezone) }
        : body;
    const principal = typeof args.principal_id === 'string' ? args.principal_id : ctx.caller.principalId;
    const next =
      tool.name === 'get_available_slots' && code === 'calendar_not_connected' && principal
        ? await this.linkHint(ctx, principal)
        : undefined;
    return this.problem(tool, status, shown, next);
  }

  /**
   * A reading tool answered through its module's API instead of a request: the route's query check,
   * the read, the result remembered by the answer object (`byAnswer`). What the route would refuse is
   * answered with the problem the route's error handler writes (platform/problems.ts), the request's
   * own id in it: the request is never run after all.
   */
  private async readDirect(
    ctx: CallContext,
    entry: Entry,
    direct: NonNullable<Entry['direct']>,
    tool: RestTool,
    args: Record<string, unknown>,
    query: Record<string, string>,
  ): Promise<ToolResult> {
    const checked = direct.query(query);
    if ('refused' in checked)
      return this.refused(ctx, tool, args, 400, queryProblem(ctx.request, checked.refused));
    let answer: Buffer | string;
    try {
      answer = await direct.read(ctx.caller, checked.query);
    } catch (error) {
      const { status, body } = thrownProblem(ctx.request, error);
      return this.refused(ctx, tool, args, status, body);
    }
    const known = typeof answer === 'string' ? undefined : this.byAnswer.get(answer);
    if (known) return known;
    // The answer names its zone (the one asked for, else the principal's) and carries its offsets:
    // it is the tool's answer as it stands, its text the result's text.
    const text = typeof answer === 'string' ? answer : answer.toString('utf8');
    const result = this.checked(ctx, entry, {
      content: [{ type: 'text', text }],
      structuredContent: JSON.parse(text) as Record<string, unknown>,
    });
    if (typeof answer !== 'string' && !result.isError) this.byAnswer.set(answer, result);
    return result;
  }

  /** A reading tool's result for the route's answer text, remembered by that text (memo.ts). */
  private async rendered(
    ctx: CallContext,
    entry: Entry,
    tool: RestTool,
    args: Record<string, unknown>,
    asked: string,
    text: string,
    parsed?: unknown,
  ): Promise<ToolResult> {
    const remembered = this.answers.get(tool.name, asked, text);
    if (remembered) return remembered;
    const body = parsed !== undefined ? parsed : text.length === 0 ? null : JSON.parse(text);
    const { result, fromSchedule } = await this.render(ctx, entry, entry.op as DerivedOperation, args, body);
    if (!result.isError && !fromSchedule) this.answers.set(tool.name, asked, text, result);
    return result;
  }

  /** The tool result of a successful answer: times in the zone, checked against the outputSchema. */
  private async render(
    ctx: CallContext,
    entry: Entry,
    op: DerivedOperation,
    args: Record<string, unknown>,
    body: unknown,
  ): Promise<{ result: ToolResult; fromSchedule: boolean }> {
    const answer = (op.wrapped ? { result: body } : (body ?? {})) as Record<string, unknown>;
    const zone = await this.zoneFor(ctx, args, answer);
    const result = this.checked(
      ctx,
      entry,
      this.ok({ ...(inZone(answer, zone.name) as Record<string, unknown>), timezone: zone.name }),
    );
    return { result, fromSchedule: zone.fromSchedule };
  }

  /**
   * The zone an answer is shown in: the one asked for, else the answer's own, else the zone of the
   * principal it concerns (the input's `principal_id`, else the first in the answer, else the
   * caller), read from that principal's schedule; UTC when none can be read.
   */
  private async zoneFor(
    ctx: CallContext,
    args: Record<string, unknown>,
    answer: Record<string, unknown>,
  ): Promise<{ name: string; fromSchedule: boolean }> {
    const fixed = (name: string) => ({ name, fromSchedule: false });
    if (typeof args.timezone === 'string') return fixed(args.timezone);
    if (typeof answer.timezone === 'string' && isTimeZone(answer.timezone)) return fixed(answer.timezone);
    const principal =
      (typeof args.principal_id === 'string' ? args.principal_id : undefined) ??
      firstPrincipal(answer) ??
      ctx.caller.principalId ??
      undefined;
    if (!principal) return fixed('UTC');
    const res = await dispatch(ctx.app, ctx.request, {
      method: 'GET',
      url: `/v1/principals/${encodeURIComponent(principal)}/schedule`,
    });
    const zone = (res.body as { schedule?: { timezone?: unknown } } | null)?.schedule?.timezone;
    return {
      name: res.status === 200 && typeof zone === 'string' && isTimeZone(zone) ? zone : 'UTC',
      fromSchedule: true,
    };
  }
}

/** The first `principal_id` (or `requester_id`) in an answer, depth first. */
function firstPrincipal(value: unknown, depth = 0): string | undefined {
  if (depth > 6 || value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    for (const v of value) {
      const found = firstPrincipal(v, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  const obj = value as Record<string, unknown>;
  for (const key of ['principal_id', 'requester_id']) {
    if (typeof obj[key] === 'string') return obj[key] as string;
  }
  for (const v of Object.values(obj)) {
    const found = firstPrincipal(v, depth + 1);
    if (found) return found;
  }
  return undefined;
}
