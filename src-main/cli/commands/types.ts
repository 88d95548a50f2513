export interface Command {
  summary: string;
  /** Returns the exit code. Throws UsageError for bad flags (exit 2). */
  run(argv: string[]): Promise<number>;
}
