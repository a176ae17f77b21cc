/**
 * Interval algebra on half-open UTC intervals [start, end) in epoch milliseconds.
 *
 * A list is "normalized" when it is sorted by start, every interval is non-empty (start < end), and
 * no two intervals overlap or touch. Functions that take normalized lists run in linear time.
 * Nothing here mutates its inputs: every function returns a new array, which may share (immutable)
 * interval objects with its inputs.
 */

/** A half-open span of time [start, end) in epoch milliseconds. */
export interface Interval {
  readonly start: number;
  readonly end: number;
}

/** True when the list is sorted, non-empty per interval, and free of overlaps and adjacency. */
export function isNormalized(list: readonly Interval[]): boolean {
  let prevEnd = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < list.length; i++) {
    const x = list[i]!;
    if (!(x.start < x.end) || x.start <= prevEnd) return false;
    prevEnd = x.end;
  }
  return true;
}

/** Sorts, drops empty intervals, and merges overlapping or adjacent ones. O(n log n); O(n) if sorted. */
export function normalize(list: readonly Interval[]): Interval[] {
  let prevStart = Number.NEGATIVE_INFINITY;
  let prevEnd = Number.NEGATIVE_INFINITY;
  let normalized = true;
  let valid = 0;
  for (let i = 0; i < list.length; i++) {
    const x = list[i]!;
    if (!(x.start < x.end)) {
      normalized = false;
      continue;
    }
    if (x.start <= prevEnd) normalized = false;
    if (x.start < prevStart) return sortAndMerge(list);
    prevStart = x.start;
    prevEnd = x.end;
    valid++;
  }
  if (normalized) return list.slice();
  return mergeSorted(list, valid);
}

/**
 * Plain normalized copies of interval-shaped values, as providers hand them over: extra members
 * (an event's title) and non-finite bounds dropped, so nothing but the span is kept or cached.
 */
export function normalizedCopy(list: readonly Interval[]): Interval[] {
  const plain: Interval[] = [];
  for (const x of list) {
    if (Number.isFinite(x.start) && Number.isFinite(x.end)) plain.push({ start: x.start, end: x.end });
  }
  return normalize(plain);
}

/** Union of two normalized lists, normalized. Linear. */
export function union(a: readonly Interval[], b: readonly Interval[]): Interval[] {
  if (a.length === 0) return b.slice();
  if (b.length === 0) return a.slice();
  const out: Interval[] = [];
  let i = 0;
  let j = 0;
  let cur: Interval | undefined;
  let curEnd = 0;
  while (i < a.length || j < b.length) {
    const x = j >= b.length || (i < a.length && a[i]!.start <= b[j]!.start) ? a[i++]! : b[j++]!;
    if (cur !== undefined && x.start <= curEnd) {
      if (x.end > curEnd) curEnd = x.end;
      continue;
    }
    if (cur !== undefined) out.push(cur.end === curEnd ? cur : { start: cur.start, end: curEnd });
    cur = x;
    curEnd = x.end;
  }
  if (cur !== undefined) out.push(cur.end === curEnd ? cur : { start: cur.start, end: curEnd });
  return out;
}

/** The parts of normalized `a` not covered by normalized `b`. Linear. */
export function subtract(a: readonly Interval[], b: readonly Interval[]): Interval[] {
  if (b.length === 0) return a.slice();
  const out: Interval[] = [];
  let j = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    let s = x.start;
    const e = x.end;
    while (j < b.length && b[j]!.end <= s) j++;
    let cut = false;
    for (let k = j; k < b.length; k++) {
      const y = b[k]!;
      if (y.start >= e) break;
      if (y.start > s) out.push({ start: s, end: y.start });
      cut = true;
      if (y.end > s) s = y.end;
      if (s >= e) break;
    }
    if (s < e) out.push(cut ? { start: s, end: e } : x);
  }
  return out;
}

/** Intersection of two normalized lists, normalized. Linear. */
export function intersect(a: readonly Interval[], b: readonly Interval[]): Interval[] {
  const out: Interval[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!;
    const y = b[j]!;
    const s = Math.max(x.start, y.start);
    const e = Math.min(x.end, y.end);
    if (s < e) {
      if (s === x.start && e === x.end) out.push(x);
      else if (s === y.start && e === y.end) out.push(y);
      else out.push({ start: s, end: e });
    }
    if (x.end < y.end) i++;
    else j++;
  }
  return out;
}

/** Intersection of several normalized lists (empty for no lists). Linear in the total size. */
export function intersectAll(lists: readonly (readonly Interval[])[]): Interval[] {
  if (lists.length === 0) return [];
  const order = lists.slice().sort((p, q) => p.length - q.length);
  let acc: Interval[] = order[0]!.slice();
  for (let k = 1; k < order.length && acc.length > 0; k++) acc = intersect(acc, order[k]!);
  return acc;
}

