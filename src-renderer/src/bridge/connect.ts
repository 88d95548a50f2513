// Picks the transport: the Electron preload's bridge when present, else the
// browser-mode WebSocket. Views never know which one they talk to.
import type { LabApi } from '@shared/lab/contract';
import { WebSocketLabApi, webSocketUrlFor, type ConnectionState } from './ws-bridge';

declare global {
  interface Window {
    /** Exposed by the Electron preload (src-main/electron/preload.ts). */
    relayLab?: LabApi;
  }
}

export function connectLab(onState: (s: ConnectionState) => void): LabApi | null {
  if (window.relayLab) {
    onState('open');
    return window.relayLab;
  }
  const url = webSocketUrlFor(window.location);
  if (!url) {
    onState('closed');
    return null;
  }
  return new WebSocketLabApi(url, onState);
}
