import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  clip,
  expand,
  type Interval,
  intersect,
  intersectAll,
  isNormalized,
  normalize,
  normalizedCopy,
  subtract,
  totalLength,
  union,
} from './intervals.js';

const iv = (start: number, end: number): Interval => ({ start, end });
const DOMAIN = 120;

/** The set of integer points in [0, DOMAIN + 40) covered by a list, as a bitmap (model for properties). */
function points(list: readonly Interval[]): boolean[] {
  const out = new Array<boolean>(DOMAIN + 40).fill(false);
  for (const x of list)
    for (let p = Math.max(0, x.start); p < Math.min(out.length, x.end); p++) out[p] = true;
  return out;
}

const anyInterval = fc
  .tuple(fc.integer({ min: 0, max: DOMAIN }), fc.integer({ min: -5, max: 30 }))
  .map(([s, len]) => iv(s, s + len));
const anyList = fc.array(anyInterval, { maxLength: 12 });
const normList = anyList.map(normalize);

describe('normalize', () => {
  it('sorts, merges overlapping and adjacent intervals, drops empty ones', () => {
    expect(normalize([iv(10, 20), iv(0, 5), iv(5, 7), iv(15, 25), iv(30, 30), iv(40, 35)])).toEqual([
      iv(0, 7),
      iv(10, 25),
    ]);
  });

  it('returns a copy of an already normalized list, reusing its elements', () => {
    const input = [iv(0, 1), iv(2, 3)];
    const out = normalize(input);
    expect(out).not.toBe(input);
    expect(out[0]).toBe(input[0]);
  });

  it('never mutates its input', () => {
    const input = [iv(5, 9), iv(0, 6)];
    normalize(input);
    expect(input).toEqual([iv(5, 9), iv(0, 6)]);
  });

  it('property: result is normalized and covers the same points', () => {
    fc.assert(
      fc.property(anyList, (list) => {
        const out = normalize(list);
        expect(isNormalized(out)).toBe(true);
        expect(points(out)).toEqual(points(list));
      }),
      { numRuns: 150 },
    );
  });

  it('property: fractional and far-apart inputs (the fallback sort) give the same shape', () => {
    fc.assert(
      fc.property(anyList, (list) => {
        const map = (l: readonly Interval[], f: (v: number) => number) =>
          l.map((x) => ({ start: f(x.start), end: f(x.end) }));
        const half = (v: number) => v + 0.5;
        const wide = (v: number) => v * 2 ** 28;
        expect(normalize(map(list, half))).toEqual(map(normalize(list), half));
        expect(normalize(map(list, wide))).toEqual(map(normalize(list), wide));
      }),
      { numRuns: 150 },
    );
  });
});

describe('normalizedCopy', () => {
  it('keeps only the spans, merged, dropping titles and non-finite bounds', () => {
    const titled = [
      { start: 5, end: 9, title: 'Dentist' },
      { start: 1, end: 3, title: 'Standup' },
      { start: 3, end: 4, title: 'Coffee' },
      { start: Number.NaN, end: 4, title: 'broken' },
      { start: 0, end: Number.POSITIVE_INFINITY, title: 'forever' },
    ];
    const out = normalizedCopy(titled);
    expect(out).toEqual([
      { start: 1, end: 4 },
      { start: 5, end: 9 },
    ]);
    for (const x of out) expect(Object.keys(x)).toEqual(['start', 'end']);
  });
});

describe('union', () => {
  it('merges two lists', () => {
    expect(union([iv(0, 5), iv(20, 25)], [iv(5, 10), iv(22, 30), iv(40, 41)])).toEqual([
      iv(0, 10),
      iv(20, 30),
      iv(40, 41),
    ]);
  });

  it('property: union is the point-set union', () => {
    fc.assert(
      fc.property(normList, normList, (a, b) => {
        const out = union(a, b);
        expect(isNormalized(out)).toBe(true);
        const pa = points(a);
        const pb = points(b);
        expect(points(out)).toEqual(pa.map((v, i) => v || pb[i]));
      }),
      { numRuns: 150 },
    );
  });
});

