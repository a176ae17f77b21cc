/** The MCP module's public API: none (it serves `/mcp` and needs no other module's API). */
export type McpApi = Record<never, never>;