/** Pads each interval by `beforeMs` at its start and `afterMs` at its end, then merges. Linear if sorted. */
export function expand(intervals: readonly Interval[], beforeMs: number, afterMs: number): Interval[] {
  if (!(beforeMs >= 0) || !(afterMs >= 0)) throw new RangeError('expand: padding must be >= 0');
  if (beforeMs === 0 && afterMs === 0) return normalize(intervals);
  const out: Interval[] = [];
  let curStart = 0;
  let curEnd = 0;
  let open = false;
  for (let i = 0; i < intervals.length; i++) {
    const x = intervals[i]!;
    if (!(x.start < x.end)) continue;
    const s = x.start - beforeMs;
    const e = x.end + afterMs;
    if (open && s < curStart) {
      // Unsorted: pad the non-empty ones (an empty interval stays empty, however padded), then sort.
      return normalize(intervals.filter((y) => y.start < y.end).map((y) => pad(y, beforeMs, afterMs)));
    }
    if (open && s <= curEnd) {
      if (e > curEnd) curEnd = e;
      continue;
    }
    if (open) out.push({ start: curStart, end: curEnd });
    curStart = s;
    curEnd = e;
    open = true;
  }
  if (open) out.push({ start: curStart, end: curEnd });
  return out;
}

/** The parts of a normalized list inside `window`. O(log n + k) for k results. */
export function clip(intervals: readonly Interval[], window: Interval): Interval[] {
  const out: Interval[] = [];
  if (!(window.start < window.end)) return out;
  let lo = 0;
  let hi = intervals.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (intervals[mid]!.end <= window.start) lo = mid + 1;
    else hi = mid;
  }
  for (let i = lo; i < intervals.length; i++) {
    const x = intervals[i]!;
    if (x.start >= window.end) break;
    if (x.start >= window.start && x.end <= window.end) out.push(x);
    else {
      const s = Math.max(x.start, window.start);
      const e = Math.min(x.end, window.end);
      if (s < e) out.push({ start: s, end: e });
    }
  }
  return out;
}

/** Total length in milliseconds of a normalized list. */
export function totalLength(intervals: readonly Interval[]): number {
  let sum = 0;
  for (let i = 0; i < intervals.length; i++) sum += intervals[i]!.end - intervals[i]!.start;
  return sum;
}

/** Widens one interval. */
function pad(x: Interval, beforeMs: number, afterMs: number): Interval {
  return { start: x.start - beforeMs, end: x.end + afterMs };
}

/** Merges a list sorted by start, skipping empty intervals (`valid` = count of non-empty ones). */
function mergeSorted(items: readonly Interval[], valid: number): Interval[] {
  const out: Interval[] = [];
  if (valid === 0) return out;
  let cur: Interval | undefined;
  let curEnd = 0;
  for (let i = 0; i < items.length; i++) {
    const x = items[i]!;
    if (!(x.start < x.end)) continue;
    if (cur !== undefined && x.start <= curEnd) {
      if (x.end > curEnd) curEnd = x.end;
      continue;
    }
    if (cur !== undefined) out.push(cur.end === curEnd ? cur : { start: cur.start, end: curEnd });
    cur = x;
    curEnd = x.end;
  }
  if (cur !== undefined) out.push(cur.end === curEnd ? cur : { start: cur.start, end: curEnd });
  return out;
}

const INDEX_BITS = 2 ** 20;
const MAX_KEY_SPAN = 2 ** 33;

/**
 * Normalizes an unsorted list without a comparator callback. Integer starts within 2^33 ms (~99 days)
 * of each other and fewer than 2^20 items are packed with their index into one exact double key and
 * sorted natively; otherwise starts and ends are sorted separately and swept.
 */
function sortAndMerge(list: readonly Interval[]): Interval[] {
  const items: Interval[] = [];
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  let integral = true;
  for (let i = 0; i < list.length; i++) {
    const x = list[i]!;
    if (!(x.start < x.end)) continue;
    items.push(x);
    if (x.start < min) min = x.start;
    if (x.start > max) max = x.start;
    if (!Number.isInteger(x.start)) integral = false;
  }
  const n = items.length;
  if (n === 0) return [];
  if (!integral || n >= INDEX_BITS || max - min >= MAX_KEY_SPAN) return sweepUnsorted(items);
  const keys = new Float64Array(n);
  for (let k = 0; k < n; k++) keys[k] = (items[k]!.start - min) * INDEX_BITS + k;
  keys.sort();
  const out: Interval[] = [];
  let cur = items[keys[0]! % INDEX_BITS]!;
  let curEnd = cur.end;
  for (let k = 1; k < n; k++) {
    const x = items[keys[k]! % INDEX_BITS]!;
    if (x.start <= curEnd) {
      if (x.end > curEnd) curEnd = x.end;
      continue;
    }
    out.push(cur.end === curEnd ? cur : { start: cur.start, end: curEnd });
    cur = x;
    curEnd = x.end;
  }
  out.push(cur.end === curEnd ? cur : { start: cur.start, end: curEnd });
  return out;
}

/** Normalizes non-empty intervals in any order by sorting starts and ends separately, then sweeping. */
function sweepUnsorted(list: readonly Interval[]): Interval[] {
  const n = list.length;
  const s = new Float64Array(n);
  const e = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    s[i] = list[i]!.start;
    e[i] = list[i]!.end;
  }
  s.sort();
  e.sort();
  const out: Interval[] = [];
  let i = 0;
  let j = 0;
  let active = 0;
  let curStart = 0;
  // Starts before ends on ties, so adjacent intervals merge.
  while (j < n) {
    if (i < n && s[i]! <= e[j]!) {
      if (active === 0) curStart = s[i]!;
      active++;
      i++;
    } else {
      active--;
      if (active === 0) out.push({ start: curStart, end: e[j]! });
      j++;
    }
  }
  return out;
}