describe('subtract', () => {
  it('cuts holes and trims edges', () => {
    expect(subtract([iv(0, 100)], [iv(10, 20), iv(50, 60), iv(95, 120)])).toEqual([
      iv(0, 10),
      iv(20, 50),
      iv(60, 95),
    ]);
  });

  it('handles one b interval spanning several a intervals', () => {
    expect(subtract([iv(0, 10), iv(20, 30), iv(40, 50)], [iv(5, 45)])).toEqual([iv(0, 5), iv(45, 50)]);
  });

  it('keeps untouched intervals as they are', () => {
    const a = [iv(0, 10)];
    expect(subtract(a, [iv(10, 20)])[0]).toBe(a[0]);
  });

  it('property: subtract is the point-set difference', () => {
    fc.assert(
      fc.property(normList, normList, (a, b) => {
        const out = subtract(a, b);
        expect(isNormalized(out)).toBe(true);
        const pa = points(a);
        const pb = points(b);
        expect(points(out)).toEqual(pa.map((v, i) => v && !pb[i]));
      }),
      { numRuns: 150 },
    );
  });
});

describe('intersect and intersectAll', () => {
  it('intersects two lists', () => {
    expect(intersect([iv(0, 10), iv(20, 30)], [iv(5, 25)])).toEqual([iv(5, 10), iv(20, 25)]);
  });

  it('intersects several lists, and none gives none', () => {
    expect(intersectAll([[iv(0, 10)], [iv(2, 8)], [iv(4, 20)]])).toEqual([iv(4, 8)]);
    expect(intersectAll([])).toEqual([]);
    expect(intersectAll([[iv(0, 1)]])).toEqual([iv(0, 1)]);
  });

  it('property: intersect is the point-set intersection', () => {
    fc.assert(
      fc.property(normList, normList, normList, (a, b, c) => {
        const out = intersect(a, b);
        expect(isNormalized(out)).toBe(true);
        const pa = points(a);
        const pb = points(b);
        const pc = points(c);
        expect(points(out)).toEqual(pa.map((v, i) => v && pb[i]));
        expect(points(intersectAll([a, b, c]))).toEqual(pa.map((v, i) => v && pb[i] && pc[i]));
      }),
      { numRuns: 150 },
    );
  });
});

describe('expand', () => {
  it('pads each interval and merges the result', () => {
    expect(expand([iv(10, 20), iv(25, 30), iv(60, 70)], 5, 2)).toEqual([iv(5, 32), iv(55, 72)]);
  });

  it('rejects negative padding', () => {
    expect(() => expand([iv(0, 1)], -1, 0)).toThrow(RangeError);
  });

  it('copes with unsorted input', () => {
    expect(expand([iv(50, 60), iv(0, 10)], 1, 1)).toEqual([iv(-1, 11), iv(49, 61)]);
  });

  it('property: a point is covered iff it lies within the padding of some interval', () => {
    fc.assert(
      fc.property(normList, fc.nat(10), fc.nat(10), (a, before, after) => {
        const out = expand(a, before, after);
        expect(isNormalized(out)).toBe(true);
        const model = a.map((x) => iv(x.start - before, x.end + after));
        expect(points(out)).toEqual(points(model));
      }),
      { numRuns: 150 },
    );
  });

  it('property: the same for any input, unsorted, overlapping or with empty intervals (which stay empty)', () => {
    fc.assert(
      fc.property(anyList, fc.nat(10), fc.nat(10), (a, before, after) => {
        const out = expand(a, before, after);
        expect(isNormalized(out)).toBe(true);
        const model = a.filter((x) => x.start < x.end).map((x) => iv(x.start - before, x.end + after));
        expect(points(out)).toEqual(points(model));
      }),
      { numRuns: 300 },
    );
  });
});

describe('clip', () => {
  it('keeps the parts inside the window', () => {
    expect(clip([iv(0, 10), iv(20, 30), iv(40, 50)], iv(5, 45))).toEqual([iv(5, 10), iv(20, 30), iv(40, 45)]);
    expect(clip([iv(0, 10)], iv(5, 5))).toEqual([]);
  });

  it('property: clip equals intersection with the window', () => {
    fc.assert(
      fc.property(normList, anyInterval, (a, w) => {
        expect(clip(a, w)).toEqual(w.start < w.end ? intersect(a, [w]) : []);
      }),
      { numRuns: 150 },
    );
  });
});

describe('totalLength', () => {
  it('sums lengths', () => {
    expect(totalLength([iv(0, 10), iv(20, 25)])).toBe(15);
  });
});
