import { describe, expect, it } from 'vitest';
import { wireSource, type WireSourceOptions } from '../../src/apply/planApply.js';
import { cronExpressionMs, cronIntervalMs } from '../../src/apply/transforms/cron.js';
import type { WiringTarget } from '../../src/apply/types.js';

const options: WireSourceOptions = {
  framework: 'express',
  scaffoldDir: 'src/idempotency',
  imports: { aliases: [], defaultExtension: '.js' },
  scaffoldModules: new Set(['index', 'instance', 'cron/guard']),
};
const target = (file: string, line: number): WiringTarget => ({ action: 'nightlyReport', codeName: 'nightlyReport', trigger: 'cron', file, line });

function expectIdempotent(file: string, text: string, targets: WiringTarget[]): void {
  const again = wireSource(file, text, targets, { ...options, anyLine: true });
  expect(again.text).toBe(text);
  expect(again.edits).toEqual([]);
}

describe('cronIntervalMs', () => {
  it('gives the period of schedules with even gaps and nothing for the others', () => {
    expect(cronIntervalMs('*/5 * * * *')).toBe(300_000);
    expect(cronIntervalMs('* * * * *')).toBe(60_000);
    expect(cronIntervalMs('*/10 * * * * *')).toBe(10_000);
    expect(cronIntervalMs('15 * * * *')).toBe(3_600_000);
    expect(cronIntervalMs('0 */6 * * *')).toBe(21_600_000);
    expect(cronIntervalMs('0 3 * * *')).toBe(86_400_000);
    expect(cronIntervalMs('0 3 * * 1')).toBe(604_800_000);
    expect(cronIntervalMs('0 9 1 * *')).toBeUndefined();
    expect(cronIntervalMs('0 9,17 * * *')).toBeUndefined();
    expect(cronIntervalMs('*/7 * * * *')).toBeUndefined();
    expect(cronIntervalMs('0 */5 * * *')).toBeUndefined();
    expect(cronIntervalMs('@daily')).toBeUndefined();
  });
});

