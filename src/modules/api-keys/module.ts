// Its problem codes, merged into the closed set (platform/errors.ts) and registered for the document.
import './errors.js';
import { defineModule } from '../module.js';
import type { ApiKeysApi, ApiKeysNeeds } from './api.js';
import { apiKeyCredentials } from './credentials.js';
import { usageRetentionSchedule } from './retention.js';
import { apiKeyRoutes } from './routes.js';
import { ApiKeyService } from './service.js';
import { ApiKeyStatsService } from './stats.js';

/** Secret and publishable API keys: issue, list, revoke, usage stats; a credential kind. */
export const apiKeysModule = defineModule<ApiKeysNeeds>()({
  name: 'apiKeys',
  needs: [],
  create({ platform, extensions }) {
    const keys = new ApiKeyService(platform, extensions);
    const stats = new ApiKeyStatsService(platform.db, platform.clock, platform.usage);
    const api: ApiKeysApi = keys;
    return {
      api,
      routes: (app) => apiKeyRoutes(app, { keys, stats }),
      credentials: [apiKeyCredentials(keys, platform.clock)],
      schedules: [usageRetentionSchedule(platform.db, platform.clock, platform.config.retention.usageMs)],
    };
  },
});
