// Serves the built renderer's files, and nothing outside its folder.
import fs from 'node:fs';
import path from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
};

export interface StaticFile {
  body: Buffer;
  type: string;
  /** The file's path under the root, '/'-separated: what was actually resolved, whatever spelling the URL used. */
  relPath: string;
}

/** Resolves a URL path inside `root`; null for anything that escapes it or does not exist. */
export function readStatic(root: string, urlPath: string): StaticFile | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (decoded.includes('\0')) return null;
  const rootAbs = path.resolve(root);
  const full = path.resolve(rootAbs, '.' + path.posix.normalize('/' + decoded));
  if (full !== rootAbs && !full.startsWith(rootAbs + path.sep)) return null;
  let stat: fs.Stats;
  try {
    stat = fs.statSync(full);
  } catch {
    return null;
  }
  if (!stat.isFile()) return null;
  return {
    body: fs.readFileSync(full),
    type: TYPES[path.extname(full)] ?? 'application/octet-stream',
    relPath: path.relative(rootAbs, full).split(path.sep).join('/'),
  };
}
