/**
 * Slot engine benchmark: computeSlots over 30 days of 15-minute slots (30-minute duration) for one
 * host with 1,000 busy intervals (and 5,000 over 150 days, sorted and merged upstream as busy sources hand them out). Run alone with `node --import tsx bench/slots.ts`.
 */
import { pathToFileURL } from 'node:url';
import { normalize } from '../src/lib/intervals.js';
import { DEFAULT_SCHEDULE, workingIntervals } from '../src/lib/schedule.js';
import { computeSlots, firstSlot, type SlotInput } from '../src/lib/slots.js';
import { randomBusy, type Row } from './lib.js';
import { DAY, MINUTE } from '../src/lib/time.js';

/** One benchmark result row. */
export type BenchRow = Row;

const ZONE = 'America/New_York';
const BUSY_COUNT = 1000;
const WARMUP = 300;
const ITERATIONS = 3000;

/** Mean and 99th percentile of per-call wall times, and mean CPU time, in milliseconds. */
function measure(fn: () => unknown): { mean: number; p99: number; cpu: number } {
  for (let i = 0; i < WARMUP; i++) fn();
  const times = new Float64Array(ITERATIONS);
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < ITERATIONS; i++) {
    const t0 = performance.now();
    fn();
    times[i] = performance.now() - t0;
  }
  const cpu = process.cpuUsage(cpu0);
  times.sort();
  let sum = 0;
  for (const x of times) sum += x;
  const p99 = times[Math.min(ITERATIONS - 1, Math.ceil(ITERATIONS * 0.99) - 1)]!;
  return { mean: sum / ITERATIONS, p99, cpu: (cpu.user + cpu.system) / 1000 / ITERATIONS };
}

/** Runs the slot benchmark and returns its rows. */
export async function benchSlots(): Promise<BenchRow[]> {
  // 30 days spanning the 2026-03-08 DST change; now = window start.
  const start = Date.UTC(2026, 2, 1, 5);
  const window = { start, end: start + 30 * DAY };
  const input: SlotInput = {
    window,
    durationMs: 30 * MINUTE,
    intervalMs: 15 * MINUTE,
    working: workingIntervals(DEFAULT_SCHEDULE(ZONE), window),
    busy: randomBusy(window, BUSY_COUNT),
    bufferBeforeMs: 5 * MINUTE,
    bufferAfterMs: 10 * MINUTE,
    nowMs: start,
    minimumNoticeMs: 60 * MINUTE,
    maxDaysAhead: 60,
    alignTimezone: ZONE,
  };
  const slotCount = computeSlots(input).length;
  const all = measure(() => computeSlots(input));
  const sortedInput = { ...input, busy: input.busy.slice().sort((a, b) => a.start - b.start) };
  const sorted = measure(() => computeSlots(sortedInput));
  const first = measure(() => firstSlot(input));
  // 5,000 busy blocks over 150 days (the 30 days' density), sorted and merged once upstream as busy
  // sources hand them out and the availability service passes them on: the engine's linear path.
  const many = normalize(randomBusy({ start: window.start, end: window.start + 150 * DAY }, 5 * BUSY_COUNT));
  const manyInput = { ...input, busy: many };
  const manyAll = measure(() => computeSlots(manyInput));
  const manyCount = computeSlots(manyInput).length;
  const fmt = (ms: number) => ms.toFixed(3);
  return [
    { name: 'slots.computeSlots 30d/1000 busy mean', value: fmt(all.mean), unit: 'ms' },
    { name: 'slots.computeSlots 30d/1000 busy p99', value: fmt(all.p99), unit: 'ms' },
    { name: 'slots.computeSlots 30d/1000 busy CPU mean', value: fmt(all.cpu), unit: 'ms' },
    { name: 'slots.computeSlots slots per call', value: String(slotCount), unit: 'slots' },
    { name: 'slots.computeSlots 30d/1000 busy pre-sorted mean', value: fmt(sorted.mean), unit: 'ms' },
    { name: 'slots.firstSlot 30d/1000 busy mean', value: fmt(first.mean), unit: 'ms' },
    { name: 'slots.computeSlots 30d/5000 busy sorted upstream mean', value: fmt(manyAll.mean), unit: 'ms' },
    {
      name: 'slots.computeSlots 30d/5000 busy sorted upstream CPU mean',
      value: fmt(manyAll.cpu),
      unit: 'ms',
    },
    { name: 'slots.computeSlots 30d/5000 busy slots per call', value: String(manyCount), unit: 'slots' },
  ];
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.table(await benchSlots());
}
