// With GATEWAY_WORKERS, each worker process counts what it serves, and a scrape lands
// on whichever worker the shared listener hands it to. So a worker answers a scrape
// with the whole machine's figures: it asks the primary, which gathers every worker's
// registry over cluster IPC (prom-client's AggregatorRegistry: counters and histograms
// summed; gauges as each declares, e.g. the ingestion queue, read from the shared
// database by each worker, as its maximum) and sends the text back.
import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';

const SCRAPE = 'gateway-metrics-scrape';
const SCRAPED = 'gateway-metrics-scraped';
/** prom-client gives up on a worker after 5 s; the asking worker waits a little longer. */
const ANSWER_TIMEOUT_MS = 8000;

interface ScrapeMessage {
  type: typeof SCRAPE;
  id: number;
}
interface ScrapedMessage {
  type: typeof SCRAPED;
  id: number;
  body?: string;
  error?: string;
}

/** True in a cluster worker: scrapes go through the primary. */
export const inCluster = (): boolean => cluster.isWorker;

/** In a worker: offers this registry to the primary's gathering (prom-client answers it). */
export function joinCluster(registry: Registry): void {
  AggregatorRegistry.setRegistries(registry);
  // Constructing one installs prom-client's worker-side answer to the primary's requests.
  new AggregatorRegistry();
}

let nextId = 0;
const waiting = new Map<number, { resolve: (body: string) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
let listening = false;

/** In a worker: every worker's figures, as exposition text, gathered by the primary. */
export function scrapeCluster(): Promise<string> {
  if (!listening) {
    listening = true;
    process.on('message', (message: ScrapedMessage) => {
      if (message?.type !== SCRAPED) return;
      const entry = waiting.get(message.id);
      if (!entry) return;
      waiting.delete(message.id);
      clearTimeout(entry.timer);
      if (message.body !== undefined) entry.resolve(message.body);
      else entry.reject(new Error(`The workers' metrics could not be gathered: ${message.error ?? 'no answer'}`));
    });
  }
  const id = ++nextId;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      waiting.delete(id);
      reject(new Error('The primary process did not answer the metrics request.'));
    }, ANSWER_TIMEOUT_MS);
    waiting.set(id, { resolve, reject, timer });
    process.send?.({ type: SCRAPE, id } satisfies ScrapeMessage);
  });
}

/** In the primary: answers the workers' scrapes (GATEWAY_WORKERS with /metrics served). */
export function answerWorkerScrapes(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker: Worker, message: ScrapeMessage) => {
    if (message?.type !== SCRAPE) return;
    const reply = (answer: Omit<ScrapedMessage, 'type' | 'id'>) => {
      if (worker.isConnected()) worker.send({ type: SCRAPED, id: message.id, ...answer } satisfies ScrapedMessage);
    };
    aggregator.clusterMetrics().then(
      (body) => reply({ body }),
      (error: Error) => reply({ error: error.message }),
    );
  });
}
