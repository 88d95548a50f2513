// Serves the built renderer's files, and nothing outside its folder: no path
// that escapes it, and no symbolic link anywhere below it (a link in the
// built assets could otherwise point at any file this user can read). Both
// transports use it: browser mode's HTTP server and Electron's app:// protocol.
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

/** True when some component of `rel` below `rootReal` is a symbolic link (or cannot be examined). */
function crossesLink(rootReal: string, rel: string): boolean {
  let cur = rootReal;
  for (const part of rel.split(path.sep)) {
    if (!part) continue;
    cur = path.join(cur, part);
    try {
      if (fs.lstatSync(cur).isSymbolicLink()) return true;
    } catch {
      return true;
    }
  }
  return false;
}

/** Resolves a URL path inside `root`; null for anything that escapes it, crosses a link or does not exist. */
export function readStatic(root: string, urlPath: string): StaticFile | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (decoded.includes('\0')) return null;
  // The root itself may sit below a link (a symlinked checkout): judge paths from its real location.
  let rootAbs: string;
  try {
    rootAbs = fs.realpathSync(root);
  } catch {
    return null;
  }
  const full = path.resolve(rootAbs, '.' + path.posix.normalize('/' + decoded));
  if (full === rootAbs || !full.startsWith(rootAbs + path.sep)) return null;
  const rel = path.relative(rootAbs, full);
  if (crossesLink(rootAbs, rel)) return null;
  // The last component is opened without following a link even if one
  // appeared since the check, and the stat is of the file actually opened.
  let fd: number;
  try {
    fd = fs.openSync(full, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
  } catch {
    return null;
  }
  try {
    if (!fs.fstatSync(fd).isFile()) return null;
    return {
      body: fs.readFileSync(fd),
      type: TYPES[path.extname(full)] ?? 'application/octet-stream',
      relPath: rel.split(path.sep).join('/'),
    };
  } catch {
    return null;
  } finally {
    fs.closeSync(fd);
  }
}
