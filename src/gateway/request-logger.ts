// The logger Fastify gives each request (`request.log`, `reply.log`): the app's
// redacting logger with the request's correlation id bound.
//
// Fastify makes that child for every request, but most requests never log through it:
// the access line has a logger of its own, and the request logger is for warnings and
// errors. A pino child of a redacting logger is not free either: it runs its bindings
// through the redaction, about 2 KB of garbage per request (heap sampling, saturated
// chat/completions). So the request gets this stand-in, which makes the real child
// the first time a line is logged; the lines are the same.
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
import type { Bindings, ChildLoggerOptions, LevelWithSilentOrString } from 'pino';

/** What a pino log method takes: an object or message first, then format arguments. */
type LogArgs = [objectOrMessage: unknown, message?: string, ...args: unknown[]];

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
type Level = (typeof LEVELS)[number];

// The log methods, added to the prototype by the class's static block: declared by
// merging this interface into the class, which TypeScript allows for exactly this.
// biome-ignore lint/correctness/noUnusedVariables: merged into the class below
interface RequestLogger extends Record<Level, (...args: LogArgs) => void> {}

// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the static block defines every method the interface declares
class RequestLogger implements FastifyBaseLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  // On the prototype, not arrow fields: nothing allocated per request but the stand-in itself.
  static {
    for (const level of LEVELS) {
      RequestLogger.prototype[level] = function (this: RequestLogger, ...args: LogArgs) {
        const logger = this.logger;
        (logger[level] as (...args: LogArgs) => void).apply(logger, args);
      };
    }
  }

  /** The real child, made on first use. */
  private get logger(): FastifyBaseLogger {
    this.made ??= this.parent.child(this.bindings, this.options);
    return this.made;
  }

  get level(): LevelWithSilentOrString {
    return this.made?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: LevelWithSilentOrString) {
    this.logger.level = level;
  }

  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: the request's logger, made when first used. */
export const requestLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (logger, bindings, options) =>
  new RequestLogger(logger, bindings, options);