describe('scheduled jobs', () => {
  const file = 'src/jobs.ts';

  it('node-cron: the job runs through nodeCronTask with the schedule\u2019s period, with one guard per file', () => {
    const source = `import cron from 'node-cron';
import { report } from './report.js';

cron.schedule('*/5 * * * *', () => {
  report();
});
`;
    const out = wireSource(file, source, [target(file, 4)], options);
    expect(out.stale).toEqual([]);
    expect(out.text).toContain("import { CronGuard, nodeCronTask } from './idempotency/cron/guard.js';");
    expect(out.text).toContain('const cronGuard = new CronGuard({ core: idempotency.core });');
    expect(out.text).toContain(`cron.schedule('*/5 * * * *', nodeCronTask(cronGuard, ACTIONS.nightlyReport, 'nightlyReport', 300_000, async () => {
  report();
}));`);
    expectIdempotent(file, out.text, [target(file, 4)]);
  });

  it('node-schedule: the fire date is the slot, so any rule works; a named function is awaited', () => {
    const source = "import schedule from 'node-schedule';\nimport { report } from './report.js';\n\nschedule.scheduleJob('0 9 1 * *', report);\n";
    const out = wireSource(file, source, [target(file, 4)], options);
    expect(out.text).toContain("schedule.scheduleJob('0 9 1 * *', nodeScheduleTask(cronGuard, ACTIONS.nightlyReport, 'nightlyReport', async () => {\n  await report();\n}));");
    expectIdempotent(file, out.text, [target(file, 4)]);
  });

  it('cron: new CronJob and CronJob.from get cronOnTick', () => {
    const source = "import { CronJob } from 'cron';\n\nnew CronJob('0 * * * *', async () => {\n  await report();\n}, null, true);\n";
    const out = wireSource(file, source, [target(file, 3)], options);
    expect(out.text).toContain("new CronJob('0 * * * *', cronOnTick(cronGuard, ACTIONS.nightlyReport, 'nightlyReport', 3_600_000, async () => {");
    expectIdempotent(file, out.text, [target(file, 3)]);
    const from = "import { CronJob } from 'cron';\n\nCronJob.from({ cronTime: '*/10 * * * *', onTick: tick, start: true });\n";
    const wired = wireSource(file, from, [target(file, 3)], options);
    expect(wired.text).toContain("onTick: cronOnTick(cronGuard, ACTIONS.nightlyReport, 'nightlyReport', 600_000, async () => {\n  await tick();\n})");
  });

  it("cron: a CronExpression member is read by its name; a job scheduled per call from the call's values is left to the user", () => {
    const named = "import { CronJob } from 'cron';\nimport { CronExpression } from '@nestjs/schedule';\n\nexport function start() {\n  new CronJob(CronExpression.EVERY_5_MINUTES, async () => {\n    await report();\n  }).start();\n}\n";
    const out = wireSource(file, named, [target(file, 5)], options);
    expect(out.text).toContain("new CronJob(CronExpression.EVERY_5_MINUTES, cronOnTick(cronGuard, ACTIONS.nightlyReport, 'nightlyReport', 300_000, async () => {");
    expectIdempotent(file, out.text, [target(file, 5)]);
    // Zukashi/e-commerce-food: every newsletter sign-up schedules a job of its own for that address.
    const perCall = [
      "import { CronJob } from 'cron';",
      "import { CronExpression } from '@nestjs/schedule';",
      '',
      'export class EmailScheduling {',
      '  scheduleEmail(email: string) {',
      '    const job = new CronJob(CronExpression.EVERY_5_SECONDS, async () => {',
      "      await this.mail.send({ to: email, subject: 'news' });",
      '    });',
      '    job.start();',
      '  }',
      '}',
      '',
    ].join('\n');
    const refused = wireSource(file, perCall, [target(file, 6)], options);
    expect(refused.text).toBe(perCall);
    expect(refused.manual[0]?.reason).toContain("its work uses that function's `email`");
    // A bootstrap function's own locals (a connection made once) do not make the job per call.
    const bootstrap = named.replace('export function start() {\n', 'export async function start() {\n  const db = await connect();\n').replace('await report();', 'await db.report();');
    expect(wireSource(file, bootstrap, [target(file, 6)], options).text).toContain('cronOnTick(cronGuard');
    // Nor do the parameters of a function that sets jobs up once (its dependencies), or of the module's own export.
    const setup = named.replace('export function start() {', 'export function startJobs(reports: { run(): Promise<void> }) {').replace('await report();', 'await reports.run();');
    expect(wireSource(file, setup, [target(file, 5)], options).text).toContain('cronOnTick(cronGuard');
    const exported = "const { CronJob } = require('cron');\n\nmodule.exports = (app) => {\n  new CronJob('*/5 * * * *', async () => {\n    await app.report();\n  }).start();\n};\n";
    expect(wireSource('src/jobs.js', exported, [target('src/jobs.js', 4)], options).text).toContain('cronOnTick(cronGuard');
  });

  it("setInterval (orders-bullmq's pollers): intervalTask with the timer's own period, a literal or a const read again", () => {
    const named = "import { pollOutbox } from './outbox.js';\n\nconst POLL_INTERVAL_MS = Number(process.env.POLL_MS) || 5000;\nsetInterval(pollOutbox, POLL_INTERVAL_MS);\n";
    const out = wireSource(file, named, [target(file, 4)], options);
    expect(out.text).toContain("import { CronGuard, intervalTask } from './idempotency/cron/guard.js';");
    expect(out.text).toContain("setInterval(intervalTask(cronGuard, ACTIONS.nightlyReport, 'nightlyReport', POLL_INTERVAL_MS, async () => {\n  await pollOutbox();\n}), POLL_INTERVAL_MS);");
    expect(out.manual.map((m) => m.reason)).toEqual([expect.stringContaining('printed by intervalTask')]);
    expectIdempotent(file, out.text, [target(file, 4)]);
    const inline = 'let timer;\ntimer = setInterval(async () => {\n  await generate();\n}, 5 * 60 * 1000);\n';
    expect(wireSource(file, inline, [target(file, 2)], options).text).toContain("timer = setInterval(intervalTask(cronGuard, ACTIONS.nightlyReport, 'nightlyReport', 300_000, async () => {\n  await generate();\n}), 5 * 60 * 1000);");
    // A period computed where it is passed would be computed twice; arguments for the callback would be dropped.
    expect(wireSource(file, 'setInterval(tick, ms());\n', [target(file, 1)], options).manual[0]?.reason).toContain('is computed where it is passed');
    expect(wireSource(file, 'setInterval(tick, 1000, queue);\n', [target(file, 1)], options).manual[0]?.reason).toContain('passes arguments to its callback');
  });

  it('leaves uneven schedules, a monthly NestJS @Cron method and jobs taking parameters to the user, with the reason', () => {
    const uneven = "import cron from 'node-cron';\n\ncron.schedule('0 9 1 * *', async () => run());\n";
    const nest = "import { Cron, CronExpression } from '@nestjs/schedule';\n\nexport class Jobs {\n  @Cron(CronExpression.EVERY_1ST_DAY_OF_MONTH_AT_MIDNIGHT)\n  async monthly() {}\n}\n";
    const params = "import cron from 'node-cron';\n\ncron.schedule('* * * * *', async (ctx) => run(ctx));\n";
    for (const [text, line, why] of [[uneven, 3, 'no fixed period'], [nest, 4, 'has no fixed period apply can compute'], [params, 3, 'takes parameters']] as const) {
      const out = wireSource(file, text, [target(file, line)], options);
      expect(out.text).toBe(text);
      expect(out.manual[0]?.reason).toContain(why);
    }
  });
});

