import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** The repository's root, where README.md is. */
export const REPO_ROOT = resolve(__dirname, '../..');

/** README.md and every page under docs/, as paths relative to the repository root. */
export function documentationFiles(): string[] {
  const pages = readdirSync(join(REPO_ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md'))
    .map((name) => join('docs', name));
  return ['README.md', ...pages.sort()];
}

export function read(file: string): string {
  return readFileSync(join(REPO_ROOT, file), 'utf8');
}

/** The lines of a Markdown text outside fenced code blocks (their numbers kept, 1-based). */
function proseLines(text: string): { line: string; number: number }[] {
  const out: { line: string; number: number }[] = [];
  let fence: string | undefined;
  text.split('\n').forEach((line, index) => {
    const marker = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (marker !== undefined) {
      if (fence === undefined) fence = marker[0];
      else if (marker.startsWith(fence)) fence = undefined;
      return;
    }
    if (fence === undefined) out.push({ line, number: index + 1 });
  });
  return out;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function githubSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Every anchor a file's headings give, numbered as GitHub numbers repeated ones. */
export function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const { line } of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = githubSlug(heading);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

export interface Link {
  file: string;
  line: number;
  target: string;
}

/** Links to other files of the repository or to anchors (web links are not followed). */
export function relativeLinks(file: string): Link[] {
  const links: Link[] = [];
  for (const { line, number } of proseLines(read(file))) {
    const withoutCode = line.replace(/`[^`]*`/g, '');
    for (const match of withoutCode.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = match[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: ...
      links.push({ file, line: number, target });
    }
  }
  return links;
}

/** Why a link does not resolve, or undefined when it does. */
export function brokenReason(link: Link, exists: (path: string) => boolean): string | undefined {
  const [path, anchor] = link.target.split('#', 2) as [string, string | undefined];
  const targetFile =
    path === '' ? link.file : relative(REPO_ROOT, resolve(REPO_ROOT, dirname(link.file), path));
  if (path !== '' && !exists(targetFile)) return `no file ${targetFile}`;
  if (anchor === undefined || anchor === '') return undefined;
  if (!targetFile.endsWith('.md')) return undefined;
  return anchorsOf(read(targetFile)).has(decodeURIComponent(anchor))
    ? undefined
    : `no heading for #${anchor} in ${targetFile}`;
}

/** The rows of every Markdown table in a text, as arrays of trimmed cells (header rows included). */
export function tableRows(text: string): string[][] {
  return proseLines(text)
    .map(({ line }) => line.trim())
    .filter((line) => line.startsWith('|') && !/^\|[\s:|-]+\|$/.test(line))
    .map((line) =>
      line
        .slice(1, line.endsWith('|') ? -1 : undefined)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    );
}

/** One command of a shell session in the docs, and the output lines shown after it. */
export interface SessionStep {
  command: string;
  expected: string[];
}

/**
 * The steps of a ```sh block: a command (continued over lines ending in `\`), then the `# `
 * comment lines right after it, which show its answer. A comment after a blank line describes
 * the next command instead.
 */
export function sessionSteps(block: string): SessionStep[] {
  const steps: SessionStep[] = [];
  const lines = block.split('\n');
  let current: SessionStep | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.trim() === '') {
      current = undefined;
    } else if (/^\s*#/.test(line)) {
      current?.expected.push(line.replace(/^\s*#\s?/, ''));
    } else {
      let command = line;
      while (command.endsWith('\\') && i + 1 < lines.length) command += `\n${lines[++i]}`;
      current = { command, expected: [] };
      steps.push(current);
    }
  }
  return steps;
}

/** The fenced ```sh blocks that follow a heading, up to the next heading. */
export function shellBlocksUnder(text: string, heading: string): string[] {
  const start = text
    .split('\n')
    .findIndex((line) => /^#{1,6}\s/.test(line) && line.includes(heading));
  if (start < 0) return [];
  const blocks: string[] = [];
  const lines = text.split('\n').slice(start + 1);
  let block: string[] | undefined;
  for (const line of lines) {
    if (block === undefined && /^#{1,6}\s/.test(line)) break;
    if (block === undefined && /^```(sh|bash|shell)\s*$/.test(line)) block = [];
    else if (block !== undefined && /^```\s*$/.test(line)) {
      blocks.push(block.join('\n'));
      block = undefined;
    } else block?.push(line);
  }
  return blocks;
}
