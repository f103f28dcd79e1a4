/**
 * docs/architecture.md's drawing of the folders of src/ ("Folder dependencies"): a graph of what
 * may import what, reduced to the arrows no other path implies, and a table of each folder's
 * allowed imports, both from scripts/folders.cjs (the lint's source). Written by
 * `npm run generate`; a test fails while the committed drawing is stale.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { withGeneratedSection } from '../src/config/generated-section';

interface Folders {
  LAYERS: Record<string, string[]>;
  FEATURES_MAY_IMPORT: string[];
  DECLARATIONS: string[];
}

// A CommonJS file shared with .dependency-cruiser.cjs, which reads no TypeScript.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { LAYERS, FEATURES_MAY_IMPORT, DECLARATIONS } = require('./folders.cjs') as Folders;

const SRC = join(__dirname, '..', 'src');
const MAIN = 'main';
const APP = 'app';
const FEATURES = 'features';

/** The feature modules: every folder of src/ that is not a layer. */
export function featureFolders(src: string = SRC): string[] {
  return readdirSync(src, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !(entry.name in LAYERS))
    .map((entry) => entry.name)
    .sort();
}

/** Who may import whom, with main.* above everything and the application above the features. */
function mayImport(features: string[]): Map<string, string[]> {
  const edges = new Map<string, string[]>();
  const named = (to: string): string => (features.includes(to) ? FEATURES : to);
  for (const [from, allowed] of Object.entries(LAYERS)) edges.set(from, allowed.map(named));
  edges.set(FEATURES, [...FEATURES_MAY_IMPORT]);
  // The keys tool (cli/) is a program of its own: the application never loads it.
  const everything = [
    ...Object.keys(LAYERS).filter((name) => name !== 'admin' && name !== 'cli'),
    FEATURES,
  ];
  edges.set(APP, everything);
  edges.set(MAIN, ['admin', APP, ...everything]);
  return edges;
}

/** The arrows no longer path implies (a transitive reduction: the graph is acyclic). */
function reduced(edges: Map<string, string[]>): [string, string][] {
  const reach = (from: string, seen = new Set<string>()): Set<string> => {
    for (const to of edges.get(from) ?? []) {
      if (!seen.has(to)) {
        seen.add(to);
        reach(to, seen);
      }
    }
    return seen;
  };
  const arrows: [string, string][] = [];
  for (const [from, tos] of edges) {
    for (const to of tos) {
      const implied = tos.some((other) => other !== to && reach(other).has(to));
      if (!implied) arrows.push([from, to]);
    }
  }
  return arrows;
}

const id = (name: string): string => name.replace(/[^a-z]/g, '_');

function label(name: string, features: string[]): string {
  if (name === MAIN) return 'main.ts, main.*.ts';
  if (name === APP) return 'app.module.ts, app.setup.ts';
  if (name === FEATURES) return `features: ${features.map((f) => `${f}/`).join(', ')}`;
  return name;
}

const folderName = (name: string): string => (name === APP ? '`app.setup.ts`' : `\`${name}/\``);

/** The graph and the table, as docs/architecture.md shows them. */
export function folderDrawing(features: string[] = featureFolders()): string {
  const arrows = reduced(mayImport(features));
  const nodes = new Set(arrows.flat());
  const graph = [
    '```mermaid',
    'graph TD',
    ...[...nodes]
      .filter((name) => label(name, features) !== id(name))
      .map((name) => `  ${id(name)}["${label(name, features)}"]`),
    ...arrows.map(([from, to]) => `  ${id(from)} --> ${id(to)}`),
    '```',
  ];
  const list = (names: string[]): string =>
    names.length ? names.map(folderName).join(', ') : 'nothing of the application';
  const table = [
    '| folder | may import |',
    '|---|---|',
    ...Object.entries(LAYERS).map(([name, allowed]) => `| \`${name}/\` | ${list(allowed)} |`),
    `| every other folder, a feature (${features.map((f) => `\`${f}/\``).join(', ')}) | ` +
      `${list(FEATURES_MAY_IMPORT)}; of another feature only its ` +
      `${DECLARATIONS.map((kind) => `\`*.${kind}.ts\``).join(', ')} |`,
  ];
  return [...graph, '', ...table].join('\n');
}

/** docs/architecture.md with its drawing of the folders as they are now. */
export function withFolderDrawing(document: string): string {
  return withGeneratedSection(document, 'folders', folderDrawing());
}
