// `npm run bench`: every benchmark, one table. Figures, not pass/fail: see docs/performance.md.
import { availableParallelism, cpus } from 'node:os';
import type { Row } from './lib.js';
import { benchAvailability } from './availability.js';
import { benchBookingCreate, benchBusySlots } from './bookings.js';
import { benchCli } from './cli.js';
import { benchConsole } from './console.js';
import { benchMcp } from './mcp.js';
import { benchNotify } from './notify.js';
import { benchPages } from './pages.js';
import { benchPlatform } from './platform.js';
import { benchProposals } from './proposals.js';
import { benchSdk } from './sdk.js';
import { benchSerializer } from './serializer.js';
import { benchSeriesSeats } from './series-seats.js';
import { benchSlots } from './slots.js';
import { benchWebhooks } from './webhooks.js';

const suites: [string, () => Promise<Row[]>][] = [
  ['platform', benchPlatform],
  ['serializer', benchSerializer],
  ['slots', benchSlots],
  ['availability', benchAvailability],
  ['webhooks', benchWebhooks],
  ['bookings', benchBookingCreate],
  ['series-seats', benchSeriesSeats],
  ['notify', benchNotify],
  ['bookings-slots', benchBusySlots],
  ['proposals', benchProposals],
  ['pages', benchPages],
  ['sdk', benchSdk],
  ['mcp', benchMcp],
  ['console', benchConsole],
  ['cli', benchCli],
];

const only = process.argv[2];
console.log(
  `Kairos benchmarks · node ${process.version} · ${availableParallelism()} × ${cpus()[0]?.model ?? 'cpu'}`,
);
const rows: (Row & { suite: string })[] = [];
for (const [name, run] of suites) {
  if (only && only !== name) continue;
  process.stdout.write(`running ${name}…\n`);
  for (const r of await run()) rows.push({ suite: name, ...r });
}
console.table(rows.map((r) => ({ suite: r.suite, measure: r.name, value: r.value, unit: r.unit })));
process.exit(0);
