// tcpdump started as root drops to the `tcpdump` user once it has opened the
// device, and a change of user clears the parent-death signal spawnTied set:
// a capture whose parent died (a test run cut short, a killed bench) went on
// running for good. `-Z root` keeps it the user it was started as, so it dies
// with its parent. Not root, it changes no user and needs nothing.
export function tcpdumpKeepUser(): string[] {
  return process.getuid?.() === 0 ? ['-Z', 'root'] : [];
}
