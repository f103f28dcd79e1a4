/** How this process reaches its database; decided in `main.environment.ts` (or by a test) before Nest starts. */
export interface AppOptions {
  databaseUrl: string;
  /** Seed demo orders (and keys) into an empty database: only on the embedded database. */
  seedDemoData?: boolean;
}

export const APP_OPTIONS = Symbol('APP_OPTIONS');
