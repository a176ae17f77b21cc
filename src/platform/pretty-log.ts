/**
 * The server's log for people (KAIROS_LOG_FORMAT=pretty, the default when standard output is a
 * terminal): each of pino's JSON lines rewritten as one line of text — time, level, message, then the
 * other fields as `key=value` — with an error's stack below it, and the console's setup link alone in
 * a box of its own, where it cannot be missed. A small formatter of our own rather than pino-pretty:
 * it needs none of that package's options, its transport thread or its dependencies
 * (docs/architecture.md, "Logs").
 */

const LEVELS: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO ',
  40: 'WARN ',
  50: 'ERROR',
  60: 'FATAL',
};

/** Fields every line has, shown in their own places (or not at all: the pid and host). */
const PLACED = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'err', 'setup_link']);

function value(v: unknown): string {
  if (typeof v === 'string') return /[\s"=]/.test(v) || v === '' ? JSON.stringify(v) : v;
  return JSON.stringify(v) ?? String(v);
}

/** `text` in a box drawn with line characters, on lines of its own. */
export function boxed(text: string): string {
  const bar = '─'.repeat(text.length + 2);
  return `┌${bar}┐\n│ ${text} │\n└${bar}┘\n`;
}

/** One pino JSON line (with its newline) as text for people; a line that is not a JSON object passes as is. */
export function prettyLine(line: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  if (entry === null || typeof entry !== 'object') return line;
  const time = typeof entry.time === 'number' ? new Date(entry.time).toISOString().slice(11, 23) : '';
  const level = LEVELS[entry.level as number] ?? String(entry.level ?? '');
  let msg = typeof entry.msg === 'string' ? entry.msg : '';
  const fields = Object.entries(entry).filter(([k]) => !PLACED.has(k));
  // The access line: its request as the message.
  if (msg === 'request' && typeof entry.method === 'string') {
    msg = `${entry.method} ${entry.route} ${entry.status} ${entry.ms} ms`;
    for (const k of ['method', 'route', 'status', 'ms'])
      fields.splice(
        fields.findIndex(([f]) => f === k),
        1,
      );
  }
  let out = `${time} ${level} ${msg}`;
  if (fields.length > 0) out += `  ${fields.map(([k, v]) => `${k}=${value(v)}`).join(' ')}`;
  out += '\n';
  const err = entry.err as { stack?: unknown; message?: unknown } | undefined;
  if (err && typeof err === 'object') {
    const stack = typeof err.stack === 'string' ? err.stack : String(err.message ?? JSON.stringify(err));
    out += `${stack.replace(/^/gm, '    ')}\n`;
  }
  if (typeof entry.setup_link === 'string') out += boxed(entry.setup_link);
  return out;
}
