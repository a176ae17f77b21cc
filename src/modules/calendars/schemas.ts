/** TypeBox schemas of the calendar routes (validation, OpenAPI and types in one). */
import { type Static, Type } from '@sinclair/typebox';
import { MAX_OUTBOUND_URL_LENGTH } from '../../platform/outbound.js';
import { named, StringEnum, Timestamp, Uuid } from '../../platform/schemas.js';

/** Default and longest lifetime of a host connect link. */
export const CONNECT_LINK_DEFAULT_HOURS = 7 * 24;
export const CONNECT_LINK_MAX_HOURS = 30 * 24;

const ID_CHARS = '[0-9a-z]{26}';
export const CalendarId = Type.String({ pattern: `^cal_${ID_CHARS}$`, description: 'calendar id (cal_…)' });
export const ConnectionId = Type.String({
  pattern: `^conn_${ID_CHARS}$`,
  description: 'calendar connection id (conn_…)',
});

const ProviderName = StringEnum(['google', 'microsoft', 'caldav', 'ics'], {
  name: 'CalendarProvider',
  description: 'calendar provider',
});
export const OAuthProvider = StringEnum(['google', 'microsoft'], {
  name: 'OAuthProvider',
  description: 'OAuth calendar provider',
});

const PrincipalId = Type.Optional(
  Type.String({
    format: 'uuid',
    description: 'act for this host of your account (default: the caller itself)',
  }),
);
const RedirectUri = Type.String({
  format: 'uri',
  maxLength: 2048,
  description: 'where the browser is sent back after the provider: ?status=connected|error&state=…',
});

// ---------------------------------------------------------------------------------------------------
// Shapes

export const Calendar = named(
  'Calendar',
  Type.Object({
    id: CalendarId,
    name: Type.String(),
    provider: ProviderName,
    primary: Type.Boolean(),
    selected: Type.Boolean({ description: 'counted for busy time' }),
    destination: Type.Boolean({
      description:
        'meetings (bookings) are written into this calendar; when none of a principal’s calendars is, ' +
        'they go to the primary calendar of its oldest writable connection',
    }),
    connection_id: ConnectionId,
    error: Type.Union([Type.String(), Type.Null()], {
      description: 'the provider’s complaint about this calendar at the last sync, if any',
    }),
  }),
);

export const Connection = named(
  'CalendarConnection',
  Type.Object({
    id: ConnectionId,
    provider: ProviderName,
    status: StringEnum(['connected', 'disconnected'], { description: 'disconnected: reconnect it' }),
    status_reason: Type.Union([Type.String(), Type.Null()], {
      description: 'why it is disconnected: invalid_grant (access revoked), unauthorized, removed …',
    }),
    account: Type.String({ description: 'the provider account: e-mail, user@host or the feed’s host' }),
    last_sync: Type.Union([Timestamp, Type.Null()], { description: 'last successful busy-time fetch' }),
    last_error: Type.Union([Type.String(), Type.Null()], { description: 'why the last fetch failed' }),
    retry_at: Type.Union([Timestamp, Type.Null()], { description: 'no provider call before this' }),
    created_at: Timestamp,
    calendars: Type.Array(Calendar),
  }),
);

const ProviderSummary = Type.Object({
  name: ProviderName,
  connected: Type.Boolean(),
  status: StringEnum(['not_connected', 'connected', 'degraded', 'disconnected'], {
    description: 'degraded: some connection failed its last sync or was disconnected',
  }),
  calendar_count: Type.Integer(),
});

export const CalendarList = Type.Object({
  calendars: Type.Array(Calendar),
  providers: Type.Array(ProviderSummary),
  connections: Type.Array(Connection),
});

export const ConnectionAnswer = named('CalendarConnectionAnswer', Type.Object({ connection: Connection }));

export const AuthorizeAnswer = named(
  'AuthorizeAnswer',
  Type.Object({
    authorize_url: Type.String({ format: 'uri', description: 'send the user’s browser here' }),
    expires_at: Timestamp,
  }),
);

export const SyncAnswer = Type.Object({
  events_synced: Type.Integer({ description: 'busy blocks fetched across the synced connections' }),
  last_sync: Timestamp,
  connections: Type.Array(
    Type.Object({
      id: ConnectionId,
      provider: ProviderName,
      status: StringEnum(['synced', 'failed', 'disconnected'], {
        description: 'outcome for this connection',
      }),
      busy_blocks: Type.Integer(),
      error: Type.Union([Type.String(), Type.Null()]),
    }),
  ),
});

