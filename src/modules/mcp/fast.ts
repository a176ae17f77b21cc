/**
 * The one shortcut of `POST /mcp` (docs/mcp.md#performance): the current revision's reading tool
 * calls, answered without building an SDK server per request. Whether it takes a request is decided
 * up front, before anything runs: a JSON `tools/call` of a reading tool this caller sees, carrying
 * the 2026-07-28 envelope, classified `modern` by the SDK's own `classifyInboundRequest` (envelope,
 * header and body cross-checks), with the standard headers present and naming what the body names,
 * and plain `name`/`arguments` params. Anything else — every fault, every other method, every
 * creating tool — goes to the SDK. A request taken here is answered here, whatever happens: the tool
 * result the SDK writes (the same members, `resultType` and `_meta.serverInfo`), or the JSON-RPC
 * error the SDK writes when the tool throws; it is never handed to the SDK afterwards. The tool's
 * JSON is written once: the text content is that JSON, and `structuredContent` is the same text
 * spliced in, not serialized again. fast.test.ts holds this way to the SDK's answers.
 */
import { classifyInboundRequest, isJsonContentType } from '@modelcontextprotocol/server';
import type { CallContext, McpService, ToolResult } from './service.js';

/** JSON-RPC's internal error, what the SDK answers when a request's handler throws. */
const INTERNAL_ERROR = -32603;

const REVISION = '2026-07-28';

/** Why this way may not answer a request: the SDK answers it then. */
type Headers = Record<string, string | string[] | undefined>;

function header(headers: Headers, name: string): string | undefined {
  const v = headers[name];
  return typeof v === 'string' ? v.trim() : undefined;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * The answer's bytes up to its `id` (`{"result":…,"jsonrpc":"2.0","id":`) for each result answered:
 * a remembered result (service.ts) is sent without writing or encoding its JSON again. Kept with the
 * result object, so it goes when the service lets the result go; a result is never changed.
 */
const written = new WeakMap<ToolResult, Buffer>();

function answerHead(result: ToolResult, serverInfo: string): Buffer {
  let head = written.get(result);
  if (head !== undefined) return head;
  const sc = result.structuredContent;
  const text = result.content.length === 1 ? result.content[0]?.text : undefined;
  // The tool's own text is the JSON of its structured content (service.ts `ok`): splice it in.
  const structured =
    sc === undefined ? undefined : text !== undefined && !result.isError ? text : JSON.stringify(sc);
  const json =
    `{"content":${JSON.stringify(result.content)}` +
    (structured !== undefined ? `,"structuredContent":${structured}` : '') +
    (result.isError !== undefined ? `,"isError":${result.isError}` : '') +
    `,"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":${serverInfo}}}`;
  head = Buffer.from(`{"result":${json},"jsonrpc":"2.0","id":`);
  written.set(result, head);
  return head;
}

/**
 * The SDK's classification of a tool call, remembered by what it reads; a pure function of that key,
 * so nothing invalidates it (cleared whole when full). `classifyInboundRequest`
 * reads the body's top-level members, the id's type and the method (the caller admits only JSON-RPC's
 * four members, a string or integer id and `tools/call`), `params` being an object whose `_meta` it
 * validates (zod), and the three headers; it never looks into `arguments` or `name`. So a call whose
 * `_meta` (as JSON) and headers were classified before is classified the same way again, and the SDK
 * is asked only for a combination it has not seen (about 14 µs of zod per call saved).
 */
const classified = new Map<string, boolean>();
const MAX_CLASSIFIED = 256;
/** A longer envelope is classified every time instead (a client's is a few hundred characters). */
const MAX_KEY = 4096;

function classifiedModern(
  body: Record<string, unknown>,
  params: Record<string, unknown>,
  version: string,
  method: string,
  name: string,
): boolean {
  const key = `${version}\n${method}\n${JSON.stringify(params._meta) ?? ''}`;
  const known = classified.get(key);
  if (known !== undefined) return known;
  const route = classifyInboundRequest({
    httpMethod: 'POST',
    protocolVersionHeader: version,
    mcpMethodHeader: method,
    mcpNameHeader: name,
    // What the classification reads of the call; the arguments stay out of the key and of the check.
    body: { jsonrpc: body.jsonrpc, id: body.id, method: body.method, params: { _meta: params._meta } },
  });
  const modern = route.kind === 'modern' && route.classification.revision === REVISION;
  if (key.length > MAX_KEY) return modern;
  if (classified.size >= MAX_CLASSIFIED) classified.clear();
  classified.set(key, modern);
  return modern;
}

export interface FastAnswer {
  status: number;
  contentType: string;
  /**
   * The answer's bytes in two parts: the remembered head (tens of KB for a month of slots) and the
   * request's own id. Written as they are (routes.ts): joining them would copy the head into a new
   * buffer per call, and that allocation was a third of a month-of-slots call's cost.
   */
  head: Buffer;
  tail: Buffer;
}

/**
 * The fast way for one POST, or undefined when the SDK must answer it. `serverInfo` is the
 * server's `{name, title, version}`.
 */
export function fastToolCall(
  service: McpService,
  serverInfo: { name: string; title: string; version: string },
): (headers: Headers, body: unknown, ctx: CallContext) => Promise<FastAnswer> | undefined {
  const info = JSON.stringify(serverInfo);
  return (headers, body, ctx) => {
    if (!isPlainObject(body) || body.method !== 'tools/call' || body.jsonrpc !== '2.0') return undefined;
    const id = body.id;
    if (typeof id !== 'string' && !(typeof id === 'number' && Number.isInteger(id))) return undefined;
    const params = body.params;
    if (!isPlainObject(params) || typeof params.name !== 'string') return undefined;
    // JSON-RPC's four members and no others (what the classification below relies on).
    for (const k in body)
      if (k !== 'jsonrpc' && k !== 'id' && k !== 'method' && k !== 'params') return undefined;
    for (const k of Object.keys(params))
      if (k !== 'name' && k !== 'arguments' && k !== '_meta') return undefined;
    if (params.arguments !== undefined && !isPlainObject(params.arguments)) return undefined;
    const contentType = header(headers, 'content-type');
    const version = header(headers, 'mcp-protocol-version');
    const method = header(headers, 'mcp-method');
    const name = header(headers, 'mcp-name');
    if (contentType === undefined || !isJsonContentType(contentType)) return undefined;
    if (version !== REVISION || method !== 'tools/call' || name !== params.name) return undefined;
    const tool = service.tool(ctx, params.name);
    if (!tool?.listed.annotations.readOnlyHint) return undefined;
    if (!classifiedModern(body, params, version, method, name)) return undefined;
    const tail = Buffer.from(`${JSON.stringify(id)}}`);
    return service.callTool(ctx, tool, params.name, params.arguments).then(
      (result) => ({ status: 200, contentType: JSON_TYPE, head: answerHead(result, info), tail }),
      (error: unknown) => {
        // As the SDK answers a handler that throws (its Protocol): the error's own integer code, else
        // JSON-RPC's internal error, with the error's message and data.
        const e = (error ?? {}) as { code?: unknown; message?: unknown; data?: unknown };
        const rpc = {
          code: Number.isSafeInteger(e.code) ? e.code : INTERNAL_ERROR,
          message: e.message ?? 'Internal error',
          ...(e.data !== undefined ? { data: e.data } : {}),
        };
        return {
          status: 200,
          contentType: JSON_TYPE,
          head: Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"error":`),
          tail: Buffer.from(`${JSON.stringify(rpc)}}`),
        };
      },
    );
  };
}

const JSON_TYPE = 'application/json; charset=utf-8';
