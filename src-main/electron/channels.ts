// IPC channel names, shared by the main process and the preload.
export const COMMAND_CHANNEL = 'relay-lab:command';
export const EVENTS_CHANNEL = 'relay-lab:events';
