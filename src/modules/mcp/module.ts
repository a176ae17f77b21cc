import { defineModule } from '../module.js';
import type { McpApi } from './api.js';
import { mcpRoutes } from './routes.js';
import { createMcpEndpoint } from './server.js';
import { McpService } from './service.js';

/**
 * The MCP server (docs/mcp.md): `POST /mcp` serves AI agents the scheduling API as MCP tools and
 * prompts. Each tool runs the REST operation it mirrors in-process, with the caller's credential, so
 * it needs no other module's API: access rules, validation, consents and problems are the routes'.
 */
export const mcpModule = defineModule()({
  name: 'mcp',
  needs: [],
  create({ platform }) {
    const service = new McpService(platform.clock);
    const endpoint = createMcpEndpoint(service, '1.0.0');
    const api: McpApi = {};
    return {
      api,
      routes: (app) => mcpRoutes(app, endpoint, service),
      close: () => endpoint.close(),
    };
  },
});
