// `node scripts/package/apply-fuses.mjs PATH`: burns Relay Lab's fuses
// (fuses.mjs) into a packaged Electron binary and prints them. Exit 1 with
// one plain line when there is no binary or it cannot be changed.
import { applyFuses, PackagingError } from './fuses.mjs';

try {
  const set = await applyFuses(process.argv[2]);
  process.stdout.write(`relay-lab package: fuses set on ${process.argv[2]}:\n`);
  for (const [name, on] of Object.entries(set)) process.stdout.write(`  ${name}: ${on ? 'on' : 'off'}\n`);
} catch (e) {
  if (!(e instanceof PackagingError)) throw e;
  process.stderr.write(`relay-lab package: ${e.message}\n`);
  process.exit(1);
}
