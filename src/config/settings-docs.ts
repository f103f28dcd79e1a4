import { loadSettingsDeclarations } from './environment';
import { withGeneratedSection } from './generated-section';
import { declaredSettings, type Setting } from './settings';

function defaultOf(setting: Setting<unknown>): string {
  if (setting.default === undefined) return 'unset';
  // A secret's default is never printed, here or anywhere.
  if (setting.sensitive) return 'hidden';
  const value = setting.default;
  // A list is shown as it is written in the environment: comma-separated.
  const text = Array.isArray(value)
    ? value.join(',')
    : typeof value === 'string'
      ? value
      : JSON.stringify(value);
  return `\`${text}\``;
}

/**
 * The tables of every module's variables (name, default, whether secret, description), one per
 * settings namespace, from the declarations under src/ (`<module>.settings.ts`).
 */
export function settingsTables(): string {
  loadSettingsDeclarations();
  return declaredSettings()
    .map(({ namespace, settings }) =>
      [
        `### ${namespace}`,
        '',
        '| variable | default | secret | meaning |',
        '|---|---|---|---|',
        ...Object.entries(settings).map(
          ([name, setting]) =>
            `| \`${name}\` | ${defaultOf(setting)} | ${setting.sensitive ? 'yes' : ''} | ${setting.description} |`,
        ),
      ].join('\n'),
    )
    .join('\n\n');
}

/** The document with its tables replaced by those generated now. */
export function withSettingsTables(document: string): string {
  return withGeneratedSection(document, 'settings', settingsTables());
}
