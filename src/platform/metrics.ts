import type pg from 'pg';
import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';

/** Upper bounds (s) of the request duration histogram's buckets. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** One (method, route, status) of the HTTP metrics: its label text and its counts. */
interface RequestSeries {
  labels: string;
  count: number;
  sum: number;
  /** Observations per bucket (not cumulative: summed when written), the last one past every bound. */
  buckets: Float64Array;
}

/** A label value as the text exposition format writes it. */
function labelValue(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

/** Prometheus metrics of one app instance (its own registry, so tests can build many apps). */
export class Metrics {
  readonly registry = new Registry();
  /** Availability answers by kind (slots, next) and outcome (remembered, computed). */
  readonly availabilityAnswers: Counter<'kind' | 'outcome'>;

  constructor(pool: pg.Pool) {
    collectDefaultMetrics({ register: this.registry });
    this.availabilityAnswers = new Counter({
      name: 'kairos_availability_answers_total',
      help: 'Availability answers by kind, remembered (memo hit) or computed',
      labelNames: ['kind', 'outcome'],
      registers: [this.registry],
    });
    const gauge = (name: string, help: string, read: () => number) => this.gauge(name, help, read);
    gauge('kairos_db_pool_total', 'Connections open in the database pool', () => pool.totalCount);
    gauge('kairos_db_pool_idle', 'Idle connections in the database pool', () => pool.idleCount);
    gauge('kairos_db_pool_waiting', 'Requests waiting for a database connection', () => pool.waitingCount);
  }

  private readonly gaugeReaders = new Map<string, (() => number)[]>();

  /**
   * A gauge read when metrics are collected. Registering the same name again (a second app on the same
   * context, as tests build) adds a reader: the gauge shows their sum.
   */
  gauge(name: string, help: string, read: () => number): void {
    const known = this.gaugeReaders.get(name);
    if (known) {
      known.push(read);
      return;
    }
    const readers = [read];
    this.gaugeReaders.set(name, readers);
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        let sum = 0;
        for (const r of readers) sum += r();
        this.set(sum);
      },
    });
  }

  /**
   * The HTTP request counter and duration histogram, kept as plain numbers per (method, route,
   * status) and written by `text`: prom-client's `observe` hashes the label set on every call, about
   * a microsecond of every request (docs/performance.md, "The log line's real cost"). Found by route,
   * then method and status, so a request builds no key: the route template and the method are the
   * same string objects every time, their hashes already kept.
   */
  private readonly series = new Map<string, Map<string, Map<number, RequestSeries>>>();
  /** Every series in the order it was first seen (the exposition's order). */
  private readonly seen: RequestSeries[] = [];

  observe(method: string, route: string, status: number, seconds: number): void {
    let methods = this.series.get(route);
    if (!methods) {
      methods = new Map();
      this.series.set(route, methods);
    }
    let byStatus = methods.get(method);
    if (!byStatus) {
      byStatus = new Map();
      methods.set(method, byStatus);
    }
    let s = byStatus.get(status);
    if (!s) {
      s = {
        labels: `method="${labelValue(method)}",route="${labelValue(route)}",status="${status}"`,
        count: 0,
        sum: 0,
        buckets: new Float64Array(DURATION_BUCKETS.length + 1),
      };
      byStatus.set(status, s);
      this.seen.push(s);
    }
    s.count++;
    s.sum += seconds;
    let b = 0;
    while (b < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[b]!) b++;
    s.buckets[b]!++;
  }

  /** The text exposition of every metric (GET /metrics). */
  async text(): Promise<string> {
    const counter = [
      '# HELP kairos_http_requests_total HTTP requests by route template, method and status',
      '# TYPE kairos_http_requests_total counter',
    ];
    const name = 'kairos_http_request_duration_seconds';
    const histogram = [
      `# HELP ${name} HTTP request latency by route template, method and status`,
      `# TYPE ${name} histogram`,
    ];
    for (const s of this.seen) {
      counter.push(`kairos_http_requests_total{${s.labels}} ${s.count}`);
      let seen = 0;
      for (const [b, le] of DURATION_BUCKETS.entries()) {
        seen += s.buckets[b]!;
        histogram.push(`${name}_bucket{le="${le}",${s.labels}} ${seen}`);
      }
      histogram.push(
        `${name}_bucket{le="+Inf",${s.labels}} ${s.count}`,
        `${name}_sum{${s.labels}} ${s.sum}`,
        `${name}_count{${s.labels}} ${s.count}`,
      );
    }
    // Blocks apart by a blank line, as the registry writes its own (its text ends with a newline).
    return `${await this.registry.metrics()}\n${counter.join('\n')}\n\n${histogram.join('\n')}\n`;
  }
}
