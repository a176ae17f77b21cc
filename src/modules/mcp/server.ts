/**
 * The MCP endpoint (docs/mcp.md#protocol): the official SDK's low-level `Server`, one instance per
 * HTTP request (stateless: any process answers any request), serving both protocol generations with
 * JSON answers:
 * - the current revision (2026-07-28: no handshake, every request carries its version) through the
 *   SDK's `createMcpHandler` in strict mode with `responseMode: 'json'`;
 * - the 2025 revisions (2025-11-25 and older: `initialize` first) through the SDK's Streamable HTTP
 *   transport, stateless (`sessionIdGenerator: undefined`) with `enableJsonResponse`, chosen by the
 *   SDK's own `isLegacyRequest` classification.
 * Tools and prompts are the same for both; their handlers are era-blind.
 */
import {
  type AuthInfo,
  type CallToolResult,
  createMcpHandler,
  isLegacyRequest,
  type McpRequestContext,
  Server,
  type Tool,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import { fastToolCall } from './fast.js';
import { PROMPTS } from './prompts.js';
import type { CallContext, McpService } from './service.js';

const INSTRUCTIONS =
  'Kairos schedules meetings. Call current_time before reasoning about dates. Every time you send needs a UTC offset; every time you get back carries one and the answer names its IANA timezone. Ask check_consent before reading other people’s availability or proposing to them. Pass an idempotency_key to creating tools and reuse it on retries. An isError result says what failed and what to do next.';

/** Added for a test key (docs/api.md#test-mode): the agent knows nothing it does is real. */
const TEST_MODE_INSTRUCTIONS =
  ' You are in TEST MODE (a test key): every host, link and booking you see or make is a test object (`livemode: false`), no mail or calendar event leaves the server, and time is the account’s test clock (current_time shows it; get_test_clock and advance_test_clock read and move it).';

export interface McpEndpoint {
  /** Serves one POST to /mcp for an authenticated caller. */
  handle(request: Request, parsedBody: unknown, ctx: CallContext): Promise<Response>;
  /** A current-revision reading tool call answered directly (fast.ts), or undefined: use `handle`. */
  fast: ReturnType<typeof fastToolCall>;
  close(): Promise<void>;
}

function contextOf(auth: AuthInfo | undefined): CallContext {
  const ctx = (auth?.extra as { kairos?: CallContext } | undefined)?.kairos;
  if (!ctx) throw new Error('MCP request without its Kairos context');
  return ctx;
}

export function createMcpEndpoint(service: McpService, version: string): McpEndpoint {
  const serverInfo = { name: 'kairos', title: 'Kairos scheduling', version };
  const build = (ctx: CallContext): Server => {
    const server = new Server(
      { ...serverInfo },
      {
        capabilities: { tools: {}, prompts: {} },
        instructions: ctx.caller.livemode ? INSTRUCTIONS : INSTRUCTIONS + TEST_MODE_INSTRUCTIONS,
      },
    );
    // The service's schemas are JSON Schema objects (`type: object` at the root, derive.ts).
    const tools = () => service.list(ctx.app, ctx.caller, ctx.toolsets) as unknown as Tool[];
    server.setRequestHandler('tools/list', async () => ({ tools: tools() }));
    server.setRequestHandler('tools/call', async (req) => {
      const tool = service.tool(ctx, req.params.name);
      const result = await service.callTool(ctx, tool, req.params.name, req.params.arguments);
      const listed = ctx.toolsets ? tool?.narrowed : tool?.listed;
      return server.projectCallToolResult(
        result as CallToolResult,
        listed?.outputSchema as Tool['outputSchema'],
      );
    });
    const prompts = () =>
      PROMPTS.filter(
        (p) => p.audience === 'any' || ctx.caller.kind === 'secret' || ctx.caller.kind === 'session',
      );
    server.setRequestHandler('prompts/list', async () => ({
      prompts: prompts().map(({ name, title, description, arguments: args }) => ({
        name,
        title,
        description,
        arguments: args,
      })),
    }));
    server.setRequestHandler('prompts/get', async (req) => {
      const p = prompts().find((x) => x.name === req.params.name);
      if (!p) throw new Error(`Unknown prompt ${req.params.name}`);
      const args = (req.params.arguments ?? {}) as Record<string, string>;
      const missing = p.arguments.filter((a) => a.required && !args[a.name]).map((a) => a.name);
      if (missing.length > 0) throw new Error(`Missing prompt arguments: ${missing.join(', ')}`);
      return {
        description: p.description,
        messages: [{ role: 'user' as const, content: { type: 'text' as const, text: p.text(args) } }],
      };
    });
    return server;
  };

  const modern = withoutJsonModeWarning(() =>
    createMcpHandler((c: McpRequestContext) => build(contextOf(c.authInfo)), {
      legacy: 'reject',
      responseMode: 'json',
    }),
  );

  async function legacy(
    request: Request,
    parsedBody: unknown,
    ctx: CallContext,
    auth: AuthInfo,
  ): Promise<Response> {
    const server = build(ctx);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    try {
      return await transport.handleRequest(request, { authInfo: auth, parsedBody });
    } finally {
      await transport.close().catch(() => {});
      await server.close().catch(() => {});
    }
  }

  return {
    fast: fastToolCall(service, serverInfo),
    async handle(request, parsedBody, ctx) {
      const auth: AuthInfo = {
        token: 'kairos',
        clientId: ctx.caller.keyId ?? ctx.caller.userId ?? 'kairos',
        scopes: ctx.caller.scopes,
        extra: { kairos: ctx },
      };
      if (await isLegacyRequest(request, parsedBody)) return legacy(request, parsedBody, ctx, auth);
      return modern.fetch(request, { authInfo: auth, parsedBody });
    },
    close: () => modern.close(),
  };
}

/**
 * The SDK prints, on every construction of a JSON-mode handler, that JSON answers drop mid-call
 * notifications. Kairos's tools send none (docs/mcp.md), so that one line would only be noise on every
 * start of the server and of the CLI; any other warning passes through.
 */
function withoutJsonModeWarning<T>(make: () => T): T {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && args[0].startsWith("responseMode: 'json' drops mid-call")) return;
    warn(...args);
  };
  try {
    return make();
  } finally {
    console.warn = warn;
  }
}
