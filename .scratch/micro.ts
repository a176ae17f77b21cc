import { clip, normalize, type Interval } from '../src/lib/intervals.js';
import { DEFAULT_SCHEDULE, workingIntervals } from '../src/lib/schedule.js';
import { computeSlots } from '../src/lib/slots.js';
import { slotsJson } from '../src/modules/availability/present.js';
const MIN = 60_000, DAY = 86_400_000;
function prng(seed: number) { let a = seed >>> 0; return () => { a = (a + 0x6d2b79f5) >>> 0; let x = a; x = Math.imul(x ^ (x >>> 15), x | 1); x ^= x + Math.imul(x ^ (x >>> 7), x | 61); return ((x ^ (x >>> 14)) >>> 0) / 4_294_967_296; }; }
const from = Math.ceil(Date.now() / DAY) * DAY, to = from + 30 * DAY;
const rand = prng(42); const steps = Math.floor((to - from) / (5 * MIN)); const busy: Interval[] = [];
for (let i = 0; i < 1000; i++) { const s = from + Math.floor(rand() * steps) * 5 * MIN; busy.push({ start: s, end: s + (1 + Math.floor(rand() * 6)) * 5 * MIN }); }
const cached = normalize(busy);
const sched = DEFAULT_SCHEDULE('America/New_York');
const window = { start: from, end: to };
const working = workingIntervals(sched, window);
function run(label: string, fn: () => unknown, n = 20000) {
  for (let i = 0; i < 2000; i++) fn();
  const t0 = performance.now(); for (let i = 0; i < n; i++) fn(); const dt = (performance.now() - t0) / n * 1000;
  console.log(label.padEnd(30), dt.toFixed(2), 'µs');
}
let slots: Interval[] = [];
run('clip busy', () => clip(cached, window));
run('computeSlots', () => { slots = computeSlots({ working, busy: clip(cached, window), window, durationMs: 30 * MIN, nowMs: Date.now(), alignTimezone: 'America/New_York', bufferBeforeMs: 0, bufferAfterMs: 0, minimumNoticeMs: 0, maxDaysAhead: 60 }); });
console.log('slots', slots.length);
const r = { principal_id: '0193a0b0-0000-7000-8000-000000000000', duration_minutes: 30, timezone: 'America/New_York', stale: false, group_by_day: false, slots };
run('slotsJson', () => slotsJson(r));
run('Buffer.from json', () => Buffer.from(slotsJson(r)));
run('workingIntervals', () => workingIntervals(sched, window), 2000);

const PAD2 = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
const MINUTES = Array.from({ length: 1440 }, (_, m) => `${PAD2[Math.floor(m / 60)]}:${PAD2[m % 60]}:00.000Z`);
function renderC(list: Interval[]): string {
  let out = '';
  let day = NaN, prefix = '';
  for (let i = 0; i < list.length; i++) {
    const s = list[i]!;
    const d = Math.floor(s.start / DAY);
    if (d !== day) { day = d; prefix = new Date(d * DAY).toISOString().slice(0, 11); }
    const r1 = s.start - d * DAY, r2 = s.end - d * DAY;
    const endText = r2 < DAY ? prefix + MINUTES[r2 / MIN] : new Date(s.end).toISOString();
    out += (i ? ',{"start":"' : '{"start":"') + prefix + MINUTES[r1 / MIN] + '","end":"' + endText + '"}';
  }
  return out;
}
run('renderC concat', () => { const x = renderC(slots); return x.charCodeAt(100); });
run('renderC + Buffer', () => Buffer.from(renderC(slots)));
// D: bytes
const enc = (s: string) => Buffer.from(s, 'latin1');
const MINB = Buffer.from(MINUTES.join(''), 'latin1');
const A = enc('{"start":"'), Bb = enc('","end":"'), C = enc('"}');
function renderD(list: Interval[]): Buffer {
  const buf = Buffer.allocUnsafe(list.length * 70 + 2);
  let p = 0;
  let day = NaN; let pre = Buffer.alloc(11);
  for (let i = 0; i < list.length; i++) {
    const s = list[i]!;
    const d = Math.floor(s.start / DAY);
    if (d !== day) { day = d; pre = enc(new Date(d * DAY).toISOString().slice(0, 11)); }
    if (i) buf[p++] = 44;
    for (let k = 0; k < 10; k++) buf[p++] = A[k]!;
    for (let k = 0; k < 11; k++) buf[p++] = pre[k]!;
    let o = ((s.start - d * DAY) / MIN) * 13;
    for (let k = 0; k < 13; k++) buf[p++] = MINB[o + k]!;
    for (let k = 0; k < 9; k++) buf[p++] = Bb[k]!;
    for (let k = 0; k < 11; k++) buf[p++] = pre[k]!;
    o = ((s.end - d * DAY) / MIN) * 13;
    for (let k = 0; k < 13; k++) buf[p++] = MINB[o + k]!;
    buf[p++] = 34; buf[p++] = 125;
  }
  return buf.subarray(0, p);
}
run('renderD bytes', () => renderD(slots));
console.log(renderD(slots).toString('latin1') === renderC(slots), renderC(slots).slice(0,150));
const pre = slots.map((s) => `{"start":"${new Date(s.start).toISOString()}","end":"${new Date(s.end).toISOString()}"}`);
run('join only', () => { const parts = new Array<string>(pre.length); for (let i = 0; i < pre.length; i++) parts[i] = pre[i]!; return parts.join(','); });
run('join only + flatten', () => { const x = pre.join(','); return x.charCodeAt(5000); });
const byLen = new Map<number, Map<number, string>>();
function textE(s: Interval): string {
  const len = (s.end - s.start) / MIN; const st = s.start / MIN;
  let m = byLen.get(len); if (!m) { m = new Map(); byLen.set(len, m); }
  let t = m.get(st); if (t === undefined) { t = `{"start":"${new Date(s.start).toISOString()}","end":"${new Date(s.end).toISOString()}"}`; m.set(st, t); }
  return t;
}
run('E smi map + join', () => { const parts = new Array<string>(slots.length); for (let i = 0; i < slots.length; i++) parts[i] = textE(slots[i]!); return parts.join(','); });
const dayCache = new Map<number, string[]>();
function textF(s: Interval): string {
  const d = Math.floor(s.start / DAY); const len = (s.end - s.start) / MIN;
  const key = d * 1024 + len; // len <= 720
  let arr = dayCache.get(key); if (!arr) { arr = new Array(1440); dayCache.set(key, arr); }
  const idx = (s.start - d * DAY) / MIN;
  let t = arr[idx]; if (t === undefined) { t = `{"start":"${new Date(s.start).toISOString()}","end":"${new Date(s.end).toISOString()}"}`; arr[idx] = t; }
  return t;
}
run('F day arrays + join', () => { const parts = new Array<string>(slots.length); for (let i = 0; i < slots.length; i++) parts[i] = textF(slots[i]!); return parts.join(','); });
run('F + Buffer', () => { const parts = new Array<string>(slots.length); for (let i = 0; i < slots.length; i++) parts[i] = textF(slots[i]!); return Buffer.from(parts.join(',')); });
