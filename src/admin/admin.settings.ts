import type { ConfigType } from '@nestjs/config';
import { defineSettings, integer, ip } from '../config/settings';

/** The admin API's own environment variables. */
export const adminSettings = defineSettings('admin', {
  ADMIN_PORT: {
    rule: integer({ min: 0, max: 65535 }),
    description:
      "port of the [admin API](keys.md#admin-api)'s own listener (0: any free port); unset: no admin API at all. The API's port never serves `/admin`",
  },
  ADMIN_HOST: {
    rule: ip({ examples: ['127.0.0.1', '::1'] }),
    default: '127.0.0.1',
    description:
      'IP address the admin listener binds: loopback, or a private interface; never one the public proxy forwards to ([Security](security.md#admin-listener))',
  },
});
export type AdminSettings = ConfigType<typeof adminSettings>;

/** Where the admin listener binds in this environment, or undefined when it is off. */
export function adminListenerOf(
  env: Record<string, unknown>,
): { port: number; host: string } | undefined {
  const settings = adminSettings.read(env);
  return settings.ADMIN_PORT === undefined
    ? undefined
    : { port: settings.ADMIN_PORT, host: settings.ADMIN_HOST };
}
