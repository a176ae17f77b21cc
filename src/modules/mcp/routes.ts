/**
 * `POST /mcp` (docs/mcp.md): the MCP endpoint on the API server. Outside a tool call it follows the
 * API's rules: the same Bearer credentials (secret key, user session; a publishable key sees the
 * public-surface tools), one count against the key's hourly limit per request, problem+json for a
 * refused request — a 401 also carries `WWW-Authenticate` — and JSON-RPC errors only for protocol
 * faults. Hidden from the OpenAPI document: it is JSON-RPC, described by the MCP specification.
 */
import type { OutgoingHttpHeaders } from 'node:http';
import { actorOf } from '../../platform/actor.js';
import type { TypedApp } from '../../platform/routes.js';
import type { McpEndpoint } from './server.js';
import type { McpService } from './service.js';
import { selectTools } from './toolsets.js';

export function mcpRoutes(app: TypedApp, endpoint: McpEndpoint, _service: McpService): void {
  app.post(
    '/mcp',
    {
      config: { access: 'availability', scope: 'read' },
      schema: { hide: true },
      // A callback hook, not an async one: no promise per request on the tool calls' hot path.
      onSend: (_request, reply, payload, done) => {
        if (reply.statusCode === 401) reply.header('www-authenticate', 'Bearer realm="kairos"');
        done(null, payload);
      },
    },
    async (request, reply) => {
      actorOf(request.caller);
      const query = request.query as Record<string, unknown> | undefined;
      const ctx = {
        app: request.server,
        request,
        caller: request.caller,
        toolsets: selectTools(query?.toolsets),
      };
      // The shortcut (fast.ts) decides up front whether it answers; once it has taken the request,
      // its answer is the answer, errors included.
      const fast = endpoint.fast(request.headers, request.body, ctx);
      if (fast) {
        const answer = await fast;
        // Written by hand, in its two parts (fast.ts FastAnswer), with the headers set so far
        // (request id, rate limit); Fastify's onResponse hooks still run when the answer ends.
        reply.hijack();
        const raw = reply.raw;
        raw.writeHead(answer.status, {
          ...(reply.getHeaders() as OutgoingHttpHeaders),
          'content-type': answer.contentType,
          'content-length': answer.head.length + answer.tail.length,
        });
        raw.cork();
        raw.write(answer.head);
        raw.end(answer.tail);
        return reply;
      }
      const headers = new Headers();
      for (const [k, v] of Object.entries(request.headers)) {
        if (v === undefined) continue;
        headers.set(k, Array.isArray(v) ? v.join(', ') : String(v));
      }
      const url = `http://${request.headers.host ?? 'localhost'}${request.url}`;
      const web = new Request(url, { method: 'POST', headers });
      const res = await endpoint.handle(web, request.body, ctx);
      reply.code(res.status);
      res.headers.forEach((value, key) => {
        if (key !== 'content-length' && key !== 'transfer-encoding') reply.header(key, value);
      });
      const text = await res.text();
      return reply.send(text);
    },
  );
}
