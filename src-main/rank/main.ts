// The rank process entry (bundled to out/node/rank.mjs). Not built yet.
process.stderr.write('rank: not implemented yet\n');
process.exitCode = 2;
