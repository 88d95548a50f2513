// The page a person sees when they open browser mode without this launch's
// token (a bookmark, a URL typed by hand, a tab left from an earlier launch):
// a short explanation of where the right URL is, instead of bare text. It
// holds no token and nothing of the lab, and needs no script or style, so
// the strict CSP still applies.
export function tokenPage(opts: { port: number; presented: boolean }): string {
  const why = opts.presented
    ? 'The token in this address is not this launch&rsquo;s: the lab was restarted, or the address was copied from an earlier launch.'
    : 'This address has no token. Every launch of the lab makes a new one and only answers the address that carries it.';
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">',
    '<title>Relay Lab: open the address from the terminal</title></head><body>',
    '<h1>Relay Lab needs the address it printed</h1>',
    `<p>${why}</p>`,
    '<p>Look in the terminal where you ran <code>npm start</code>: under ',
    '&ldquo;Relay Lab is running in browser mode. Open:&rdquo; is a line that starts with ',
    `<code>http://127.0.0.1:${opts.port}/?token=</code>. Open that whole address.</p>`,
    '<p>If the lab is no longer running, start it again with <code>npm start</code> and use the new address.</p>',
    '</body></html>',
    '',
  ].join('\n');
}
