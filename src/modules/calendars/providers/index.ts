/** Calendar provider clients: no database, no globals; every network call goes through an injected fetch. */
export {
  type CaldavCalendar,
  type CaldavCredentials,
  type CaldavOptions,
  caldavBusy,
  caldavDiscover,
} from './caldav.js';
export { ProviderError, type ProviderErrorCode, parseRetryAfter } from './errors.js';
export {
  GOOGLE_API_URL,
  GOOGLE_MAX_CALENDARS_PER_CALL,
  GOOGLE_MAX_WINDOW_MS,
  type GoogleApiConfig,
  type GoogleCalendar,
  type GoogleFreeBusyQuery,
  googleFreeBusy,
  googleListCalendars,
} from './google.js';
export { fetchIcs, MAX_OCCURRENCES, MAX_RULE_ITERATIONS, parseIcsBusy } from './ics.js';
export {
  GRAPH_MAX_SCHEDULES_PER_CALL,
  GRAPH_MAX_WINDOW_MS,
  GRAPH_URL,
  type GraphConfig,
  type MicrosoftCalendar,
  type MicrosoftScheduleQuery,
  microsoftFreeBusy,
  microsoftListCalendars,
  parseGraphDateTime,
} from './microsoft.js';
export {
  type AuthorizeParams,
  buildAuthorizeUrl,
  createPkce,
  type ExchangeParams,
  exchangeCode,
  GOOGLE_CALENDAR_SCOPES,
  GOOGLE_OAUTH_ENDPOINTS,
  MICROSOFT_CALENDAR_SCOPES,
  microsoftOAuthEndpoints,
  OAuthError,
  type OAuthConfig,
  type OAuthProvider,
  type Pkce,
  pkceChallenge,
  refreshToken,
  revokeToken,
  type TokenSet,
} from './oauth.js';
export type {
  BusyResult,
  CalendarError,
  HttpFetch,
} from './types.js';
export type { Interval } from '../../../lib/intervals.js';
export { resolveZoneName } from './zones.js';
