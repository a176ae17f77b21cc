/**
 * Content-Security-Policy headers: the one builder for every HTML page Kairos serves (booking pages,
 * the console, the API reference). Each page states its own directives; this writes them in order.
 */

/** `default-src 'none'; script-src 'self'; …` from `{ 'default-src': "'none'", … }`, in key order. */
export function contentSecurityPolicy(directives: Readonly<Record<string, string>>): string {
  return Object.entries(directives)
    .map(([name, sources]) => `${name} ${sources}`)
    .join('; ');
}

/** Scripts, styles, images, fetches and form posts from this server only: what the pages and the console load. */
export const SAME_ORIGIN_ASSETS: Readonly<Record<string, string>> = {
  'script-src': "'self'",
  'style-src': "'self'",
  'img-src': "'self' data:",
  'connect-src': "'self'",
  'form-action': "'self'",
};
