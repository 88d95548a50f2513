// The preload: the one bridge between the sandboxed window and the main
// process. It exposes exactly the LabApi (command, subscribe) and passes
// nothing else through: no ipcRenderer, no Node.
import type { AnyCommand, LabBatch, LabReply } from '@shared/lab/contract';
import type { ElectronPreload, PreloadBridge } from './electron-api';
import { COMMAND_CHANNEL, EVENTS_CHANNEL } from './channels';

// Sandboxed preloads are CommonJS and may require only 'electron'; the
// package is optional (its types may be absent), hence require + local types.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { contextBridge, ipcRenderer } = require('electron') as ElectronPreload;

const bridge: PreloadBridge = {
  command: (cmd: AnyCommand) => ipcRenderer.invoke(COMMAND_CHANNEL, cmd) as Promise<LabReply>,
  subscribe(listener: (batch: LabBatch) => void) {
    const onEvents = (_event: unknown, batch: unknown) => listener(batch as LabBatch);
    ipcRenderer.on(EVENTS_CHANNEL, onEvents);
    return () => ipcRenderer.removeListener(EVENTS_CHANNEL, onEvents);
  },
};

contextBridge.exposeInMainWorld('relayLab', bridge);
