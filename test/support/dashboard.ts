import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

const ROOT = join(__dirname, '..', '..');

export interface DashboardPanel {
  title: string;
  unit: string;
  targets: { expr: string; legendFormat: string }[];
}

/** The panels of the Grafana dashboard (docker/grafana/dashboards/store-orders.json). */
export function dashboardPanels(): DashboardPanel[] {
  const dashboard = JSON.parse(
    readFileSync(join(ROOT, 'docker/grafana/dashboards/store-orders.json'), 'utf8'),
  ) as {
    panels: {
      title: string;
      fieldConfig: { defaults: { unit: string } };
      targets: { expr: string; legendFormat: string }[];
    }[];
  };
  return dashboard.panels.map((p) => ({
    title: p.title,
    unit: p.fieldConfig.defaults.unit,
    targets: p.targets.map(({ expr, legendFormat }) => ({ expr, legendFormat })),
  }));
}

/**
 * A panel's expression as Grafana sends it to Prometheus: its `$__rate_interval` replaced by a
 * window (Grafana's is at least four scrape intervals).
 */
export function asSentByGrafana(expr: string, rateInterval: string): string {
  const expanded = expr.replaceAll('$__rate_interval', rateInterval);
  if (expanded.includes('$')) throw new Error(`a Grafana variable this does not expand: ${expr}`);
  return expanded;
}

export interface AlertRule {
  alert: string;
  expr: string;
}

/** The alert rules (docker/prometheus/alerts.yml). */
export function alertRules(): AlertRule[] {
  const file = parse(readFileSync(join(ROOT, 'docker/prometheus/alerts.yml'), 'utf8')) as {
    groups: { rules: AlertRule[] }[];
  };
  return file.groups.flatMap((g) => g.rules);
}
