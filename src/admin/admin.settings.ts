import type { ConfigType } from '@nestjs/config';
import { Transform } from 'class-transformer';
import { IsInt, IsIP, IsOptional, Max, Min } from 'class-validator';
import { defineSettings, toInt, validateSettings } from '../config/settings';

/** The admin API's own environment variables. */
export class AdminSettingsSchema {
  /**
   * The port of the admin API's own listener; unset, there is no admin API at all. 0 picks a
   * free port (tests).
   */
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'ADMIN_PORT must be an integer between 0 and 65535' })
  @Min(0, { message: 'ADMIN_PORT must be an integer between 0 and 65535' })
  @Max(65535, { message: 'ADMIN_PORT must be an integer between 0 and 65535' })
  ADMIN_PORT?: number;

  /** The address the admin listener binds: loopback unless an operator widens it on purpose. */
  @IsIP(undefined, { message: 'ADMIN_HOST must be an IP address, e.g. 127.0.0.1 or ::1' })
  ADMIN_HOST: string = '127.0.0.1';
}

export const adminSettings = defineSettings('admin', AdminSettingsSchema);
export type AdminSettings = ConfigType<typeof adminSettings>;

/** Where the admin listener binds in this environment, or undefined when it is off. */
export function adminListenerOf(
  env: Record<string, unknown>,
): { port: number; host: string } | undefined {
  const settings = validateSettings(AdminSettingsSchema, env);
  return settings.ADMIN_PORT === undefined
    ? undefined
    : { port: settings.ADMIN_PORT, host: settings.ADMIN_HOST };
}
