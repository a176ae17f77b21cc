import type { GoogleEmulator } from '../emulators/google.js';
import type { MicrosoftEmulator } from '../emulators/microsoft.js';

/** The environment that points the app's Google and Microsoft calendar clients at the emulators. */
export function emulatorEnv(google: GoogleEmulator, microsoft: MicrosoftEmulator): Record<string, string> {
  return {
    GOOGLE_CLIENT_ID: google.clientId,
    GOOGLE_CLIENT_SECRET: google.clientSecret,
    GOOGLE_AUTHORIZE_URL: `${google.url}/o/oauth2/v2/auth`,
    GOOGLE_TOKEN_URL: `${google.url}/token`,
    GOOGLE_REVOKE_URL: `${google.url}/revoke`,
    GOOGLE_CALENDAR_API_URL: google.apiUrl,
    MICROSOFT_CLIENT_ID: microsoft.clientId,
    MICROSOFT_CLIENT_SECRET: microsoft.clientSecret,
    MICROSOFT_AUTHORIZE_URL: `${microsoft.url}/common/oauth2/v2.0/authorize`,
    MICROSOFT_TOKEN_URL: `${microsoft.url}/common/oauth2/v2.0/token`,
    MICROSOFT_GRAPH_URL: microsoft.graphUrl,
  };
}
