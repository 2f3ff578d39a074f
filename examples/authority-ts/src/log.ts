// One JSON object a line on stdout: what an operator greps and what the
// end-to-end test reads.
export function log(msg: string, fields: Record<string, unknown> = {}): void {
  process.stdout.write(JSON.stringify({ time: new Date().toISOString(), msg, ...fields }) + '\n');
}

export function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