export const DisconnectAnswer = Type.Object({ connections: Type.Array(Connection) });

export const ConnectLinkAnswer = Type.Object({
  connect_link: Type.Object({
    url: Type.String({ format: 'uri', description: 'open in the host’s browser; no API key needed' }),
    expires_at: Timestamp,
    host_id: Uuid,
    providers: Type.Array(OAuthProvider, { description: 'providers the link can connect' }),
  }),
});

export const HtmlPage = Type.String({ description: 'A small HTML page for the person in the browser' });

// ---------------------------------------------------------------------------------------------------
// Requests

export const ConnectQuery = Type.Object(
  {
    redirect_uri: Type.Optional(RedirectUri),
    state: Type.Optional(
      Type.String({ maxLength: 512, description: 'your own value, handed back on the redirect_uri' }),
    ),
    principal_id: PrincipalId,
  },
  { additionalProperties: false },
);

/** Providers add their own parameters (scope, authuser, session_state, iss …): accept them. */
export const CallbackQuery = Type.Object(
  {
    code: Type.Optional(Type.String({ maxLength: 4096 })),
    state: Type.String({
      minLength: 1,
      maxLength: 4096,
      description: 'the signed state this server put in the consent screen URL (required)',
    }),
    error: Type.Optional(Type.String({ maxLength: 256 })),
    error_description: Type.Optional(Type.String({ maxLength: 2048 })),
  },
  { additionalProperties: true },
);

export const PrincipalQuery = Type.Object({ principal_id: PrincipalId }, { additionalProperties: false });

export const CaldavBody = Type.Object(
  {
    server_url: Type.String({
      format: 'uri',
      minLength: 1,
      maxLength: MAX_OUTBOUND_URL_LENGTH,
      description: 'CalDAV server or principal URL (https; e.g. https://caldav.icloud.com/)',
    }),
    username: Type.String({ minLength: 1, maxLength: 256 }),
    password: Type.String({ minLength: 1, maxLength: 1024, description: 'an app-specific password' }),
    principal_id: PrincipalId,
  },
  { additionalProperties: false },
);

export const IcsBody = Type.Object(
  {
    url: Type.String({
      format: 'uri',
      minLength: 1,
      maxLength: MAX_OUTBOUND_URL_LENGTH,
      description: 'https or webcal URL of an iCalendar feed (kept encrypted: it is often a secret)',
    }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    principal_id: PrincipalId,
  },
  { additionalProperties: false },
);

export const CalendarParams = Type.Object({ id: CalendarId }, { additionalProperties: false });

export const CalendarUpdateBody = Type.Object(
  {
    selected: Type.Optional(Type.Boolean({ description: 'count this calendar’s busy time' })),
    destination: Type.Optional(
      Type.Boolean({ description: 'write meetings into this calendar (not for ICS feeds: 422)' }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const SyncBody = Type.Object({ principal_id: PrincipalId }, { additionalProperties: false });

export const DisconnectParams = Type.Object(
  {
    provider: Type.Union([ProviderName, ConnectionId], {
      description: 'a provider (every connection of it) or one connection id',
    }),
  },
  { additionalProperties: false },
);

export const HostParams = Type.Object({ id: Uuid }, { additionalProperties: false });

export const ConnectLinkBody = Type.Object(
  {
    expires_in_hours: Type.Optional(
      Type.Integer({ minimum: 1, maximum: CONNECT_LINK_MAX_HOURS, description: 'default 168 (7 days)' }),
    ),
  },
  { additionalProperties: false },
);

/** The connect page's forms (a host connects through its connect link): checked by the service. */
export const LinkCaldavForm = Type.Object(
  {
    server_url: Type.String({ maxLength: 2048 }),
    username: Type.String({ maxLength: 320 }),
    password: Type.String({ maxLength: 1024 }),
  },
  { additionalProperties: false },
);
export const LinkIcsForm = Type.Object(
  { url: Type.String({ maxLength: 2048 }) },
  { additionalProperties: false },
);
/** Either form, as the service reads it (a field the form lacks is empty). */
export type LinkForm = Partial<Static<typeof LinkCaldavForm> & Static<typeof LinkIcsForm>>;

export const PublicConnectParams = Type.Object(
  { token: Type.String({ minLength: 10, maxLength: 100 }) },
  { additionalProperties: false },
);

export const PublicConnectQuery = Type.Object(
  { provider: Type.Optional(OAuthProvider) },
  { additionalProperties: false },
);
