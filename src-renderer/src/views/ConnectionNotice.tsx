// What the window says when it loses its lab (browser mode): reconnecting,
// the lab stopped, or the lab was restarted with a new token, which this tab
// can never use, with where to find the new address.
import type { ConnectionState } from '../bridge/ws-bridge';

export function ConnectionNotice({ state }: { state: ConnectionState }) {
  const here = typeof window === 'undefined' ? '' : window.location.host;
  if (state === 'closed')
    return (
      <div className="error-bar" role="alert" data-connection="closed">
        Lost the connection to the lab; checking whether it is still running…
      </div>
    );
  if (state === 'stopped')
    return (
      <div className="error-bar" role="alert" data-connection="stopped">
        The lab is not running: nothing answers at {here}. Start it again with <code>npm start</code> and open
        the address it prints (each launch has a new token). This tab keeps checking this address.
      </div>
    );
  if (state === 'restarted')
    return (
      <div className="error-bar" role="alert" data-connection="restarted">
        The lab was restarted: the lab at {here} is a new launch with a new token, and this tab holds the
        earlier one, so it will not reconnect. Open the address the new launch printed in its terminal (the
        line after &ldquo;Open:&rdquo;, starting <code>http://127.0.0.1:</code>…<code>/?token=</code>).
      </div>
    );
  return null;
}
