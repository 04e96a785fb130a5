// Scrapes /metrics and reads it with a Prometheus text-format parser (not our own
// regexes): what a real scraper would accept.
import { createRequire } from 'node:module';

export interface Sample {
  labels?: Record<string, string>;
  value?: string;
  /** Histograms: cumulative counts by upper bound. */
  buckets?: Record<string, string>;
  count?: string;
  sum?: string;
}

export interface Family {
  name: string;
  help: string;
  type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
  metrics: Sample[];
}

const parse = createRequire(import.meta.url)('parse-prometheus-text-format') as (text: string) => Family[];

export class Scrape {
  readonly families: Map<string, Family>;

  constructor(readonly text: string) {
    // The parser throws on any line that is not valid exposition text.
    this.families = new Map(parse(text).map((f) => [f.name, f]));
    // It folds a histogram's series into one and drops their labels (1.1.1 handles only
    // unlabelled histograms), so histograms are read again as plain samples (their TYPE
    // line made `untyped`) and put back together by label set here.
    const flat = parse(text.replace(/^# TYPE (\S+) histogram$/gm, '# TYPE $1 untyped'));
    for (const family of this.families.values()) {
      if (family.type !== 'HISTOGRAM') continue;
      const series = new Map<string, Sample>();
      const of = (labels: Record<string, string> = {}) => {
        const { le: _, ...rest } = labels;
        const key = JSON.stringify(Object.entries(rest).sort());
        let sample = series.get(key);
        if (!sample) {
          sample = { labels: rest, buckets: {} };
          series.set(key, sample);
        }
        return sample;
      };
      for (const part of flat) {
        for (const m of part.metrics) {
          if (part.name === `${family.name}_bucket`) of(m.labels).buckets![m.labels!.le!] = m.value!;
          else if (part.name === `${family.name}_sum`) of(m.labels).sum = m.value!;
          else if (part.name === `${family.name}_count`) of(m.labels).count = m.value!;
        }
      }
      family.metrics = [...series.values()];
    }
  }

  family(name: string): Family {
    const family = this.families.get(name);
    if (!family) throw new Error(`no metric ${name} in the scrape`);
    return family;
  }

  /** The one sample whose labels include `labels`, or undefined. */
  sample(name: string, labels: Record<string, string> = {}): Sample | undefined {
    return this.family(name).metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  }

  /** A counter's or gauge's value (0 when the series does not exist yet). */
  value(name: string, labels: Record<string, string> = {}): number {
    return Number(this.sample(name, labels)?.value ?? 0);
  }

  /** A histogram series' observation count (0 when it does not exist yet). */
  count(name: string, labels: Record<string, string> = {}): number {
    return Number(this.sample(name, labels)?.count ?? 0);
  }
}
