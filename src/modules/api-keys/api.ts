/** The API-keys module's public surface (docs/architecture.md#modules). */
export {
  type ApiKeyService as ApiKeysApi,
  type KeyType,
  type Plan,
  PLAN_LIMITS,
  planLimit,
} from './service.js';
