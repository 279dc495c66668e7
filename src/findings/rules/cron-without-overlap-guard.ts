import type { ProjectReport, Rule } from '../types.js';

function routeFile(files: readonly string[], urlPath: string): string | undefined {
  const clean = urlPath.split('?')[0]?.replace(/\/$/, '') ?? '';
  return files.find((f) => f.replace(/\.[cm]?[jt]sx?$/, '').replace(/\/(route|index)$/, '').endsWith(clean.replace(/^\/api/, '/api')));
}

/**
 * Locks, leases and scheduler options that stop a second run from starting while one is still going, and the
 * scaffold's CronGuard (its task helpers and `runInterval`), as `apply` wires it.
 */
const OVERLAP_GUARD = /advisory_x?act_lock|pg_try_advisory|advisory_lock|redlock|\bSET\b[^\n]*\bNX\b|\bnx:\s*true|setnx|acquireLock|withLock|\.lock\(|noOverlap|preventOverlap|protect:\s*true|withoutOverlapping|isRunning|concurrency:\s*1\b|for\s+update\s+skip\s+locked|jobId:|\bnew CronGuard\(|\b(?:nodeCronTask|intervalTask|cronOnTick|nodeScheduleTask|vercelCronRoute)\(|\.runInterval\(/i;

/** A slow run overlapping the next one, or two instances each running the schedule, does the job twice. */
export const cronWithoutOverlapGuard: Rule = {
  id: 'cron-without-overlap-guard',
  severity: 'warning',
  title: 'Scheduled job without an overlap guard',
  description:
    'The job runs on a schedule with nothing stopping a second run while one is in progress: a run that takes longer ' +
    'than the interval, every instance of a scaled-out service firing the same schedule, or a platform cron delivered twice.',
  fix: 'Key each run by job name + scheduled slot and claim it first (a row with a unique constraint, or pg_try_advisory_lock / SET NX PX with a lease longer than the worst run); process rows with FOR UPDATE SKIP LOCKED.',
  docsAnchor: 'finding-cron-without-overlap-guard',
  checkProject(ctx) {
    const out: ProjectReport[] = [];
    for (const finding of ctx.inspection?.findings ?? []) {
      // A job whose callback only logs has nothing two overlapping runs could do twice.
      if (finding.kind !== 'cron' || finding.inert) continue;
      const text = ctx.sources.find((s) => s.rel === finding.file)?.text ?? ctx.auxiliary.get(finding.file) ?? '';
      if (OVERLAP_GUARD.test(text)) continue;
      // A platform cron (vercel.json) calls a route: the guard, if any, lives in that route's handler.
      const route = finding.scheduler === 'vercel' && finding.name ? routeFile(ctx.sources.map((s) => s.rel), finding.name) : undefined;
      if (route && OVERLAP_GUARD.test(ctx.sources.find((s) => s.rel === route)?.text ?? '')) continue;
      out.push({
        file: finding.file,
        line: finding.line,
        evidence: text.split('\n')[finding.line - 1]?.trim() ?? '',
        message: `${finding.scheduler} job${finding.name ? ` ${finding.name}` : ''}${finding.schedule ? ` (${finding.schedule})` : ''} has no overlap guard: two runs of the same slot can execute together.`,
      });
    }
    return out;
  },
};
