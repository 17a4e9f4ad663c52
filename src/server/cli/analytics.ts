/**
 * npm run analytics -- report [--days N]: what the embedded data plane stored over the last N days (default 7):
 * events per day and name, where the app was started from ('load' by app type, SPEC §3) and the top pages.
 */
import { parseArgs } from 'node:util';
import { analyticsReport, type AnalyticsReport } from '../domain/analytics.ts';
import { openTool, toolFail } from './tool.ts';

const USAGE = 'usage: npm run analytics -- report [--days N]   (N from 1 to 3650, default 7)';

/** The report as the terminal shows it. */
export function formatAnalyticsReport(report: AnalyticsReport): string {
  const lines = [`Analytics, last ${report.days} day(s)`, '', 'Events per day and name:'];
  if (report.perDay.length === 0) lines.push('  (no events)');
  for (const row of report.perDay) lines.push(`  ${row.day}  ${row.type.padEnd(8)} ${row.name.padEnd(32)} ${String(row.count).padStart(8)}`);
  const loads = report.appTypes.reduce((sum, row) => sum + row.count, 0);
  lines.push('', "App starts ('load') by app type:");
  if (loads === 0) lines.push('  (none)');
  for (const row of report.appTypes) lines.push(`  ${row.appType.padEnd(10)} ${String(row.count).padStart(8)}  ${((row.count * 100) / loads).toFixed(1).padStart(5)}%`);
  lines.push('', 'Top pages:');
  if (report.topPages.length === 0) lines.push('  (none)');
  for (const row of report.topPages) lines.push(`  ${row.path.padEnd(40)} ${String(row.count).padStart(8)}`);
  return `${lines.join('\n')}\n`;
}

/** The command line's days, or undefined when it is not a report command. */
export function parseReportArgs(args: string[]): { days: number } | undefined {
  let parsed;
  try {
    parsed = parseArgs({ args, allowPositionals: true, options: { days: { type: 'string', default: '7' } } });
  } catch {
    return undefined;
  }
  const days = Number(parsed.values.days);
  if (parsed.positionals.length !== 1 || parsed.positionals[0] !== 'report' || !Number.isInteger(days) || days < 1 || days > 3650) return undefined;
  return { days };
}

if (import.meta.main) {
  const command = parseReportArgs(process.argv.slice(2));
  if (!command) toolFail(USAGE);
  const { database } = await openTool();
  try {
    process.stdout.write(formatAnalyticsReport(await analyticsReport(database.pool, command.days)));
  } finally {
    await database.close();
  }
}
