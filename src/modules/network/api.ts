/** The network module's public surface (docs/architecture.md#modules): what other modules may use. */
export interface NetworkApi {
  /** May `from` propose meetings to `to` (connected, or a booking:propose consent)? */
  mayPropose(from: string, to: string): Promise<boolean>;
  /** The consent reaper's pass (the `consent-expiry` schedule; tests and support). */
  expireConsents(): Promise<number>;
}