describe('NestJS @nestjs/schedule methods', () => {
  const file = 'src/cronjobs/tokens.cronjob.ts';
  // hoangnh228/nestjs-super@8e6b270: a daily clean-up that starts its delete and leaves it running.
  const source = `import { Injectable } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';

@Injectable()
export class RemoveRefreshTokenCronjob {
  constructor(private readonly prisma: PrismaService) {}

  @Cron(CronExpression.EVERY_DAY_AT_1AM)
  handleCron() {
    this.prisma.refreshToken.deleteMany({ where: { expiresAt: { lt: new Date() } } }).catch(() => undefined);
  }
}
declare class PrismaService { refreshToken: { deleteMany(args: object): Promise<unknown> } }
`;

  it('reads the period of CronExpression members by name', () => {
    expect(cronExpressionMs('EVERY_5_MINUTES')).toBe(300_000);
    expect(cronExpressionMs('EVERY_HOUR')).toBe(3_600_000);
    expect(cronExpressionMs('EVERY_30_SECONDS')).toBe(30_000);
    expect(cronExpressionMs('EVERY_DAY_AT_1AM')).toBe(86_400_000);
    expect(cronExpressionMs('MONDAY_TO_FRIDAY_AT_9AM')).toBe(86_400_000);
    expect(cronExpressionMs('EVERY_WEEK')).toBe(604_800_000);
    expect(cronExpressionMs('EVERY_7_MINUTES')).toBeUndefined();
    expect(cronExpressionMs('EVERY_QUARTER')).toBeUndefined();
  });

  it('runs the method body through the file\u2019s CronGuard with the decorator\u2019s period, and says the body does not await its work', () => {
    const out = wireSource(file, source, [target(file, 8)], options);
    expect(out.stale).toEqual([]);
    expect(out.text).toContain("import { CronGuard } from '../idempotency/cron/guard.js';\n");
    expect(out.text).toContain('const cronGuard = new CronGuard({ core: idempotency.core });');
    expect(out.text).toContain(`  @Cron(CronExpression.EVERY_DAY_AT_1AM)
  async handleCron() {
    await cronGuard.runInterval(ACTIONS.nightlyReport, 'nightlyReport', 86_400_000, async () => {
      this.prisma.refreshToken.deleteMany({ where: { expiresAt: { lt: new Date() } } }).catch(() => undefined);
    });
  }`);
    expect(out.edits[0]?.summary).toContain('runs the @Cron() method handleCron (line 8) through the CronGuard');
    expect(out.manual.map((m) => m.reason).join('\n')).toContain('starts a promise it does not await (line 10)');
    expectIdempotent(file, out.text, [target(file, 8)]);
  });

  it('takes @Interval with its period, and a cron string; makes a void method return a promise', () => {
    const interval = source.replace('@Cron(CronExpression.EVERY_DAY_AT_1AM)', "@Interval('tokens', 60_000)").replace('Cron, CronExpression', 'Interval').replace('handleCron() {', 'handleCron(): void {');
    const out = wireSource(file, interval, [target(file, 8)], options);
    expect(out.text).toContain('async handleCron(): Promise<void> {\n    await cronGuard.runInterval(ACTIONS.nightlyReport, \'nightlyReport\', 60_000, async () => {');
    const literal = source.replace('CronExpression.EVERY_DAY_AT_1AM', "'0 */15 * * * *'");
    expect(wireSource(file, literal, [target(file, 8)], options).text).toContain("'nightlyReport', 900_000, async () => {");
  });
});
