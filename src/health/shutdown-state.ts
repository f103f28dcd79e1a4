import { BeforeApplicationShutdown, Injectable } from '@nestjs/common';

/**
 * Whether this process has begun to shut down. The shutdown (`main.shutdown.ts`) flips it as
 * soon as a signal arrives, before the listener closes, so readiness answers 503 while in-flight
 * requests drain; `app.close()` alone (as in the tests) flips it too.
 */
@Injectable()
export class ShutdownState implements BeforeApplicationShutdown {
  private shuttingDown = false;

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  begin(): void {
    this.shuttingDown = true;
  }

  beforeApplicationShutdown(): void {
    this.begin();
  }
}
