// Where `relay-lab calibrate` writes and the model reads by default (documented
// in docs/model.md): $XDG_CONFIG_HOME/relay-lab/calibration.json, else
// ~/.config/relay-lab/calibration.json. Pure: the caller passes env and home.
export function defaultCalibrationPath(env: Record<string, string | undefined>, home: string): string {
  const base =
    env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.startsWith('/') ? env.XDG_CONFIG_HOME : `${home}/.config`;
  return `${base}/relay-lab/calibration.json`;
}
