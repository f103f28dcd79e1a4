import { Global, Injectable, Module } from '@nestjs/common';

/**
 * The wall clock (ms since the epoch) of what lasts minutes: the rate limits' windows and bans,
 * and how often a key's last use is written. One instance per application, injected, so that a
 * test drives it past a window instead of waiting the window out.
 */
@Injectable()
export class Clock {
  now(): number {
    return Date.now();
  }
}

/** The application's one `Clock`, for every module (the admin application is given the same). */
@Global()
@Module({ providers: [Clock], exports: [Clock] })
export class ClockModule {}
