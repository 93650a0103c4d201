/** CLI output: one JSON object with --json, otherwise readable lines. Usage errors exit 2. */

export class UsageError extends Error {}

export function print(json: boolean, value: Record<string, unknown>, human: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${human}\n`);
}
