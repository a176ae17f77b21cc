import type pg from 'pg';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** Prometheus metrics of one app instance (its own registry, so tests can build many apps). */
export class Metrics {
  readonly registry = new Registry();
  readonly requests: Counter<'method' | 'route' | 'status'>;
  readonly duration: Histogram<'method' | 'route' | 'status'>;
  /** Availability answers by kind (slots, next) and outcome (remembered, computed). */
  readonly availabilityAnswers: Counter<'kind' | 'outcome'>;

  constructor(pool: pg.Pool) {
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: 'kairos_http_requests_total',
      help: 'HTTP requests by route template, method and status',
      labelNames: ['method', 'route', 'status'],
      registers: [this.registry],
    });
    this.duration = new Histogram({
      name: 'kairos_http_request_duration_seconds',
      help: 'HTTP request latency by route template, method and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [this.registry],
    });
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

  /** Bound children per (method, route, status): label hashing once, not twice per request. */
  private readonly children = new Map<
    string,
    { count: { inc(): void }; time: { observe(v: number): void } }
  >();

  observe(method: string, route: string, status: number, seconds: number): void {
    const k = `${method} ${status} ${route}`;
    let c = this.children.get(k);
    if (!c) {
      const labels = { method, route, status: String(status) };
      c = { count: this.requests.labels(labels), time: this.duration.labels(labels) };
      this.children.set(k, c);
    }
    c.count.inc();
    c.time.observe(seconds);
  }
}
