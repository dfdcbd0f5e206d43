export interface TimerLoopOptions {
  /** How often the work runs (ms). */
  intervalMs: number;
  /** One run of the work; a promise is awaited before the next run starts. */
  run: () => unknown;
  /** Where a run's error goes (a log line): it is never thrown, and the loop goes on. */
  onError: (error: unknown) => void;
}

/**
 * Background work that runs every `intervalMs`, and at once when woken: the webhook dispatcher's polls and
 * retention, the comment stream hub's heartbeats, session checks and retention. One run at a time: a tick or a
 * wake-up that comes during a run makes one more run right after it (however many came). A run's error goes to
 * `onError` and the loop goes on. Its timer is unref'd, so it never keeps the process alive. A loop that is not
 * started, or is stopped, does not run.
 *
 * @example
 * const loop = new TimerLoop({ intervalMs: 1000, run: () => drain(), onError: (error) => log.error({ err: error }, 'drain failed') });
 * loop.start();
 * loop.wake(); // something is due now: no need to wait for the next tick
 * await loop.stop();
 */
export class TimerLoop {
  readonly #options: TimerLoopOptions;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  #stopped = false;

  constructor(options: TimerLoopOptions) {
    this.#options = options;
  }

  /** Starts ticking (a second call does nothing); the first run is a tick away, or sooner with `wake()`. */
  start(): void {
    if (this.#timer !== undefined || this.#stopped) return;
    this.#timer = setInterval(() => this.wake(), this.#options.intervalMs);
    this.#timer.unref();
  }

  /** Runs now, or right after the run under way. */
  wake(): void {
    if (this.#timer === undefined || this.#stopped) return;
    if (this.#running !== undefined) {
      this.#again = true;
      return;
    }
    this.#running = this.#runOnce().finally(() => {
      this.#running = undefined;
      if (this.#again) {
        this.#again = false;
        this.wake();
      }
    });
  }

  /** Stops ticking and waking; resolves once the run under way, if any, has finished. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#running;
  }

  async #runOnce(): Promise<void> {
    try {
      await this.#options.run();
    } catch (error) {
      this.#options.onError(error);
    }
  }
}
