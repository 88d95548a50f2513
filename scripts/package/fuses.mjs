// The Electron fuses a packaged Relay Lab ships with, and the step that
// burns them into a packaged binary (@electron/fuses). Fuses are bits in the
// Electron binary itself, read before any app code runs:
//  - RunAsNode off: ELECTRON_RUN_AS_NODE cannot turn the app into a plain
//    Node interpreter (ranks run as utility processes, not that way);
//  - NODE_OPTIONS and --inspect/--inspect-brk off: no code or debugger
//    injected through the environment or the command line;
//  - cookie encryption on;
//  - ASAR integrity on, and only load the app from app.asar: the code that
//    runs is the code that was packaged (integrity is enforced on macOS and
//    Windows; Linux has no embedded hash to check against);
//  - no browser-process-specific V8 snapshot, and file:// gets no extra
//    privileges (the window loads from app://).
import fs from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { flipFuses, getCurrentFuseWire, FuseV1Options, FuseVersion } = require('@electron/fuses');

export { FuseV1Options };

/** Every fuse named, so a fuse added by a later Electron fails the step until it is decided here. */
export const FUSES = {
  version: FuseVersion.V1,
  strictlyRequireAllFuses: true,
  [FuseV1Options.RunAsNode]: false,
  [FuseV1Options.EnableCookieEncryption]: true,
  [FuseV1Options.EnableNodeOptionsEnvironmentVariable]: false,
  [FuseV1Options.EnableNodeCliInspectArguments]: false,
  [FuseV1Options.EnableEmbeddedAsarIntegrityValidation]: true,
  [FuseV1Options.OnlyLoadAppFromAsar]: true,
  [FuseV1Options.LoadBrowserProcessSpecificV8Snapshot]: false,
  [FuseV1Options.GrantFileProtocolExtraPrivileges]: false,
};

export class PackagingError extends Error {}

/** The fuse file inside a packaged app: the binary itself, or the framework inside a macOS .app. */
function fuseFile(binary) {
  const m = /^(.*\.app)(\/|$)/.exec(binary);
  return m ? `${m[1]}/Contents/Frameworks/Electron Framework.framework/Electron Framework` : binary;
}

/**
 * Burns FUSES into the packaged Electron binary at `binary` (or a macOS
 * .app), then reads them back and checks every one. Throws PackagingError
 * with a plain reason when there is no binary or it has no fuse wire.
 */
export async function applyFuses(binary) {
  if (!binary) throw new PackagingError('name the packaged Electron binary to apply the fuses to');
  const file = fuseFile(binary);
  if (!fs.existsSync(file))
    throw new PackagingError(
      `no Electron binary at ${binary}: package the app first (npm run package), then apply the fuses to its executable`,
    );
  if (!fs.statSync(file).isFile()) throw new PackagingError(`${file} is not a file`);
  try {
    await flipFuses(binary, { ...FUSES, resetAdHocDarwinSignature: process.platform === 'darwin' });
  } catch (e) {
    throw new PackagingError(`cannot set the fuses of ${binary}: ${e.message}`);
  }
  const wire = await getCurrentFuseWire(binary);
  const wrong = Object.entries(FUSES)
    .filter(([k]) => /^\d+$/.test(k))
    .filter(([k, on]) => wire[k] !== (on ? 49 : 48))
    .map(([k]) => FuseV1Options[k]);
  if (wrong.length) throw new PackagingError(`fuses not set as configured: ${wrong.join(', ')}`);
  return Object.fromEntries(
    Object.entries(FUSES)
      .filter(([k]) => /^\d+$/.test(k))
      .map(([k, on]) => [FuseV1Options[k], on]),
  );
}
