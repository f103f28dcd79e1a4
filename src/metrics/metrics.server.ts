import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { httpSettings, type HttpSettings } from '../common/http/http.settings';
import { metricsSettings, type MetricsSettings } from './metrics.settings';
import { MetricsService } from './metrics.service';

/**
 * Serves `GET /metrics` on its own port (METRICS_PORT), never on the API's: scrapers reach it on
 * the internal network, while the load balancer publishes only the API port. Without
 * METRICS_PORT nothing listens. It binds HOST's address, as the API does.
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private server?: Server;

  constructor(
    @Inject(metricsSettings.KEY) private readonly settings: MetricsSettings,
    @Inject(httpSettings.KEY) private readonly http: HttpSettings,
    private readonly metrics: MetricsService,
    @InjectPinoLogger(MetricsServer.name) private readonly logger: PinoLogger,
  ) {}

  /** The port actually listened on (METRICS_PORT=0 picks a free one); undefined when off. */
  get port(): number | undefined {
    return (this.server?.address() as AddressInfo | null)?.port;
  }

  async onApplicationBootstrap(): Promise<void> {
    const port = this.settings.METRICS_PORT;
    if (port === undefined) return;
    // On HOST's address like the API (undefined: every interface), never wider than it.
    const host = this.http.HOST;
    const server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    this.logger.info(
      { address: host ?? '*' },
      `Prometheus metrics on port ${this.port ?? port} at /metrics`,
    );
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not found: GET /metrics\n');
      return;
    }
    try {
      const body = await this.metrics.render();
      res.writeHead(200, { 'Content-Type': this.metrics.contentType }).end(body);
    } catch (err) {
      this.logger.error({ err }, 'metrics could not be collected');
      res.writeHead(500, { 'Content-Type': 'text/plain' }).end('metrics could not be collected\n');
    }
  }
}
