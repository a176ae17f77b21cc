import type { AvailabilityApi } from '../availability/api.js';
import { defineModule } from '../module.js';
import type { McpApi } from './api.js';
import { mcpRoutes } from './routes.js';
import { createMcpEndpoint } from './server.js';
import { McpService } from './service.js';

/**
 * The MCP server (docs/mcp.md): `POST /mcp` serves AI agents the scheduling API as MCP tools and
 * prompts. Each tool runs the REST operation it mirrors in-process, with the caller's credential:
 * access rules, validation, consents and problems are the routes'. The availability slots, the
 * hottest reading tool, are read through the availability API instead (with the route's schema and
 * access rule): a remembered answer there is a remembered tool result here, with no request run.
 */
export const mcpModule = defineModule<{ availability: Pick<AvailabilityApi, 'slots'> }>()({
  name: 'mcp',
  needs: ['availability'],
  create({ platform, needs }) {
    const service = new McpService(platform.clock, needs.availability);
    const endpoint = createMcpEndpoint(service, '1.0.0');
    const api: McpApi = {};
    return {
      api,
      routes: (app) => mcpRoutes(app, endpoint, service),
      close: () => endpoint.close(),
    };
  },
});
