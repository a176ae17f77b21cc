/**
 * Bookable times for load: a host's weekday half-hour slots 09:00–16:30 UTC (the default working
 * hours, in a UTC host's zone) from three days ahead on, each once, within the default 60 days of
 * bookable future. Throws when a load has used them all (spread it over more hosts).
 */
export function* weekdaySlots(): Generator<string> {
  const day = new Date(Date.now() + 3 * 86_400_000);
  day.setUTCHours(0, 0, 0, 0);
  for (let d = 0; d < 55; d++) {
    if (day.getUTCDay() !== 0 && day.getUTCDay() !== 6) {
      for (let half = 18; half < 34; half++) yield new Date(day.getTime() + half * 1_800_000).toISOString();
    }
    day.setUTCDate(day.getUTCDate() + 1);
  }
  throw new Error('the load used up a host’s bookable slots: spread it over more hosts');
}

/**
 * The first `weekday` (0 Sunday … 6 Saturday) at least two days after now, at `hour`:00 UTC: a time
 * inside the default Mon–Fri 09–17 for servers that run on the real clock.
 */
export function nextWeekdayAt(weekday: number, hour: number): Date {
  const d = new Date(Date.now() + 2 * 86_400_000);
  d.setUTCHours(hour, 0, 0, 0);
  while (d.getUTCDay() !== weekday) d.setUTCDate(d.getUTCDate() + 1);
  return d;
}
